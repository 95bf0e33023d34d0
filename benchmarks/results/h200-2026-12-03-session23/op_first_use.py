"""Is a new chain's compile slower when its op is new to the process? For each op, a warm process
compiles (a + b).op() (op's first use) then (a * b).op() (its second use, a new graph and kernel
all the same): compile + first call ms of each, with torch._dynamo.utils.compile_times's phases.

    python lab/s23/op_first_use.py [cuda|cpu] [N]
"""
import os, statistics, sys, tempfile, time
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-ofu-")
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-ofu-tr-")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch
DEV = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal"]
a = torch.randn(N, device=DEV); b = torch.randn(N, device=DEV)
def sync():
    if DEV == "cuda": torch.cuda.synchronize()
def compile_ms(text):
    fn = eval(f"lambda a, b: {text}")
    sync(); t = time.perf_counter(); torch.compile(fn)(a, b); sync()
    return (time.perf_counter() - t) * 1000
compile_ms("(a + b).relu()"); compile_ms("(a * b).relu()")
first, second, third = [], [], []
for op in OPS:
    f = compile_ms(f"(a + b).{op}()"); s = compile_ms(f"(a * b).{op}()"); t = compile_ms(f"(a - b).{op}()")
    first.append(f); second.append(s); third.append(t)
    print(f"{op:11} first use {f:7.1f}  second {s:7.1f}  third {t:7.1f} ms", flush=True)
print(f"{DEV} {torch.__version__}: medians first {statistics.median(first):.1f} second {statistics.median(second):.1f} "
      f"third {statistics.median(third):.1f} ms; second/first by op {statistics.median(s / f for f, s in zip(first, second)):.3f}x")
print(torch._dynamo.utils.compile_times(repr="str", aggregate=True))
