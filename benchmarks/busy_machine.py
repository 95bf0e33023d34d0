"""Edits on a busy machine: eager requests through a fresh worker while other processes load the CPU.

    python benchmarks/busy_machine.py [--requests 10] [--n 1e4] [--hogs 1] [--out FILE]

A machine shared with other work (a training job's data loaders, a build) is where a profiler is
often run. Each new chain's eager request is timed from send to its MeasurementResult, first on
the quiet machine, then with ``--hogs`` processes spinning on the CPU, each in a fresh worker with
an empty cache of its own (as a user's first session), and printed side by side: busy / quiet is
what the load costs an edit.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.tui_latency import spread  # noqa: E402
from probes.link.client import WorkerClient  # noqa: E402
from probes.link.protocol import MeasurementResult, ProfileRequest  # noqa: E402
from probes.link.summary import parse_size  # noqa: E402

OPS = ("tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "relu")


def spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


async def request_times(requests: int, n: int) -> list[float]:
    """Seconds from send to rows, one new chain per request, in a fresh worker and cache."""
    with tempfile.TemporaryDirectory(prefix="kt-busy-") as cache:
        client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": cache})
        try:
            await client.start()
            times = []
            for number in range(requests):
                chain = f"(a + b).{OPS[number % len(OPS)]}()"
                request = ProfileRequest(client.new_id(), chain, sizes=[n], modes=["eager"], device="cpu")
                begin = time.perf_counter()
                async for event in client.request(request):
                    if isinstance(event, MeasurementResult):
                        times.append(time.perf_counter() - begin)
            return times
        finally:
            await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--n", default="1e4")
    parser.add_argument("--hogs", type=int, default=1, help="processes spinning on the CPU while busy")
    parser.add_argument("--out", help="write the figures as JSON here too")
    args = parser.parse_args()
    n = parse_size(args.n)

    quiet = asyncio.run(request_times(args.requests, n))
    hogs = [multiprocessing.Process(target=spin, args=(3600,), daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()
    try:
        busy = asyncio.run(request_times(args.requests, n))
    finally:
        for hog in hogs:
            hog.kill()
    figures = {"quiet_s": spread(quiet), "busy_s": spread(busy)}
    figures["busy_over_quiet"] = figures["busy_s"]["median"] / figures["quiet_s"]["median"]
    report = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "n": n,
        "requests": args.requests,
        "hogs": args.hogs,
        "figures": figures,
        "raw_s": {"quiet": quiet, "busy": busy},
    }
    print(
        f"eager request send -> rows, N={n:g}, {args.requests} new chains, fresh worker and cache, "
        f"{os.cpu_count()} CPUs"
    )
    for name in ("quiet", "busy"):
        f = figures[f"{name}_s"]
        label = name if name == "quiet" else f"busy ({args.hogs} spinning)"
        print(
            f"  {label:<16} median {f['median'] * 1e3:8.1f} ms   p90 {f['p90'] * 1e3:8.1f} ms   "
            f"max {f['max'] * 1e3:8.1f} ms"
        )
    print(f"  busy / quiet     {figures['busy_over_quiet']:.2f}x")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
