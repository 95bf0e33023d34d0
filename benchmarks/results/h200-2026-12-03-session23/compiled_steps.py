"""Every step of a new chain's compiled request, as the compile worker runs it (modes=["compiled"],
one process, imports frozen, one compile thread): ms spent in each wrapped function per request
(nested ones counted inside their callers too), Dynamo's own phase timers, medians over the chains.

    python lab/s23/compiled_steps.py [cuda|cpu] [N]
"""
import contextlib, os, statistics, sys, tempfile, time
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-steps-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-steps-tr-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
sys.path.insert(0, os.getcwd())
from probes.worker import long_lived
with long_lived():
    import torch
    import torch._inductor.compile_fx  # noqa: F401
from probes import bandwidth, compiling, measure, sweep, timing, bytes_moved
from probes import compiled as inductor
from probes.protocol import MeasurementResult, ProfileRequest

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal",
       "log", "sinh", "cosh", "atan"]
spent: dict[str, float] = {}
T0 = [0.0]

def add(label, ms):
    spent[label] = spent.get(label, 0.0) + ms

def timed(module, name, label=None):
    fn = getattr(module, name)
    label = label or f"{module.__name__.split('.')[-1]}.{name}"
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            add(label, (time.perf_counter() - t) * 1000)
    setattr(module, name, wrapper)

def timed_cm(module, name, label=None):
    fn = getattr(module, name)
    label = label or f"{module.__name__.split('.')[-1]}.{name}"
    @contextlib.contextmanager
    def wrapper(*a, **k):
        t = time.perf_counter()
        cm = fn(*a, **k); v = cm.__enter__()
        add(label + " (enter)", (time.perf_counter() - t) * 1000)
        try:
            yield v
        except BaseException:
            if not cm.__exit__(*sys.exc_info()):
                raise
        else:
            t2 = time.perf_counter(); cm.__exit__(None, None, None); add(label + " (exit)", (time.perf_counter() - t2) * 1000)
    setattr(module, name, wrapper)

for mod, name in [(sweep, "parse_chain"), (sweep, "check_memory"), (sweep, "make_inputs"), (sweep, "input_specs"),
                  (sweep, "L2Flusher"), (bandwidth, "peak"), (sweep, "measure"), (measure, "prepare"), (measure, "ProfilerSetUp"),
                  (measure, "choose_reps"), (measure, "compiled_bytes"), (measure, "profile_run"), (measure, "_flops"),
                  (measure, "_measurement"), (measure, "LoadWindow"), (timing, "_session"), (timing, "read_events"),
                  (timing, "read_profile"), (compiling, "_compile"), (compiling, "end_dynamo_deferral"),
                  (compiling, "_dynamo_counters"), (compiling, "check_result"), (compiling, "cache_entries"),
                  (compiling, "own_frame"), (inductor, "wrapper_modules_since"), (inductor, "generated_kernels"),
                  (inductor, "launch_config"), (inductor, "loaded_module_count"), (compiling, "_sync"), (measure, "pin_malloc_thresholds")]:
    if hasattr(mod, name):
        timed(mod, name)
    else:
        print("no", mod.__name__, name)
for mod, name in [(sweep, "importing_compiler"), (sweep, "capturing"), (measure, "capturing"), (compiling, "tool_compile_settings"),
                  (compiling, "compiling"), (compiling, "measuring"), (compiling, "compile_window"), (measure, "measuring")]:
    timed_cm(mod, name)
orig_start = timing.profile._start_trace
def start_trace(self):
    t = time.perf_counter(); r = orig_start(self); add("profiler start", (time.perf_counter() - t) * 1000); return r
timing.profile._start_trace = start_trace
orig_exit = timing.profile.__exit__
def exit_(self, *a):
    t = time.perf_counter(); r = orig_exit(self, *a); add("profiler exit", (time.perf_counter() - t) * 1000); return r
timing.profile.__exit__ = exit_

from torch._dynamo.utils import compilation_time_metrics as ctm
DYNAMO = ["_compile.compile_inner", "OutputGraph.call_user_compiler", "create_aot_dispatcher_function", "compile_fx_inner",
          "GraphLowering.run", "GraphLowering.codegen", "GraphLowering.compile_to_module", "PyCodeCache.load_by_key_path",
          "async_compile.wait", "async_compile.precompile", "CachingAutotuner.benchmark_all_configs", "build_guards",
          "bytecode_tracing", "Scheduler.__init__", "Scheduler.codegen", "compile_file", "_recursive_post_grad_passes",
          "_recursive_joint_graph_passes", "_recursive_pre_grad_passes", "aot_collect_metadata", "PythonWrapperCodegen.generate",
          "TritonBundler.collect", "gc", "inductor_codecache_torch_key"]
def dyn():
    return {k: sum(v) * 1000 for k, v in ctm.items()}

def run(text):
    spent.clear(); seen = {}
    before = dyn(); t0 = time.perf_counter()
    def on(e):
        if isinstance(e, MeasurementResult) and "rows" not in seen:
            seen["rows"] = (time.perf_counter() - t0) * 1000
            seen["spent"] = dict(spent); seen["dyn"] = dyn()
    sweep.run_profile(ProfileRequest(text, text, sizes=[N], modes=["compiled"], device=DEVICE), on)
    row = dict(seen["spent"]); row["= request -> rows"] = seen["rows"]
    row.update({f"dynamo: {k}": v - before.get(k, 0.0) for k, v in seen["dyn"].items() if v - before.get(k, 0.0) > 0.05})
    return row

run("(a + b).relu()"); run("(a * b).relu()")
table: dict[str, list[float]] = {}
for op in OPS:
    row = run(f"(a + b).{op}()")
    print(f"{op:10} rows {row['= request -> rows']:7.1f} ms  compile {row.get('compiling._compile', 0):7.1f}", flush=True)
    for k, v in row.items():
        table.setdefault(k, []).append(v)
print(f"\nmedians (ms) over {len(OPS)} new chains, {DEVICE} N={N} torch {torch.__version__}")
for k, v in sorted(table.items(), key=lambda kv: -statistics.median(kv[1])):
    v = v + [0.0] * (len(OPS) - len(v))
    q = statistics.quantiles(v, n=4)
    print(f"  {k:55} {statistics.median(v):8.2f}  ({q[0]:.2f}-{q[2]:.2f})")
