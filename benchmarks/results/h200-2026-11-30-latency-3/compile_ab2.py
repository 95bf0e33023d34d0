"""Why a compile inside a request is slower than a bare one: bare compiles of fresh chains after
nothing, after an eager request, after a bare profiler session; the tool's compiled request alone
and after an eager request. One process, rounds interleaved."""
import os, sys, time, random, json
os.environ.setdefault("TEARDOWN_CUPTI", "1")
sys.path.insert(0, os.getcwd())
import torch
import probes.sweep as sweep
from probes.protocol import ProfileRequest
from probes.worker import _initialise_device
_initialise_device()
import gc; gc.freeze()
dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"; n = 10**6
C = random.uniform(1, 2); k = [0]
ops = ["tanh", "sin", "cos", "exp", "neg", "sqrt", "abs", "sigmoid", "erf", "log1p", "expm1", "exp2", "rsqrt", "sinh", "cosh", "atan", "asinh", "trunc", "frac", "ceil", "floor", "round"]
def fresh():
    k[0] += 1
    return f"((a + b) * {C + k[0]:.5f}).{ops[k[0] % len(ops)]}()"
a = torch.randn(n, device=dev); b = torch.randn(n, device=dev)
def sync(): torch.cuda.synchronize() if dev.startswith("cuda") else None
def bare():
    ns = {"torch": torch}
    exec(f"def f(a, b):\n    return {fresh()}", ns)
    t = time.perf_counter(); torch.compile(ns["f"], dynamic=False)(a, b); sync()
    return round(time.perf_counter() - t, 3)
def request(modes, chain=None):
    ev = []
    t = time.perf_counter()
    sweep.run_profile(ProfileRequest(id="x", chain=chain or fresh(), sizes=[n], modes=modes, device=dev), ev.append)
    total = round(time.perf_counter() - t, 3)
    comp = [e.measurement.compile.compile_time_s for e in ev if type(e).__name__ == "MeasurementResult" and e.measurement.compile]
    return total, (round(comp[0], 3) if comp else None)
def profiler_session():
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.startswith("cuda") else [])
    with torch.profiler.profile(activities=acts):
        (a + b).relu(); sync()
request(["eager", "compiled"], "(a + b).relu()")  # warm: peak bandwidth, the first compile
bare(); bare()
for r in range(4):
    out = {"round": r}
    out["bare"] = bare()
    request(["eager"]); out["bare_after_eager_request"] = bare()
    profiler_session(); out["bare_after_profiler"] = bare()
    out["tool_request_alone(total,compile)"] = request(["compiled"])
    c = fresh(); request(["eager"], c); out["tool_after_eager(total,compile)"] = request(["compiled"], c)
    out["bare_end"] = bare()
    print(json.dumps(out), flush=True)
