"""Does the tool's capture of torch's warnings and log records slow a compile? Bare torch.compile +
first call of new chains, in turns in one warm process: as is, inside probes.diagnostics.capturing(),
and inside warnings.catch_warnings(record=True) with simplefilter("always") alone.

    python lab/s23/capture_ab.py [cuda|cpu] [N]
"""
import os, statistics, sys, tempfile, time, warnings
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-cab-")
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-cab-tr-")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
sys.path.insert(0, os.getcwd())
import contextlib
import torch
from probes.diagnostics import capturing
DEV = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal",
       "log", "sinh", "cosh", "atan", "log2", "exp2", "floor", "ceil", "trunc", "rsqrt", "asin", "acos"]
TEMPLATES = ["(a + b).{op}()", "(a * b).{op}()", "(a - b).{op}()"]
a = torch.randn(N, device=DEV); b = torch.randn(N, device=DEV)
@contextlib.contextmanager
def always():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        yield
VARIANTS = {"bare": contextlib.nullcontext, "capturing": capturing, "warnings always": always}
def sync():
    if DEV == "cuda": torch.cuda.synchronize()
def compile_ms(text, ctx):
    fn = eval(f"lambda a, b: {text}")
    sync(); t = time.perf_counter()
    with ctx():
        torch.compile(fn)(a, b); sync()
    return (time.perf_counter() - t) * 1000
compile_ms("(a + b).relu()", capturing); compile_ms("(a * b).relu()", contextlib.nullcontext)
names = list(VARIANTS); got = {v: [] for v in names}; by_op = []
for i, op in enumerate(OPS):
    row = {}
    for j in range(3):
        v = names[(i + j) % 3]
        row[v] = compile_ms(TEMPLATES[j].format(op=op), VARIANTS[v])
        got[v].append(row[v])
    by_op.append(row)
    print(op, "  ".join(f"{v} {row[v]:7.1f}" for v in names), flush=True)
print(f"{DEV} {torch.__version__}: " + "; ".join(f"{v} median {statistics.median(got[v]):.1f} ms" for v in names))
for v in names[1:]:
    print(f"  {v} / bare, op by op: median {statistics.median(r[v] / r['bare'] for r in by_op):.3f}x")
