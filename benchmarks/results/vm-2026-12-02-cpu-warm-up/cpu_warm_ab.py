"""Compiled CPU rows right after their compile: with the 25 ms warm-up and without (one call), in turns,
on pairs of chains that differ only by a constant. Prints per op the device time and wall time per call."""
import statistics, sys, time
import torch
from probes import timing
from probes.protocol import MeasurementResult, ProfileRequest
from probes.sweep import run_profile
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10_000
OPS = ["tanh", "sigmoid", "exp", "sin", "neg", "sqrt", "abs", "log1p"]
own = timing.needs_warm_up
res = {"warm": {}, "none": {}}
k = 0
for r in range(ROUNDS):
    for op in OPS:
        order = ["warm", "none"] if (r + OPS.index(op)) % 2 == 0 else ["none", "warm"]
        for arm in order:
            k += 1
            timing.needs_warm_up = own if arm == "warm" else (lambda device, now: False)
            events = []
            t = time.perf_counter()
            run_profile(ProfileRequest(f"r{k}", f"(a * {k + 1.5} + b).{op}()", sizes=[N], modes=["compiled"], device="cpu"), events.append)
            ms = [e.measurement for e in events if isinstance(e, MeasurementResult) and e.measurement.wall_time_us is not None]
            m = ms[-1]
            res[arm].setdefault(op, []).append((m.device_time_us, m.wall_time_us))
        timing.needs_warm_up = own
        w, n = res["warm"][op][-1], res["none"][op][-1]
        print(f"{op:8} warm dev {w[0]:7.2f} wall {w[1]:7.2f}   none dev {n[0]:7.2f} wall {n[1]:7.2f}", flush=True)
print("ratios none/warm per op (median over rounds): device, wall")
allr = []
for op in OPS:
    d = statistics.median(n[0] / w[0] for w, n in zip(res["warm"][op], res["none"][op]))
    wl = statistics.median(n[1] / w[1] for w, n in zip(res["warm"][op], res["none"][op]))
    allr.append((d, wl)); print(f"{op:8} {d:.3f} {wl:.3f}")
print("all", statistics.median(a for a, _ in allr), statistics.median(b for _, b in allr))
