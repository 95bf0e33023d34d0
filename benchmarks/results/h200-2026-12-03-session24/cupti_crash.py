"""Which TEARDOWN_CUPTI history makes a CUDA-graph mode crash after profiled sessions? (a + b).relu()
at 1e7, eager, compiled, max-autotune, reduce-overhead in one process (test_engine_gpu.py's fixture),
after the history named by argv[1]:
  import       - as the code is: set to 1 at probes' import
  first_gpu    - 3ea6613: unset at import, set to 1 before each GPU profiler session
  test_order   - 3ea6613 and its test before the fixture: a GPU eager session at 1e3, then unset again
  off          - TEARDOWN_CUPTI=0 throughout
"""
import os
import sys
import time

sys.path.insert(0, os.getcwd())
scenario = sys.argv[1]
if scenario == "off":
    os.environ["TEARDOWN_CUPTI"] = "0"
import torch  # noqa: E402
from probes import timing  # noqa: E402
from probes.protocol import MeasurementResult, ProfileRequest, RequestFailed  # noqa: E402
from probes.sweep import run_profile  # noqa: E402

if scenario in ("first_gpu", "test_order"):
    os.environ.pop("TEARDOWN_CUPTI", None)
    plain = timing._new_profiler

    def _new_profiler(device):
        if device.type == "cuda":
            os.environ.setdefault("TEARDOWN_CUPTI", "1")
        return plain(device)

    timing._new_profiler = _new_profiler


def profile(rid, chain, sizes, modes):
    events = []
    run_profile(ProfileRequest(id=rid, chain=chain, sizes=sizes, modes=modes, device="cuda"), events.append)
    ok = [e.measurement.mode for e in events if isinstance(e, MeasurementResult) and e.measurement.wall_time_us]
    failed = [(e.mode, e.info.message[:100]) for e in events if isinstance(e, RequestFailed)]
    return ok, failed


t0 = time.monotonic()
if scenario == "test_order":
    print("pre:", profile("p", "a + b", [1000], ["eager"]), "TEARDOWN_CUPTI", os.environ.get("TEARDOWN_CUPTI"), flush=True)
    os.environ.pop("TEARDOWN_CUPTI", None)
try:
    ok, failed = profile("g", "(a + b).relu()", [10_000_000], ["eager", "compiled", "max-autotune", "reduce-overhead"])
    print(f"{scenario}: ok={ok} failed={failed} TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')} {time.monotonic() - t0:.0f}s", flush=True)
except Exception as exc:
    print(f"{scenario}: RAISED {type(exc).__name__} {str(exc).splitlines()[0][:140]}", flush=True)
torch.cuda.synchronize()
print(f"{scenario}: done {time.monotonic() - t0:.0f}s", flush=True)
