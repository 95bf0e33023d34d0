"""Where the tool's compile is longer than a bare one: in one warm process, in turns, new chains
compiled (a) bare as benchmarks/inproc.py does, (b) bare but through the tool's function form
(build_function + own_frame + N kwarg, no config patch), (c) the tool's _compile, (d) the tool's
_compile with a ProfilerSetUp beside it (as _collect does). Each compile's graph is new to
Inductor (its own constant). Times: torch.compile + first call + sync."""
import os, sys, time, tempfile, statistics
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-parts-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-parts-triton-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
sys.path.insert(0, os.getcwd())
import torch
from probes import compiling as C, sweep as S
from probes.diagnostics import capturing
from probes.expr import parse_chain
from probes.inputs import input_specs, make_inputs
from probes.timing import ProfilerSetUp

dev = S.resolve_device(None)
n = 10**6 if dev.type == "cuda" else 10**4
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 16
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
a = torch.randn(n, device=dev); b = torch.randn(n, device=dev)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


def bare(src):
    fn = eval(f"lambda a, b: {src}")
    sync(); t = time.perf_counter()
    torch.compile(fn)(a, b); sync()
    return time.perf_counter() - t


def bare_form(src):
    parsed = parse_chain(src)
    inputs = make_inputs(input_specs(parsed, n, "fp32"), dev, n)
    frame = C.own_frame(parsed.build_function(C.CHAIN_NAMESPACE))
    sync(); t = time.perf_counter()
    torch.compile(frame, mode=None, dynamic=False)(*inputs, N=n); sync()
    return time.perf_counter() - t


def tool(src, with_setup=False):
    parsed = parse_chain(src)
    inputs = make_inputs(input_specs(parsed, n, "fp32"), dev, n)
    set_up = ProfilerSetUp(dev) if with_setup else None
    with capturing() as diag:
        sync(); t = time.perf_counter()
        compiled = C._compile(parsed, "compiled", inputs, n, dev, diag, None)
        whole = time.perf_counter() - t
    if set_up is not None:
        set_up.discard()
    return compiled.info.compile_time_s, whole


VARIANTS = {
    "bare": lambda s: bare(s),
    "bare_form": lambda s: bare_form(s),
    "tool": lambda s: tool(s)[0],
    "tool+setup": lambda s: tool(s, True)[0],
}
names = list(VARIANTS)
# warm-up: the compiler's imports, the first profiler set-up (made inline, as in the worker)
bare("(a - b).relu() * 2"); tool("(a - b).relu() * 3"); tool("(a - b).relu() * 5", True)
times = {k: [] for k in names}
for r in range(ROUNDS):
    op = OPS[r % len(OPS)]
    order = names[r % 4:] + names[: r % 4]
    line = []
    for v, name in enumerate(order):
        k = 100 * r + 10 * names.index(name) + 7
        s = VARIANTS[name](f"(a + b).{op}() * {k}")
        times[name].append(s)
        line.append(f"{name} {s * 1e3:5.0f}")
    print(f"{op:8}", "  ".join(line), flush=True)
for name in names:
    xs = times[name]
    print(f"{name:11} median {statistics.median(xs) * 1e3:5.0f} ms  p25-p75 {statistics.quantiles(xs, n=4)[0] * 1e3:5.0f}-{statistics.quantiles(xs, n=4)[2] * 1e3:5.0f}")
for name in names[1:]:
    ratios = [x / y for x, y in zip(times[name], times["bare"])]
    print(f"{name:11} / bare, chain by chain: median {statistics.median(ratios):.3f}x")
