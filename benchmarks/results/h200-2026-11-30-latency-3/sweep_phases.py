"""The app's sweep as one request in a warm worker process: when each size's rows arrive."""
import json, os, sys, time
os.environ.setdefault("TEARDOWN_CUPTI", "1")
sys.path.insert(0, os.getcwd())
import torch
import probes.sweep as sweep
from probes.protocol import ProfileRequest, DEFAULT_SIZES
from probes.worker import _initialise_device
_initialise_device()
import gc; gc.freeze()
dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
def run(chain, sizes, modes):
    t = time.perf_counter(); marks = []
    def emit(e):
        name = type(e).__name__
        if name == "MeasurementResult":
            m = e.measurement
            marks.append((m.mode, m.size, round((time.perf_counter() - t) * 1e3), m.reps))
        elif name == "Progress":
            marks.append(("progress", e.message[:50], round((time.perf_counter() - t) * 1e3)))
    sweep.run_profile(ProfileRequest(id="s", chain=chain, sizes=sizes, modes=modes, device=dev), emit)
    return round((time.perf_counter() - t) * 1e3), marks
run("(a + b).relu()", [10**6], ["eager", "compiled"])  # the app's first rows and compile, before the sweep
for i in range(2):
    total, marks = run("(a + b).relu()", list(DEFAULT_SIZES), ["eager", "compiled"])
    print(json.dumps({"sweep_total_ms": total, "marks": marks}), flush=True)
