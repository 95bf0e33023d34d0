"""The tool's compile of a new chain (probes.compiling._compile, as the worker calls it) against a bare
torch.compile + first call, in turns in one warm process, every chain new to Inductor (caches empty).

    python lab/compile_paths.py [--device cuda] [--ops 20] [--profile]
"""
import argparse, cProfile, io, os, pstats, statistics, sys, tempfile, time
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-cp-")
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-cp-triton-")
sys.path.insert(0, os.getcwd())
import torch
from probes.compiling import _compile
from probes.diagnostics import Diagnostics, capturing
from probes.expr import parse_chain

OPS = ("tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1",
       "log", "reciprocal", "sinh", "cosh", "atan", "log2", "exp2", "floor", "ceil", "trunc")
TEMPLATES = ("(a + b).{op}()", "(a * b).{op}()", "(a - b).{op}()")

def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)

def bare(text, a, b, device):
    fn = eval(f"lambda a, b: {text}")
    sync(device)
    t = time.perf_counter()
    torch.compile(fn)(a, b)
    sync(device)
    return time.perf_counter() - t, None

def tool(text, a, b, device, settings=True):
    import probes.compiling as compiling
    original = compiling.compile_settings
    if not settings:
        compiling.compile_settings = lambda mode, device: {}
    try:
        return _tool(text, a, b, device)
    finally:
        compiling.compile_settings = original

def _tool(text, a, b, device):
    chain = parse_chain(text)
    sync(device)
    t = time.perf_counter()
    diagnostics = Diagnostics()
    with capturing(diagnostics):
        compiled = _compile(chain, "compiled", [a, b], a.numel(), device, diagnostics, None)
    return time.perf_counter() - t, compiled.info.compile_time_s

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--ops", type=int, default=20)
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    device = torch.device(args.device)
    a, b = torch.randn(args.n, device=device), torch.randn(args.n, device=device)
    variants = {"bare": bare, "tool": tool, "tool, a user's settings": lambda *x: tool(*x, settings=False)}
    names = list(variants)
    bare(".".join(["(a / b)", "erf()"]), a, b, device); tool("(a / b).erfc()", a, b, device)  # warm both paths
    got = {v: [] for v in names}
    inner = []
    for i, op in enumerate(OPS[: args.ops]):
        for j in range(3):
            v = names[(i + j) % 3]
            text = TEMPLATES[j].format(op=op)
            s, own = variants[v](text, a, b, device)
            got[v].append(s)
            if own is not None:
                inner.append((v, s, own))
            print(f"{v:24} {text:22} {1000 * s:7.1f} ms" + (f"  (its compile + first call {1000 * own:.1f} ms)" if own else ""), flush=True)
    for v in names:
        print(f"{v:24} median {1000 * statistics.median(got[v]):7.1f} ms  p25-p75 "
              f"{1000 * statistics.quantiles(got[v], n=4)[0]:.1f}-{1000 * statistics.quantiles(got[v], n=4)[2]:.1f}  n={len(got[v])}")
    print("tool around its compile (whole _compile - its timed compile + first call): median "
          f"{1000 * statistics.median([s - own for v, s, own in inner]):.1f} ms")
    if args.profile:
        for v, text in (("bare", "(a / b).sinh().cos()"), ("tool", "(a / b).cosh().sin()")):
            prof = cProfile.Profile()
            prof.enable(); variants[v](text, a, b, device); prof.disable()
            out = io.StringIO(); pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(45)
            print(f"==== {v} {text}\n" + "\n".join(l[:170] for l in out.getvalue().splitlines() if l.strip()))

main()
