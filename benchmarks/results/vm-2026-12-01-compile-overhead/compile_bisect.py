"""Which of the tool's wrappers makes its compile slower than a bare one: in turns, in one process."""
import os, sys, time, tempfile, statistics, itertools
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-cb-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
sys.path.insert(0, os.getcwd())
import torch
from probes import compiling as C, sweep as S
from probes.diagnostics import capturing
from probes.expr import parse_chain
from contextlib import nullcontext
dev = S.resolve_device(None)
n = 10**6 if dev.type == "cuda" else 10**4
a = torch.randn(n, device=dev); b = torch.randn(n, device=dev)
def sync():
    if dev.type == "cuda": torch.cuda.synchronize()
def run(variant, chain):
    if variant == "bare":
        fn = eval(f"lambda a, b: {chain}")
        call = lambda: torch.compile(fn)(a, b)
    else:
        f = parse_chain(chain).build_function(C.CHAIN_NAMESPACE)
        frame = C.own_frame(f) if variant != "built" else f
        compiled = torch.compile(frame)
        call = lambda: compiled(a, b, N=n)
    ctx1 = capturing() if variant in ("captured", "settings") else nullcontext()
    ctx2 = C.tool_compile_settings("compiled", dev) if variant == "settings" else nullcontext()
    with ctx1, ctx2:
        t = time.perf_counter(); call(); sync(); return time.perf_counter() - t
VARIANTS = ["bare", "built", "own_frame", "captured", "settings"]
if os.environ.get("NO_PROFILE"): C.compile_settings = lambda mode, device: {}
for v in VARIANTS: run(v, f"(a + b).relu() * {VARIANTS.index(v) + 100}")
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "rsqrt", "sinh", "cosh", "atan", "asinh"]
times = {v: [] for v in VARIANTS}
for i, op in enumerate(OPS):
    order = VARIANTS[i % 5:] + VARIANTS[:i % 5]
    for j, v in enumerate(order):
        times[v].append(run(v, f"(a - b).{op}() * {i * 10 + j + 2}"))
for v in VARIANTS:
    print(f"{v:10} median {statistics.median(times[v])*1e3:6.1f} ms  p25 {sorted(times[v])[4]*1e3:6.1f}  p75 {sorted(times[v])[11]*1e3:6.1f}")
