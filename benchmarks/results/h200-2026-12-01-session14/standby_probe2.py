"""The tool's request pattern, with the profiler prepared at the start of each session (now) or
ahead, while the worker idles (standby): what the rows wait for, kernels captured, wall blocks."""
import os, time, statistics, sys
os.environ.setdefault("TEARDOWN_CUPTI", "1")
import torch
from torch.autograd.profiler import profile, record_function

dev = torch.device("cuda")
a = torch.randn(1_000_000, device=dev); b = torch.randn(1_000_000, device=dev)
f = lambda: (a + b).relu()
for _ in range(50): f()
torch.cuda.synchronize()

def n_kernels(p):
    return sum(1 for e in p.function_events if e.device_type == torch.autograd.DeviceType.CUDA and e.name != "rep")

def warm():
    t = time.perf_counter()
    while time.perf_counter() - t < 0.025: f()
    torch.cuda.synchronize()

def wall_blocks(n=15, calls=50):
    out = []
    for _ in range(n):
        torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(calls): f()
        torch.cuda.synchronize(); out.append((time.perf_counter() - t) / calls * 1e6)
    return out

def request(p, standby):
    """One request: warm-up, the profiled reps (the rows), the wall-time blocks."""
    t0 = time.perf_counter()
    if not standby:
        p = profile(use_device="cuda", use_kineto=True)
    warm()
    t1 = time.perf_counter()
    if not standby:
        p._prepare_trace()
    p._start_trace()
    for _ in range(10):
        with record_function("rep"): f()
    p.__exit__(None, None, None)
    k = n_kernels(p)
    t2 = time.perf_counter()
    w = wall_blocks()
    t3 = time.perf_counter()
    s = p._stats
    return dict(rows_ms=1000 * (t2 - t1), prepare=s.profiler_prepare_call_duration_us / 1000, kernels=k,
                wall_first=w[0], wall_median=statistics.median(w), wall_ms=1000 * (t3 - t2))

for variant in ("now", "standby", "now", "standby"):
    rows = []
    nxt = None
    if variant == "standby":
        nxt = profile(use_device="cuda", use_kineto=True); nxt._prepare_trace()
    for i in range(6):
        time.sleep(0.3)
        r = request(nxt, variant == "standby")
        if variant == "standby":
            t = time.perf_counter(); nxt = profile(use_device="cuda", use_kineto=True); nxt._prepare_trace()
            r["standby_prepare_ms"] = 1000 * (time.perf_counter() - t)
        rows.append(r)
    if nxt is not None:
        nxt._start_trace(); nxt.__exit__(None, None, None)
    for r in rows:
        print(variant, " ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()), flush=True)
    print(variant, "median rows_ms", statistics.median(r["rows_ms"] for r in rows), "wall median", statistics.median(r["wall_median"] for r in rows), flush=True)
sys.stdout.flush()
os._exit(0)  # a process that profiled can hang ~50 s in the interpreter's exit on that box
