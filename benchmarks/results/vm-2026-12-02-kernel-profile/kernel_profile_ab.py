"""What the tool's CPU kernel-profile setting costs a compile, and whether a precompiled header
that holds the profiling header too takes that cost away.

    python kernel_profile_ab.py [ROUNDS]

In one warm process, in turns, new chains ((a + b).OP() * k, each graph new to Inductor)
compiled with ``torch.compile`` + first call at N=1e4 on the CPU: (off) as a user's own compile,
(on) with ``cpp.enable_kernel_profile`` as the tool builds them (its kernels then open with
``#include <torch/csrc/inductor/aoti_runtime/utils.h>`` and a record-function handle), and
(on+pch) the same with Inductor's precompiled prefix header made from a header that includes
that profiling header as well (``codecache._get_cpp_prefix_header`` pointed at it), so the
include costs nothing. Prints each round, the medians and the ratios chain by chain."""
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-kp-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch  # noqa: E402
import torch._inductor.codecache as codecache  # noqa: E402
import torch._inductor.config as cfg  # noqa: E402

N = 10**4
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
a, b = torch.randn(N), torch.randn(N)
BOTH = os.path.join(tempfile.mkdtemp(prefix="kt-kp-pch-"), "profiled_prefix.h")
with open(BOTH, "w") as header:
    header.write("#include <torch/csrc/inductor/aoti_runtime/utils.h>\n#include <torch/csrc/inductor/cpp_prefix.h>\n")
own_prefix = codecache._get_cpp_prefix_header


def compile_once(src: str, variant: str) -> float:
    fn = eval(f"lambda a, b: {src}")  # noqa: S307 (this script's own chains)
    codecache._get_cpp_prefix_header = (lambda device: BOTH if device.startswith("cpu") else None) if variant == "on+pch" else own_prefix
    try:
        with cfg.patch({"cpp.enable_kernel_profile": variant != "off"}):
            begin = time.perf_counter()
            torch.compile(fn)(a, b)
            return time.perf_counter() - begin
    finally:
        codecache._get_cpp_prefix_header = own_prefix


VARIANTS = ["off", "on", "on+pch"]
for k, variant in enumerate(VARIANTS):  # warm-up: imports, and each precompiled header made once
    compile_once(f"(a - b).relu() * {k + 2}", variant)
times: dict[str, list[float]] = {v: [] for v in VARIANTS}
for r in range(ROUNDS):
    op = OPS[r % len(OPS)]
    order = VARIANTS[r % 3:] + VARIANTS[: r % 3]
    for variant in order:
        times[variant].append(compile_once(f"(a + b).{op}() * {100 * r + VARIANTS.index(variant) + 7}", variant))
    print(f"{op:8}", "  ".join(f"{v} {times[v][-1] * 1e3:5.0f}" for v in order), flush=True)
for variant in VARIANTS:
    xs = times[variant]
    q = statistics.quantiles(xs, n=4)
    print(f"{variant:7} median {statistics.median(xs) * 1e3:5.0f} ms  p25-p75 {q[0] * 1e3:5.0f}-{q[2] * 1e3:5.0f}")
for variant in VARIANTS[1:]:
    ratios = [x / y for x, y in zip(times[variant], times["off"])]
    print(f"{variant:7} / off, chain by chain: median {statistics.median(ratios):.3f}x")
