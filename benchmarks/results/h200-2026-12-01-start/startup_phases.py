"""A fresh worker-like process: how long each step before the first eager rows takes."""
import os, sys, time
T0 = time.perf_counter()
marks = []
def mark(label):
    marks.append((label, time.perf_counter() - T0))
sys.path.insert(0, os.getcwd())  # run from the repository root
import torch
mark("import torch")
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.ones(1, device=dev).add_(1)
if dev.type == "cuda": torch.cuda.synchronize()
mark("device context")
if "--no-meta" not in sys.argv:
    a = torch.empty(8, device="meta"); (a + a).relu()
    mark(f"meta add (dynamo imported: {'torch._dynamo' in sys.modules})")
import probes.sweep as S, probes.measure as M, probes.timing as T, probes.bandwidth as BW
from probes.protocol import ProfileRequest, MeasurementResult
mark("import probes")
def wrap(mod, name):
    orig = getattr(mod, name)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            mark(f"  {name} took {1e3*(time.perf_counter()-t):.0f} ms")
    setattr(mod, name, w)
for mod, name in [(S, "check_memory"), (S, "make_inputs"), (BW, "peak"), (M, "prepare"), (M, "choose_reps"), (M, "profile_run"), (M, "measure_wall_time"), (M, "_flops"), (M, "eager_bytes")]:
    wrap(mod, name)
for i in range(2):
    got = []
    S.run_profile(ProfileRequest(f"r{i}", "(a + b).relu()" if i == 0 else "(a + b).tanh()", sizes=[10**6 if dev.type == "cuda" else 10**4], modes=["eager"]), got.append)
    mark(f"eager request {i} done ({sum(isinstance(e, MeasurementResult) for e in got)} result)")
prev = 0.0
for label, t in marks:
    print(f"{t*1e3:8.0f} ms  (+{(t-prev)*1e3:6.0f})  {label}")
    prev = t
