"""Finer steps of a new chain's compiled request on the GPU (as compiled_steps.py, one process):
the memory guard's parts, what _compile does around the compile, and the reading of a session's
events (the raw list, each event's fields, the demangling). ms per request, medians.

    python lab/s23/fine_steps.py [cuda|cpu] [N]
"""
import os, statistics, sys, tempfile, time
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-fine-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-fine-tr-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
sys.path.insert(0, os.getcwd())
from probes.worker import long_lived
with long_lived():
    import torch
    import torch._inductor.compile_fx  # noqa: F401
from probes import compiling, memory_guard, profile_events, sweep, timing, launches
from probes.expr import ParsedChain
from probes.protocol import MeasurementResult, ProfileRequest

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal"]
spent: dict[str, float] = {}
def add(label, ms):
    spent[label] = spent.get(label, 0.0) + ms
def timed(owner, name, label):
    fn = getattr(owner, name)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            add(label, (time.perf_counter() - t) * 1000)
    setattr(owner, name, wrapper)

timed(memory_guard, "free_memory", "guard: free_memory (each)")
timed(memory_guard, "trace_on_meta", "guard: trace_on_meta")
timed(memory_guard, "input_specs", "guard: input_specs")
timed(ParsedChain, "build_function", "build_function (all)")
timed(torch.cuda, "mem_get_info", "torch.cuda.mem_get_info")
timed(compiling, "_compile", "_compile")
timed(torch, "compile", "torch.compile() wrapper")
timed(compiling, "_sync", "_compile: _sync")
timed(compiling.inductor, "generated_kernels", "_compile: generated_kernels")
timed(profile_events, "_on_their_ops_threads", "read: _on_their_ops_threads")
timed(profile_events, "_nest", "read: _nest")
timed(profile_events, "_without_doubles", "read: _without_doubles")
timed(profile_events, "_event", "read: _event (fields)")
timed(profile_events, "_name", "read: _name (demangle)")
timed(torch._C, "_demangle", "read: torch._C._demangle")
timed(timing, "read_events", "read_events")
timed(launches, "read_profile", "read_profile")
orig_prepare = compiling.prepare
def prepare(chain, mode, inputs, n, device, diagnostics, grad=False):
    # the compile's own clock: what the whole _compile spends outside it
    r = orig_prepare(chain, mode, inputs, n, device, diagnostics, grad)
    if r.compile_info is not None:
        add("_compile minus its compile + first call", spent.get("_compile", 0) - 1000 * r.compile_info.compile_time_s)
    return r
compiling.prepare = prepare
import probes.measure as measure_module
measure_module.prepare = prepare
events_list = {"ms": 0.0, "n": 0}
orig_read = profile_events.read_events
def read_events(results):
    t = time.perf_counter(); raw = results.events(); add("read: results.events()", (time.perf_counter() - t) * 1000)
    add("read: events (count)", len(raw))
    return orig_read(results)
timing.read_events = read_events
timed(timing, "read_events", "read_events")
calls = {"n": 0}
orig_call_compiled = compiling._call_compiled
def _call_compiled(fn, mode, device, inputs, n):
    call = orig_call_compiled(fn, mode, device, inputs, n)
    def timed_call():
        t = time.perf_counter(); r = call(); calls["n"] += 1
        add("_compile: call #1 (compile + first)" if calls["n"] == 1 else "_compile: calls #2-4 (the warm three)" if calls["n"] <= 4 else "later calls", (time.perf_counter() - t) * 1000)
        return r
    return timed_call
compiling._call_compiled = _call_compiled

def run(text):
    spent.clear(); calls["n"] = 0; seen = {}
    t0 = time.perf_counter()
    def on(e):
        if isinstance(e, MeasurementResult) and "rows" not in seen:
            seen["rows"] = (time.perf_counter() - t0) * 1000; seen["spent"] = dict(spent)
    sweep.run_profile(ProfileRequest(text, text, sizes=[N], modes=["compiled"], device=DEVICE), on)
    return {**seen["spent"], "= request -> rows": seen["rows"]}

run("(a + b).relu()"); run("(a * b).relu()")
table: dict[str, list[float]] = {}
for op in OPS:
    row = run(f"(a + b).{op}()")
    print(op, " ".join(f"{k.split(':')[-1].strip()[:18]}={v:.2f}" for k, v in sorted(row.items())), flush=True)
    for k, v in row.items():
        table.setdefault(k, []).append(v)
print(f"\nmedians (ms) over {len(OPS)} new chains, {DEVICE} N={N} torch {torch.__version__}")
for k, v in sorted(table.items()):
    v = v + [0.0] * (len(OPS) - len(v))
    q = statistics.quantiles(v, n=4)
    print(f"  {k:45} {statistics.median(v):8.2f}  ({q[0]:.2f}-{q[2]:.2f})")
