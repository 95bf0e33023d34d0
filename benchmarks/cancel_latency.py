"""How soon a compile typed over stops: a real worker, new chains' compiled requests, each cancelled
0.1, 0.3 or 0.5 s into its compile step on the CPU (mostly inside g++ there), 0.05, 0.1 or 0.2 s
on a GPU (a new chain's compile takes ~0.3 s on an H200).

    python benchmarks/cancel_latency.py [--device cpu|cuda] [--chains 12]

Prints, per chain, the time from the cancel to the request's end, whether the worker's compilers
were all gone by then, and whether the same chain then compiled again; then the median and max of
the requests the cancel stopped (one whose compile ended first is counted apart).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probes.engine.child_processes import compiler_processes  # noqa: E402
from probes.link.client import WorkerClient  # noqa: E402
from probes.link.protocol import MeasurementResult, ProfileRequest, Progress, RequestDone  # noqa: E402

OPS = ("tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "rsqrt")
INTO_S = {"cpu": (0.1, 0.3, 0.5), "cuda": (0.05, 0.1, 0.2)}


async def cancelled_compile(client: WorkerClient, request: ProfileRequest, into_s: float) -> tuple[bool, float]:
    """(ended cancelled, seconds from the cancel to its RequestDone)."""
    cancelled_at: list[float] = []

    async def cancel() -> None:
        cancelled_at.append(time.monotonic())
        await client.cancel(request.id)

    async for event in client.request(request):
        if isinstance(event, Progress) and event.stage == "compiling" and not cancelled_at:
            await asyncio.sleep(into_s)
            await cancel()
        if isinstance(event, RequestDone):
            return event.cancelled, time.monotonic() - cancelled_at[0]
    raise RuntimeError("the request never ended")


async def main(args: argparse.Namespace) -> None:
    caches = tempfile.mkdtemp(prefix="kt-cancel-")
    client = WorkerClient(env={"TORCHINDUCTOR_CACHE_DIR": caches, "KERNEL_TUI_CACHE_DIR": caches})
    await client.start()
    n = 10_000 if args.device == "cpu" else 1_000_000

    def compiled(chain: str) -> ProfileRequest:
        return ProfileRequest(client.new_id(), chain, sizes=[n], modes=["compiled"], device=args.device)

    async for _ in client.request(compiled("(a + b).relu()")):  # the compiler imported
        pass
    took, finished = [], 0
    delays = INTO_S["cpu" if args.device == "cpu" else "cuda"]
    for i, op in enumerate(OPS[: args.chains]):
        chain, into_s = f"(a - b).{op}() * {i + 2}", delays[i % len(delays)]
        cancelled, seconds = await cancelled_compile(client, compiled(chain), into_s)
        left = compiler_processes(client.pid or 0)
        again = [
            e.measurement
            for e in [e async for e in client.request(compiled(chain))]
            if isinstance(e, MeasurementResult)
        ]
        compiles = bool(again) and again[0].ran_compiled
        if cancelled:
            took.append(seconds)
        else:
            finished += 1
        print(
            f"{op:8} cancelled {into_s * 1e3:3.0f} ms into its compile: "
            f"ended {'cancelled' if cancelled else 'NOT cancelled'} "
            f"{seconds * 1e3:6.1f} ms later, compilers left {len(left)}, compiles again {compiles}, "
            f"worker restarts {client.restarts}",
            flush=True,
        )
    print(
        f"cancel -> end: median {statistics.median(took) * 1e3:.1f} ms, max {max(took) * 1e3:.1f} ms (n={len(took)}; "
        f"{finished} ended before the cancel); {os.cpu_count()} cpus, device {args.device}"
    )
    await client.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--chains", type=int, default=len(OPS))
    asyncio.run(main(parser.parse_args()))
