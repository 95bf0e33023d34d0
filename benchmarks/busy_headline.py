"""The headline's eager/compiled ratio on a quiet machine and with one core kept busy.

    python benchmarks/busy_headline.py [--rounds 8] [--n 1e6] [--chain '(a + b).relu()'] [--out FILE]

One worker measures the chain's focus request (eager and compiled at N, as the app asks for it)
``--rounds`` times on the quiet machine (rounds that other processes loaded are dropped, for up to
``--quiet-wait-s``), then ``--rounds`` times beside a process spinning on one
core. Each round's device and wall ratios are what the headline says (``probes.link.summary.ratio``,
which the app, the CLI and the demo share): a figure, or "unclear" with why. The quiet rounds'
stated figures give the interval (lowest low to highest high); a busy round that states a figure
outside it is a failure: the headline must say "unclear" there. Exit status 1 on a failure.
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
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.busy_machine import spin  # noqa: E402
from probes.link.client import WorkerClient  # noqa: E402
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed  # noqa: E402
from probes.link.summary import BUSY_REASON, Ratio, format_ratio, format_size, parse_size, ratio  # noqa: E402

TIMES = ("device", "wall")


async def rounds(chain: str, n: int, count: int, client: WorkerClient) -> list[dict[str, Measurement]]:
    """``count`` focus requests of ``chain`` at ``n``: each round's eager and compiled measurements."""
    found = []
    for _ in range(count):
        request = ProfileRequest(client.new_id(), chain, sizes=[n], modes=["eager", "compiled"], device="cpu")
        got: dict[str, Measurement] = {}
        async for event in client.request(request):
            if isinstance(event, MeasurementResult) and not event.measurement.wall_pending:
                got[event.measurement.mode] = event.measurement
            elif isinstance(event, RequestFailed):
                raise SystemExit(f"the request failed: {event.error.located()}")
        found.append(got)
    return found


def said(found: Ratio | None) -> str:
    return "-" if found is None else found.text()


def stated(found: Ratio | None) -> bool:
    """The headline states a figure (not "unclear", not "within noise")."""
    return found is not None and found.verdict != "unclear"


def round_record(got: dict[str, Measurement]) -> dict[str, Any]:
    record: dict[str, Any] = {"busy": [r for m in got.values() for r in m.noise_reasons if r.startswith(BUSY_REASON)]}
    for which in TIMES:
        found = ratio(got["eager"], got["compiled"], which)
        record[which] = {
            "said": said(found),
            "stated": stated(found),
            "value": found.value if found else None,
            "low": found.low if found else None,
            "high": found.high if found else None,
        }
    return record


def busy(got: dict[str, Measurement]) -> bool:
    return any(r.startswith(BUSY_REASON) for m in got.values() for r in m.noise_reasons)


async def quiet_rounds(
    chain: str, n: int, count: int, client: WorkerClient, wait_s: float
) -> list[dict[str, Measurement]]:
    """``count`` rounds that no other process loaded, measured for at most ``wait_s`` (a machine
    shared with other work is rarely quiet for long); the busy ones in between are dropped, and
    when time runs out the last ``count`` rounds are kept as they are."""
    kept: list[dict[str, Measurement]] = []
    tried: list[dict[str, Measurement]] = []
    end = time.monotonic() + wait_s
    while len(kept) < count and time.monotonic() < end:
        got = (await rounds(chain, n, 1, client))[0]
        tried.append(got)
        if not busy(got):
            kept.append(got)
    return kept if len(kept) == count else tried[-count:]


async def measure(
    chain: str, n: int, count: int, wait_s: float
) -> tuple[list[dict[str, Measurement]], list[dict[str, Measurement]]]:
    client = WorkerClient()
    try:
        await client.start()
        await rounds(chain, n, 1, client)  # the compile, and a warm worker, before anything is kept
        quiet = await quiet_rounds(chain, n, count, client, wait_s)
        hog = multiprocessing.Process(target=spin, args=(3600,), daemon=True)
        hog.start()
        try:
            busy = await rounds(chain, n, count, client)
        finally:
            hog.kill()
        return quiet, busy
    finally:
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--n", default="1e6")
    parser.add_argument("--chain", default="(a + b).relu()")
    parser.add_argument("--quiet-wait-s", type=float, default=300, help="how long to wait for quiet rounds")
    parser.add_argument("--out", help="write the figures as JSON here too")
    args = parser.parse_args()
    n = parse_size(args.n)
    load_before = os.getloadavg()
    quiet_runs, busy_runs = asyncio.run(measure(args.chain, n, args.rounds, args.quiet_wait_s))
    quiet = [round_record(r) for r in quiet_runs]
    busy = [round_record(r) for r in busy_runs]
    where = f"on the CPU ({os.cpu_count()} cores), {args.rounds} rounds each; load average {load_before[0]:.1f}"
    print(f"{args.chain} at N={format_size(n)} {where}")
    failures = 0
    intervals: dict[str, tuple[float, float] | None] = {}
    for which in TIMES:
        figures = [r[which] for r in quiet if r[which]["stated"]]
        intervals[which] = (min(f["low"] for f in figures), max(f["high"] for f in figures)) if figures else None
    for name, records in (("quiet", quiet), ("busy (1 core spinning)", busy)):
        print(f"  {name}:")
        for number, record in enumerate(records, 1):
            cells = []
            for which in TIMES:
                figure = record[which]
                interval = intervals[which]
                outside = (
                    name != "quiet"
                    and figure["stated"]
                    and (interval is None or not interval[0] <= figure["value"] <= interval[1])
                )
                failures += outside
                cells.append(f"{which} {figure['said']}" + ("  <- OUTSIDE, stated as a figure" if outside else ""))
            mark = " [busy]" if record["busy"] else ""
            print(f"    {number:2}{mark:7} " + "   ".join(cells))
    for which in TIMES:
        interval = intervals[which]
        text = f"{format_ratio(interval[0])}-{format_ratio(interval[1])}x" if interval else "none stated"
        print(f"  quiet interval, {which}: {text}")
    if not any(intervals.values()):
        print(
            "  no quiet round stated a figure (each was unclear, for the reason beside it): "
            "run again on an idle machine"
        )
    unclear = sum(1 for r in busy for which in TIMES if not r[which]["stated"])
    print(
        f"busy rounds: {unclear} of {2 * len(busy)} ratios said unclear; {failures} stated outside the quiet interval"
    )
    if args.out:
        report = {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "chain": args.chain,
            "n": n,
            "rounds": args.rounds,
            "quiet_interval": intervals,
            "quiet": quiet,
            "busy": busy,
            "failures": failures,
        }
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
