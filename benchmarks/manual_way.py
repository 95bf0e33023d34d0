"""The manual way, as a person would do it without kernel-tui: a fresh Python process that builds
the tensors, profiles the chain eager and under torch.compile with torch.profiler, and prints
the profiler's table. benchmarks/run.py times this whole process (start to exit) and compares it
with kernel-tui's edit -> fresh kernel rows latency on a warm worker.

    python benchmarks/manual_way.py [--size 1000000] [--device cuda|cpu] [--reps 10]

The chain is ``(a + b).relu()`` unless ``--constant C`` is given, then ``(a + b).relu() * C``.
"""

from __future__ import annotations

import argparse

import torch
import torch._inductor.config
from torch.profiler import ProfilerActivity, profile

# Without this, Inductor's C++ kernels are invisible to the CPU profiler; a person who wants the
# same table as kernel-tui's would have to find and set it too.
torch._inductor.config.cpp.enable_kernel_profile = True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--constant", type=float, default=None)
    args = parser.parse_args()

    device = torch.device(args.device)
    a = torch.randn(args.size, device=device)
    b = torch.randn(args.size, device=device)

    if args.constant is None:

        def chain(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return (a + b).relu()

    else:
        constant = args.constant

        def chain(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return (a + b).relu() * constant

    compiled = torch.compile(chain)
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    sort_by = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for name, fn in (("eager", chain), ("compiled", compiled)):
        for _ in range(3):  # warm up: the first compiled call is the compilation
            fn(a, b)
        sync()
        with profile(activities=activities) as prof:
            for _ in range(args.reps):
                fn(a, b)
            sync()
        print(f"== {name}, N = {args.size:,}, {args.reps} calls ==")
        print(prof.key_averages().table(sort_by=sort_by, row_limit=12))


if __name__ == "__main__":
    main()
