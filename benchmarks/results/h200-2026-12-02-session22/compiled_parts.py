"""Where a new chain's compiled measurement goes after its compile, in one process as the compile
worker runs it (modes=["compiled"] only: no eager trace to reuse): ms per phase, per chain, medians."""
import contextlib, os, statistics, sys, tempfile, time
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-parts-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-parts-tr-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch
from probes import measure, timing
from probes.protocol import MeasurementResult, ProfileRequest
from probes.sweep import run_profile

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal"]
spans: dict[str, list[float]] = {}
current: dict[str, float] = {}

def timed(module, name, label=None):
    fn = getattr(module, name)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            current[label or name] = current.get(label or name, 0.0) + (time.perf_counter() - t) * 1000
    setattr(module, name, wrapper)

def timed_cm(module, name):
    fn = getattr(module, name)
    @contextlib.contextmanager
    def wrapper(*a, **k):
        t = time.perf_counter()
        with fn(*a, **k) as v:
            yield v
        current[name] = current.get(name, 0.0) + (time.perf_counter() - t) * 1000
    setattr(module, name, wrapper)

timed(measure, "prepare")
timed(measure, "choose_reps")
timed_cm(measure, "recording_ops")
timed(measure, "compiled_bytes")
timed(measure, "profile_run")
timed(timing, "_session")
timed(timing, "read_events")
timed(timing, "read_profile")
timed(timing, "_settled_call_time")
timed(timing, "warm_up")
timed(measure, "_flops")
timed(measure, "_profile")
orig_start = timing.profile._start_trace
def start_trace(self):
    t = time.perf_counter(); r = orig_start(self); current["start_trace"] = current.get("start_trace", 0) + (time.perf_counter() - t) * 1000; return r
timing.profile._start_trace = start_trace
orig_exit = timing.profile.__exit__
def exit_(self, *a):
    t = time.perf_counter(); r = orig_exit(self, *a); current["profiler_exit"] = current.get("profiler_exit", 0) + (time.perf_counter() - t) * 1000; return r
timing.profile.__exit__ = exit_

run_profile(ProfileRequest("w", "(a + b).relu()", sizes=[N], modes=["compiled"], device=DEVICE), lambda e: None)
rows_after_compile = []
for i, op in enumerate(OPS):
    current.clear()
    t0 = time.perf_counter(); seen = {}
    def on(e):
        if isinstance(e, MeasurementResult) and "rows" not in seen:
            seen["rows"] = (time.perf_counter() - t0) * 1000
    run_profile(ProfileRequest(f"r{i}", f"(a + b).{op}()", sizes=[N], modes=["compiled"], device=DEVICE), on)
    current["request_to_rows"] = seen["rows"]
    current["rows_after_prepare"] = seen["rows"] - current.get("prepare", 0)
    print(op, " ".join(f"{k}={v:.1f}" for k, v in sorted(current.items())), flush=True)
    for k, v in current.items():
        spans.setdefault(k, []).append(v)
print("\nmedians (ms) over", len(OPS), "new chains at N =", N, "on", DEVICE, torch.__version__)
for k, v in sorted(spans.items(), key=lambda kv: -statistics.median(kv[1])):
    print(f"  {k:22} {statistics.median(v):8.2f}  (p25-p75 {statistics.quantiles(v, n=4)[0]:.2f}-{statistics.quantiles(v, n=4)[2]:.2f})")
