"""In one warm process, in turns: an eager request's early rows at 1e6 (new chain each time) with
the worker's empty_cache after each request (as now) and without it; plus where the time goes
(flusher + inputs allocation, prepare, profile run) and the profiler's parse by reps."""
import os, sys, time, statistics as st
sys.path.insert(0, os.getcwd())
import torch
from probes import memory_guard, sweep
from probes.protocol import ProfileRequest, MeasurementResult
from probes.timing import L2Flusher, profile_run
from probes.inputs import make_inputs, input_specs
from probes.expr import parse_chain

dev = torch.device("cuda")
real_empty = torch.cuda.empty_cache
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]

def request_ms(text, keep):
    torch.cuda.empty_cache = (lambda: None) if keep else real_empty
    got = {}
    t0 = time.perf_counter()
    def emit(e):
        if isinstance(e, MeasurementResult) and "early" not in got:
            got["early"] = time.perf_counter() - t0
    sweep.run_profile(ProfileRequest(id=text, chain=text, modes=["eager"], early_rows=True), emit)
    got["done"] = time.perf_counter() - t0
    torch.cuda.empty_cache = real_empty
    return got

for i in range(3):
    request_ms(f"(a + b).relu() * {i}", False)
res = {False: [], True: []}
for r in range(8):
    for op in OPS:
        for keep in ((False, True) if r % 2 else (True, False)):
            res[keep].append(request_ms(f"(a + b).{op}() * {r * 100 + (7 if keep else 3)}", keep))
for keep, rows in res.items():
    print(f"empty_cache {'kept out' if keep else 'as now   '}: early rows median {st.median(g['early'] for g in rows)*1e3:.1f} ms "
          f"(p25-p75 {st.quantiles([g['early'] for g in rows], n=4)[0]*1e3:.1f}-{st.quantiles([g['early'] for g in rows], n=4)[2]*1e3:.1f}), "
          f"whole {st.median(g['done'] for g in rows)*1e3:.1f} ms, n={len(rows)}")

# allocation alone
def alloc_ms(empty):
    if empty: real_empty()
    torch.cuda.synchronize(); t = time.perf_counter()
    f = L2Flusher(dev); c = parse_chain("(a + b).relu()"); x = make_inputs(input_specs(c, 10**6, "fp32"), dev, 10**6)
    torch.cuda.synchronize(); return (time.perf_counter() - t) * 1e3
for empty in (True, False, True, False):
    print("flusher + inputs", "after empty_cache" if empty else "cached          ", f"{st.median(alloc_ms(empty) for _ in range(10)):.2f} ms")
t = []
for _ in range(10):
    x = torch.empty(1); real_empty(); torch.cuda.synchronize(); b = time.perf_counter(); real_empty(); t.append(time.perf_counter() - b)
print(f"empty_cache with nothing to free {st.median(t)*1e3:.2f} ms")

# the profiler's cost by reps (compiled sigmoid)
a = torch.randn(10**6, device=dev); b2 = torch.randn(10**6, device=dev)
fn = torch.compile(lambda a, b: (a + b).sigmoid())
fn(a, b2); torch.cuda.synchronize()
fl = L2Flusher(dev)
for reps in (10, 5, 10, 5):
    ts = []
    for _ in range(8):
        torch.randn(1, device=dev)  # a launch between sessions
        torch.cuda.synchronize(); b = time.perf_counter(); profile_run(lambda: fn(a, b2), dev, reps, fl); ts.append((time.perf_counter() - b) * 1e3)
    print(f"profile_run compiled, {reps} reps: median {st.median(ts):.1f} ms")
