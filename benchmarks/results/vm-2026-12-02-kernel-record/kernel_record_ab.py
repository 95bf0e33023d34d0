"""What a CPU compile costs with each way of naming its kernels in the profiler.

    PYTHONPATH=<the repository> python kernel_record_ab.py [ROUNDS]

In one warm process, in turns, new chains ((a + b).OP() * k, each graph new to Inductor) compiled
with ``torch.compile`` + first call at N=1e4 on the CPU: (off) as a user's own compile, (on) with
``cpp.enable_kernel_profile`` as Inductor builds it (each kernel includes ``aoti_runtime/utils.h``
for its record-function handle), and (light) the same setting with the range declared from the C
shim alone, as the tool builds it (``probes.cpu_kernel_record.light_kernel_records``). Prints each
round, the medians and the ratios chain by chain, then checks that the light kernels' profiler
rows carry the same names as Inductor's."""
import contextlib
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-kr-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch  # noqa: E402
import torch._inductor.config as cfg  # noqa: E402

from probes.cpu_kernel_record import light_kernel_records  # noqa: E402

N = 10**4
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
VARIANTS = ["off", "on", "light"]
a, b = torch.randn(N), torch.randn(N)


def compiled(src: str, variant: str):
    fn = torch.compile(eval(f"lambda a, b: {src}"))  # noqa: S307 (this script's own chains)
    records = light_kernel_records() if variant == "light" else contextlib.nullcontext()
    with cfg.patch({"cpp.enable_kernel_profile": variant != "off"}), records:
        begin = time.perf_counter()
        fn(a, b)
        return fn, time.perf_counter() - begin


def kernel_rows(fn) -> list[str]:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn(a, b)
    return sorted({e.name.split("_", 2)[2] for e in prof.events() if "cpp_fused" in e.name})


for k, variant in enumerate(VARIANTS):  # warm-up: imports, and the precompiled header made once
    compiled(f"(a - b).relu() * {k + 2}", variant)
times: dict[str, list[float]] = {v: [] for v in VARIANTS}
for r in range(ROUNDS):
    op = OPS[r % len(OPS)]
    order = VARIANTS[r % 3:] + VARIANTS[: r % 3]
    for variant in order:
        times[variant].append(compiled(f"(a + b).{op}() * {100 * r + VARIANTS.index(variant) + 7}", variant)[1])
    print(f"{op:8}", "  ".join(f"{v} {times[v][-1] * 1e3:5.0f}" for v in order), flush=True)
for variant in VARIANTS:
    xs = times[variant]
    q = statistics.quantiles(xs, n=4)
    print(f"{variant:6} median {statistics.median(xs) * 1e3:5.0f} ms  p25-p75 {q[0] * 1e3:5.0f}-{q[2] * 1e3:5.0f}")
for variant in VARIANTS[1:]:
    ratios = [x / y for x, y in zip(times[variant], times["off"])]
    print(f"{variant:6} / off, chain by chain: median {statistics.median(ratios):.3f}x")
ratios = [x / y for x, y in zip(times["light"], times["on"])]
print(f"light  / on,  chain by chain: median {statistics.median(ratios):.3f}x")
named = {v: kernel_rows(compiled("(a * b).sigmoid() + 3", v)[0]) for v in ("on", "light")}
print("profiler rows:", named, "same names" if named["on"] == named["light"] else "DIFFERENT NAMES")
