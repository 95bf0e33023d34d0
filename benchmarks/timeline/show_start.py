"""Where a launch's time goes until the first eager rows: every process's events, in ms after the app's start.

    python benchmarks/timeline/show_start.py TIMELINE.tsv

Reads the file that ``sitecustomize.py`` (in this folder) writes during a ``tui_latency.py --only
frame`` run: the app is the process started as ``python -m tui CHAIN``, its workers those started
as ``python -m probes.engine.worker`` (both read ``-m`` as their first argument at start-up; the
worker's bytecode filler runs ``-m`` on a path).
"""

from __future__ import annotations

import sys

from show import read

START_EVENTS = ("start", "torch imported", "ready sent", "ready read", "send", "handle>", "emit", "recv", "seen")


def main(argv: list[str]) -> int:
    events = read(argv[0])
    launches = [
        (t, detail)
        for t, _, event, detail in events
        if event == "start" and detail.startswith("-m ") and not detail.endswith(".py")
    ]  # not the bytecode filler
    for number, (begin, command) in enumerate(launches):
        end = next((t for t, _, event, detail in events if event == "seen" and t > begin and "eager" in detail), None)
        if end is None:
            continue
        print(f"== launch {number}: {command}")
        for t, pid, event, detail in events:
            if begin <= t <= end and event in START_EVENTS:
                print(f"{(t - begin) * 1e3:8.0f} ms  pid {pid:<7} {event:15} {detail[:70]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
