"""Where profile_run's time goes for a compiled chain in a warm process: the profiler's start,
the reps, its stop, building function_events, read_profile. Then wall reps at TARGET_TIMING_S."""
import os, sys, time, statistics, tempfile
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-pp-"))
sys.path.insert(0, os.getcwd())
import torch
from torch.autograd.profiler import profile, record_function
from probes import timing as T, launches as L
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
N = 10**6 if dev.type == "cuda" else 10**4
a = torch.randn(N, device=dev); b = torch.randn(N, device=dev)
fn = torch.compile(lambda a, b: (a + b).relu())
call = lambda: fn(a, b)
call(); T.sync(dev)
flush = T.L2Flusher(dev)
plan = T.choose_reps(call, dev, None)
print("plan", plan)
ph = {k: [] for k in ("enter", "reps", "exit", "function_events", "read_profile", "profile_run", "wall")}
for _ in range(15):
    t0 = time.perf_counter()
    p = profile(use_device="cuda" if dev.type == "cuda" else None, use_kineto=True)
    p.__enter__()
    t1 = time.perf_counter()
    with T.gc_paused():
        for _ in range(plan.profiled_reps):
            flush()
            with record_function(L.REP_LABEL):
                call()
        T.sync(dev)
    t2 = time.perf_counter()
    p.__exit__(None, None, None)
    t3 = time.perf_counter()
    ev = p.function_events
    t4 = time.perf_counter()
    L.read_profile(ev, dev)
    t5 = time.perf_counter()
    for k, v in zip(ph, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
        ph[k].append(v * 1e3)
    t6 = time.perf_counter(); T.profile_run(call, dev, plan.profiled_reps, flush); ph["profile_run"].append((time.perf_counter() - t6) * 1e3)
    t7 = time.perf_counter(); T.measure_wall_time(call, dev, plan, flush); ph["wall"].append((time.perf_counter() - t7) * 1e3)
    print(f"events {len(ev)}")  if _ == 0 else None
for k, v in ph.items():
    print(f"{k:16} median {statistics.median(v):6.1f} ms  min {min(v):6.1f}  max {max(v):6.1f}")
