"""Does a CUDA-graph mode after profiled sessions crash here? (a + b).relu() at 1e7, modes as given, in this process."""
import sys, os
sys.path.insert(0, os.getcwd())
from probes.protocol import MeasurementResult, ProfileRequest, RequestFailed
from probes.sweep import run_profile
modes = sys.argv[1].split(",")
events = []
try:
    run_profile(ProfileRequest(id="g", chain="(a + b).relu()", sizes=[10_000_000], modes=modes, device="cuda"), events.append)
except Exception as exc:
    print("RAISED", type(exc).__name__, str(exc).splitlines()[0][:120])
print("TEARDOWN_CUPTI at start:", os.environ.get("KT_T0"), "modes:", modes,
      "results:", [e.measurement.mode for e in events if isinstance(e, MeasurementResult) and e.measurement.wall_time_us],
      "failed:", [(e.mode, e.info.message[:80]) for e in events if isinstance(e, RequestFailed)])
