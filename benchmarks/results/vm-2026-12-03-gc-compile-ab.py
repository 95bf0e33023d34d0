"""A new chain's compiled rows with the cyclic collector on (as now) or off during the request, in
turns in one warm process set up as the compile worker is (imports frozen, one compile thread):
request -> first rows, and the collections' ms inside it.

    python lab/s23/gc_compile_ab.py [cuda|cpu] [N] [rounds]
"""
import gc, os, statistics, sys, tempfile, time
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-gcab-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-gcab-tr-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
sys.path.insert(0, os.getcwd())
from probes.worker import long_lived
with long_lived():
    import torch
    import torch._inductor.compile_fx  # noqa: F401
from probes.protocol import MeasurementResult, ProfileRequest
from probes.sweep import run_profile

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 10
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal",
       "log", "sinh", "cosh", "atan", "log2", "exp2", "floor", "ceil", "trunc", "rsqrt", "asin", "acos"]
TEMPLATES = ["(a + b).{op}()", "(a * b).{op}()", "(a - b).{op}()", "(a / b).{op}()"]
chains = iter(t.format(op=op) for t in TEMPLATES for op in OPS)
collected = {"ms": 0.0, "n": [0, 0, 0]}
started = {}
def on_gc(phase, info):
    if phase == "start":
        started["t"] = time.perf_counter()
    else:
        collected["ms"] += (time.perf_counter() - started["t"]) * 1000
        collected["n"][info["generation"]] += 1
gc.callbacks.append(on_gc)

def one(text, collector_on):
    collected.update(ms=0.0, n=[0, 0, 0])
    if not collector_on:
        gc.disable()
    t0 = time.perf_counter(); seen = {}
    def on(e):
        if isinstance(e, MeasurementResult) and "rows" not in seen:
            seen["rows"] = (time.perf_counter() - t0) * 1000
            seen["gc"] = collected["ms"]; seen["n"] = list(collected["n"])
    run_profile(ProfileRequest(text, text, sizes=[N], modes=["compiled"], device=DEVICE), on)
    gc.enable()
    after = time.perf_counter(); gc.collect(1); young = (time.perf_counter() - after) * 1000
    return seen["rows"], seen["gc"], seen["n"], young

one("(a + b).relu()", True); one("(a * b).relu()", False)
res = {True: [], False: []}
for r in range(ROUNDS):
    for on in ((True, False) if r % 2 == 0 else (False, True)):
        text = next(chains)
        rows, gcms, n, young = one(text, on)
        res[on].append(rows)
        print(f"{'gc on ' if on else 'gc off'} {text:22} rows {rows:7.1f} ms  gc {gcms:6.1f} ms {n}  collect(1) after {young:5.1f} ms", flush=True)
full = time.perf_counter(); gc.collect(); full = (time.perf_counter() - full) * 1000
print(f"\n{DEVICE} N={N} torch {torch.__version__}: median rows, collector on {statistics.median(res[True]):.1f} ms, "
      f"off {statistics.median(res[False]):.1f} ms; pairs off/on {statistics.median(b / a for a, b in zip(res[True], res[False])):.3f}x; "
      f"a full collect at the end {full:.1f} ms")
