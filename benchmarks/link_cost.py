"""What a worker behind a command costs against the local worker, per start and per request.

    .venv/bin/python benchmarks/link_cost.py [--runs 5] [--infos 20] [--eagers 10]
        [--command "sh -c 'exec kernel-tui worker'"] [--out FILE.json]

A remote box is reached by a command that starts a worker on its stdin/stdout (``--host
b="ssh b kernel-tui worker"``, ``--worker-cmd``). This measures that path with a local stand-in,
``sh -c 'exec kernel-tui worker'`` by default (the same pipes, the same ``kernel-tui worker``
entry, no network), in turns with the local worker the app starts itself, each run a fresh
worker of each:

- **start**: the client's ``start()`` to the worker's ready message (torch imported, devices
  listed);
- **first rows**: a new chain's first eager request at N=1e3 on the CPU, sent to its result;
- **info round trip**: the smallest request of the protocol (``InfoRequest``) to its answer,
  the median of ``--infos`` in a row: what one request costs the link itself;
- **eager round trip**: a warm eager request at N=1e3 with 20 reps, sent to its end, the median
  of ``--eagers``.

Printed per figure: the median over the runs and its range (min-max) for each worker, and the
difference of the medians. An SSH hop adds its round-trip time to every request on top of these
(and its handshake, typically 0.1-0.5 s, to the start); the stand-in has none.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probes.link.client import WorkerClient  # noqa: E402
from probes.link.protocol import MeasurementResult, ProfileRequest, RequestDone  # noqa: E402

CHAIN = "(a + b).relu()"
FIGURES = ("start_s", "first_rows_s", "info_round_trip_ms", "eager_round_trip_ms")


def stand_in_command() -> str:
    """``sh -c 'exec kernel-tui worker'`` with this environment's kernel-tui (beside its Python)."""
    kernel_tui = Path(sys.executable).with_name("kernel-tui")
    return f"sh -c 'exec {kernel_tui if kernel_tui.exists() else 'kernel-tui'} worker'"


async def timed(step: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await step()
    return time.perf_counter() - started


async def one_run(command: str | None, infos: int, eagers: int, chain: str) -> dict[str, float]:
    """One fresh worker started by ``command`` (None: the local worker): the four figures."""
    client = WorkerClient(command)
    try:
        start_s = await timed(client.start)
        request = ProfileRequest(client.new_id(), chain, sizes=[1000], modes=["eager"], device="cpu", reps=20)
        sent = time.perf_counter()
        first_rows_s = 0.0
        async for event in client.request(request):
            if isinstance(event, MeasurementResult) and not first_rows_s:
                first_rows_s = time.perf_counter() - sent
        await client.info()  # the CPU's peak bandwidth measured once, outside the timed ones
        info_s = [await timed(client.info) for _ in range(infos)]

        async def eager() -> None:
            again = ProfileRequest(client.new_id(), chain, sizes=[1000], modes=["eager"], device="cpu", reps=20)
            async for event in client.request(again):
                if isinstance(event, RequestDone):
                    return

        eager_s = [await timed(eager) for _ in range(eagers)]
    finally:
        await client.close()
    return {
        "start_s": start_s,
        "first_rows_s": first_rows_s,
        "info_round_trip_ms": statistics.median(info_s) * 1e3,
        "eager_round_trip_ms": statistics.median(eager_s) * 1e3,
    }


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


async def main(args: argparse.Namespace) -> dict[str, object]:
    # A cache folder of its own: its workers' device locks and peaks, never another process's wait
    # for the CPU counted as the link's cost. Both workers inherit it, the command's through sh.
    os.environ["KERNEL_TUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-link-cost-")
    workers = {"local": None, "command": args.command}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in workers}
    for index in range(args.runs):
        order = list(workers) if index % 2 == 0 else list(reversed(workers))  # in turns, neither always first
        for name in order:
            chain = f"{CHAIN} * {index + 2}"  # a new chain each run: first rows without the worker's caches
            runs[name].append(await one_run(workers[name], args.infos, args.eagers, chain))
    figures = {figure: {name: summary([run[figure] for run in runs[name]]) for name in workers} for figure in FIGURES}
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average": os.getloadavg()[0],
        "command": args.command,
        "runs": args.runs,
        "infos": args.infos,
        "eagers": args.eagers,
        "figures": figures,
        "each_run": runs,
    }


def text(result: dict[str, object]) -> str:
    figures = result["figures"]
    assert isinstance(figures, dict)
    lines = [
        f"worker behind `{result['command']}` against the local worker, {result['runs']} runs each in turns, "
        f"a fresh worker per run; {result['machine']}, load average {result['load_average']:.1f}",
        f"{'':22}{'local: median (min-max)':>30}{'command: median (min-max)':>32}{'difference':>14}",
    ]
    units = {"start_s": ("s", 2), "first_rows_s": ("s", 3), "info_round_trip_ms": ("ms", 2)}
    for figure, by_worker in figures.items():
        unit, digits = units.get(figure, ("ms", 1))

        def cell(found: dict[str, float], unit: str = unit, digits: int = digits) -> str:
            return f"{found['median']:.{digits}f} {unit} ({found['min']:.{digits}f}-{found['max']:.{digits}f})"

        local, command = by_worker["local"], by_worker["command"]
        difference = command["median"] - local["median"]
        name = figure.removesuffix("_s").removesuffix("_ms").replace("_", " ")
        lines.append(f"{name:22}{cell(local):>30}{cell(command):>32}{difference:>+11.{digits}f} {unit}")
    lines.append("a local stand-in: an SSH hop adds its round-trip time to each request and its handshake to the start")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--infos", type=int, default=20)
    parser.add_argument("--eagers", type=int, default=10)
    parser.add_argument("--command", default=stand_in_command())
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = asyncio.run(main(args))
    print(text(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
