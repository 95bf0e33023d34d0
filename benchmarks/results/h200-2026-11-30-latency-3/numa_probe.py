"""A compiled 1e7 chain's wall time per call in this process (host-bound on the H200): run under
taskset on the GPU's local CPUs and on far ones, to see whether the 43-or-70 us split is placement."""
import json, os, sys
sys.path.insert(0, os.getcwd())
import torch
from probes.sweep import run_profile
from probes.protocol import ProfileRequest, MeasurementResult
out = []
for _ in range(2):
    ev = []
    run_profile(ProfileRequest(id="n", chain="(a * b + c).tanh()", sizes=[10**7], modes=["compiled"], device="cuda"), ev.append)
    out += [round(e.measurement.wall_time_us, 1) for e in ev if isinstance(e, MeasurementResult)]
print(json.dumps({"cpus": sys.argv[1] if len(sys.argv) > 1 else "any", "affinity": len(os.sched_getaffinity(0)), "wall_us": out}), flush=True)
