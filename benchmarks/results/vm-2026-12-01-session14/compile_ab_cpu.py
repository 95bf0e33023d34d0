"""In one process, in turns: the engine's compiled-only request, the engine's eager-then-compiled
request, and a bare torch.compile + first call; each a chain never compiled. CPU, N=1e4."""
import os, sys, tempfile, time, statistics, random
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp())
sys.path.insert(0, os.getcwd())
import torch
from probes.protocol import MeasurementResult, ProfileRequest
from probes.sweep import run_profile

OPS = ["sigmoid", "tanh", "erf", "exp", "sin", "cos", "rsqrt", "log1p", "expm1", "atan", "sinh", "cosh"]
n = 10_000
a, b = torch.randn(n), torch.randn(n)
res = {"compiled only": [], "eager then compiled": [], "bare": []}
def engine(chain, modes):
    events = []
    run_profile(ProfileRequest(id="x", chain=chain, sizes=[n], modes=modes, device="cpu"), events.append)
    m = [e.measurement for e in events if isinstance(e, MeasurementResult) and e.measurement.mode == "compiled"]
    return m[0].compile.compile_time_s
def bare(op, k):
    f = torch.compile(eval(f"lambda x, y: (x * y).{op}() * {k}"))
    t = time.perf_counter(); f(a, b); return time.perf_counter() - t
engine("(a - b).relu() * 0.5", ["eager", "compiled"]); bare("relu", 0.5)  # warm both paths
for i, op in enumerate(OPS):
    k = round(random.uniform(1, 2), 4)
    order = [0, 1, 2][i % 3:] + [0, 1, 2][:i % 3]
    for v in order:
        if v == 0: res["compiled only"].append(engine(f"(a + b).{op}() * {k}", ["compiled"]))
        elif v == 1: res["eager then compiled"].append(engine(f"(a - b).{op}() * {k}", ["eager", "compiled"]))
        else: res["bare"].append(bare(op, k))
    print(op, {key: round(1000 * v[-1]) for key, v in res.items()}, flush=True)
for key, v in res.items():
    print(f"{key:22s} median {1000*statistics.median(v):.0f} ms  (p25-p75 {1000*statistics.quantiles(v)[0]:.0f}-{1000*statistics.quantiles(v)[2]:.0f})")
sys.stdout.flush(); os._exit(0)
