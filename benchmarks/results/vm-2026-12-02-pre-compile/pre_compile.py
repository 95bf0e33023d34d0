"""Time from run_profile's start to the compile's start, for new chains (compiled mode only), CPU,
with a cProfile of that stretch. argv[1]: the tree whose probes/ to use (default: this one)."""
import cProfile, os, pstats, statistics, sys, tempfile, time
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else str(__import__("pathlib").Path(__file__).resolve().parents[3]))
import torch
import probes.compiling as compiling
from probes.protocol import ProfileRequest
from probes.sweep import run_profile
prof = cProfile.Profile()
marks = {}
orig = compiling._compile
def _compile(*a, **k):
    prof.disable(); marks["compile"] = time.perf_counter()
    return orig(*a, **k)
compiling._compile = _compile
import probes.measure  # noqa
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
run_profile(ProfileRequest("w", "(a / b).erf()", sizes=[10_000], modes=["compiled"], device="cpu"), lambda e: None)
gaps = []
for op in OPS:
    t0 = time.perf_counter(); prof.enable()
    run_profile(ProfileRequest("x", f"(a + b).{op}()", sizes=[10_000], modes=["compiled"], device="cpu"), lambda e: None)
    gaps.append(1000 * (marks["compile"] - t0))
print("run_profile start -> compile start: median %.2f ms" % statistics.median(gaps), [round(g, 2) for g in gaps])
pstats.Stats(prof).sort_stats("cumulative").print_stats(12)
