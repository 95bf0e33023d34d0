"""Where a worker request's time goes: run_profile in-process with timers around its phases."""
import os, sys, time, json, collections
os.environ.setdefault("TEARDOWN_CUPTI", "1")
sys.path.insert(0, os.getcwd())
import torch
import probes.sweep as sweep, probes.measure as measure, probes.timing as timing, probes.compiling as compiling
from probes.protocol import ProfileRequest

acc = collections.defaultdict(float)
def wrap(mod, name, label=None):
    fn = getattr(mod, name)
    label = label or f"{mod.__name__.split('.')[-1]}.{name}"
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            acc[label] += time.perf_counter() - t
    setattr(mod, name, w)
for mod, name in [(sweep, "check_memory"), (sweep, "make_inputs"), (sweep, "measure"), (sweep, "_release"), (sweep, "L2Flusher"),
                  (measure, "prepare"), (measure, "choose_reps"), (measure, "profile_run"), (measure, "measure_wall_time"),
                  (measure, "_flops"), (measure, "eager_bytes"), (measure, "compiled_bytes"), (measure, "op_nodes"),
                  (timing, "warm_up"), (timing, "_settled_call_time"), (timing, "read_profile"), (compiling, "_compile")]:
    wrap(mod, name)

dev = sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu")
n = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10**6
import random
C = round(random.uniform(1, 2), 6)
ops = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
from probes.worker import _initialise_device
_initialise_device()
import gc; gc.freeze()
def request(chain, modes):
    acc.clear()
    events = []
    t = time.perf_counter()
    sweep.run_profile(ProfileRequest(id="x", chain=chain, sizes=[n], modes=modes, device=dev), events.append)
    total = time.perf_counter() - t
    m = [e.measurement for e in events if hasattr(e, "measurement")]
    fails = [e for e in events if type(e).__name__ == "RequestFailed"]
    info = {"chain": chain, "modes": modes, "total_ms": round(total * 1e3, 1), **{k: round(v * 1e3, 1) for k, v in sorted(acc.items(), key=lambda kv: -kv[1])}}
    if m:
        info["wall_us"] = round(m[0].wall_time_us, 2); info["reps"] = m[0].reps
        if m[0].compile: info["compile_s"] = round(m[0].compile.compile_time_s, 3)
    if fails: info["fail"] = str(fails[0])[:200]
    print(json.dumps(info), flush=True)
request("(a + b).relu()", ["eager"])  # first: peak bandwidth etc.
request("(a + b).relu()", ["compiled"])
for op in ops[:5]:
    request(f"((a + b) * {C}).{op}()", ["eager"])
for op in ops[:5]:
    request(f"((a + b) * {C}).{op}()", ["compiled"])
for op in ops[:3]:
    request(f"((a + b) * {C}).{op}()", ["eager"])  # again: same code paths, warm
# a bare torch.compile + first call of new chains in this warm process: default config, then the tool's
import torch._inductor.config as icfg
a = torch.randn(n, device=dev); b = torch.randn(n, device=dev)
def bare(op, scoped):
    ns = {"torch": torch}
    exec(f"def f(a, b):\n    return ((a + b) * {C}).{op}()", ns)
    t = time.perf_counter()
    if scoped:
        with icfg.patch({'benchmark_kernel': True}):
            torch.compile(ns["f"], dynamic=False)(a, b)
    else:
        torch.compile(ns["f"], dynamic=False)(a, b)
    if dev == "cuda": torch.cuda.synchronize()
    print(json.dumps({"bare": op, "scoped": scoped, "ms": round((time.perf_counter() - t) * 1e3, 1)}), flush=True)
for op in ops[5:8]:
    bare(op, False)
for op in ops[8:10]:
    bare(op, True)
# profiler session cost alone, repeated
from torch.profiler import profile, ProfilerActivity
acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
for i in range(4):
    t = time.perf_counter()
    with profile(activities=acts) as p:
        (a + b).relu()
        if dev == "cuda": torch.cuda.synchronize()
    t1 = time.perf_counter()
    p.events()
    print(json.dumps({"profiler_session_ms": round((t1 - t) * 1e3, 1), "events_ms": round((time.perf_counter() - t1) * 1e3, 1)}), flush=True)
