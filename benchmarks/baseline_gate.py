"""The baseline gate against its own chain from another process: does it ever cry WORSE?

    python3 benchmarks/baseline_gate.py [--device cuda] [--tries 10] [--sizes 1e2,1e8]
        [--chain '(a + b).relu()'] [--out FILE]

Each try is what CI does with ``--baseline``: one ``kernel-tui profile --json`` process saves a
report, and a second, new process measures the same chain and settings against it with
``--fail-on wall_time:10% --fail-on device_time:5%``. The same chain must never exit 1: the
count of exits of 1 is the figure (0 of 10 is the target). Then the gate's other side: the last
report with every time made 30% slower, against the report it came from, must exit 1.

Printed per try: the exit status and the largest change of each time metric with its verdict
(``not judged`` for a host-bound wall time or a busy machine, see ``probes/link/baseline.py``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GATE = ("--fail-on", "wall_time:10%", "--fail-on", "device_time:5%")
SLOWER = 1.3
DELTA_LINE = re.compile(
    r"^(device_time|wall_time) (\S+) N=([\d,]+): .*?, ([+-][\d.]+)%(?: \(noise [^)]*\))?: "
    r"(WORSE|better|no change|not judged)"
)


def profile(*argv: str) -> subprocess.CompletedProcess[str]:
    """``kernel-tui profile ARGV`` in a new process (the project's own Python and tree)."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "tui", "profile", *argv], capture_output=True, text=True, timeout=900, cwd=ROOT, env=env
    )


def deltas(text: str) -> list[dict[str, Any]]:
    """The time deltas the gate printed: metric, mode, size, change (%), verdict."""
    found = []
    for line in text.splitlines():
        match = DELTA_LINE.match(line.strip())
        if match:
            metric, mode, size, change, verdict = match.groups()
            found.append(
                {
                    "metric": metric,
                    "mode": mode,
                    "size": int(size.replace(",", "")),
                    "change_pct": float(change),
                    "verdict": verdict,
                }
            )
    return found


def slower_report(report: Path, factor: float, out: Path) -> None:
    """``report`` with every time and its spread ``factor`` times longer."""
    data = json.loads(report.read_text())
    for result in data["results"]:
        for key in ("device_time_us", "wall_time_us"):
            if result.get(key) is not None:
                result[key] *= factor
        for key in ("device_time_us_iqr", "wall_time_us_iqr"):
            if result.get(key):
                result[key] = [x * factor for x in result[key]]
    out.write_text(json.dumps(data))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--sizes", default="1e2,1e8")
    parser.add_argument("--chain", default="(a + b).relu()")
    parser.add_argument("--out", help="write the figures as JSON here too")
    args = parser.parse_args()
    settings = [args.chain, "--device", args.device, "--sizes", args.sizes]

    print(f"{args.chain} at {args.sizes} on {args.device}, {args.tries} tries: a report, then a new process against it")
    print(f"gate: {' '.join(GATE)}")
    tries = []
    with tempfile.TemporaryDirectory(prefix="kt-gate-") as folder:
        report = Path(folder) / "report.json"
        for number in range(1, args.tries + 1):
            saved = profile(*settings, "--json")
            if saved.returncode != 0:
                print(f"  try {number}: the report could not be made: {saved.stderr.strip()[-300:]}")
                return 2
            report.write_text(saved.stdout)
            again = profile(*settings, "--baseline", str(report), *GATE)
            found = deltas(again.stdout)
            tries.append({"exit": again.returncode, "deltas": found, "regressions": again.stderr.strip().splitlines()})
            worst = {}
            for metric in ("device_time", "wall_time"):
                mine = [d for d in found if d["metric"] == metric]
                if mine:
                    top = max(mine, key=lambda d: abs(d["change_pct"]))
                    worst[metric] = f"{top['mode']} N={top['size']:,} {top['change_pct']:+.1f}% {top['verdict']}"
            print(f"  try {number:2}: exit {again.returncode}   " + "   ".join(f"{k}: {v}" for k, v in worst.items()))
            for line in again.stderr.strip().splitlines():
                print(f"           {line}")
        scaled = Path(folder) / "slower.json"
        slower_report(report, SLOWER, scaled)
        caught = profile("--from", str(scaled), "--baseline", str(report), *GATE)
    exits = sum(1 for t in tries if t["exit"] == 1)
    print(f"same chain, another process: {exits} of {args.tries} tries exited 1 (target: 0)")
    print(f"the last report made {SLOWER - 1:.0%} slower: exit {caught.returncode} (target: 1)")
    if args.out:
        record = {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "chain": args.chain,
            "device": args.device,
            "sizes": args.sizes,
            "gate": list(GATE),
            "tries": tries,
            "exits_of_1": exits,
            "slower_exit": caught.returncode,
            "slower_regressions": caught.stderr.strip().splitlines(),
        }
        Path(args.out).write_text(json.dumps(record, indent=1))
    return 0 if exits == 0 and caught.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
