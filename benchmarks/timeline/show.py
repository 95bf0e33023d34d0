"""Where each edit's time went: the phases from the last key to the eager rows on screen (or,
with ``--compiled``, to the compiled rows).

    python benchmarks/timeline/show.py TIMELINE.tsv [-v] [--compiled]

Reads the file that ``sitecustomize.py`` (in this folder) writes when ``TIMELINE_FILE`` names it
and the folder is on PYTHONPATH of a ``tui_latency.py --only edit`` run: one line per event, in
every process (the benchmark, the app, its workers), on the one monotonic clock. Prints, per edit
whose eager rows came from a worker, ms from the last key to each phase's end, and the medians;
``-v`` also prints every event of each edit.
"""

from __future__ import annotations

import statistics
import sys

PHASES = ("edited", "sent", "worker start", "worker result", "app got it", "drawn", "seen")
COMPILED_PHASES = (
    "sent",
    "worker start",
    "compiling",
    "first call",
    "compiled",
    "profiled",
    "rows out",
    "app got them",
    "drawn",
    "seen",
    "whole out",
    "gc ms",
)
"""A new chain's compiled rows: the request out, the compile worker's start on it, its compile's
start, the compile and first call's end (its own clock: ``compile_time_s``), the compile's end
(warm-up calls and the generated code read), the profiled reps, bytes and FLOPs done, the early
rows (``ProfileRequest.early_rows``) written, read, drawn and seen, and the whole measurement (with
its wall time) written; last, the ms of garbage collections (1 ms or more, any process) between
the key and the rows seen."""


Events = list[tuple[float, int, str, str]]
"""(time, pid, event, detail), in time order."""


def read(path: str) -> Events:
    with open(path) as lines:
        rows = [line.rstrip("\n").split("\t") for line in lines]
    return sorted((float(t), int(pid), event, detail) for t, pid, event, detail in rows)


def first_event(events: Events, event: str, contains: str, after: float) -> float | None:
    """When the first ``event`` whose detail has ``contains`` came, at ``after`` or later."""
    return next((t for t, _, e, d in events if e == event and contains in d and t >= after), None)


def drawn_by(events: Events, got: float, seen: float) -> float:
    """The last frame written between the app getting the rows and the benchmark seeing them."""
    return max((t for t, _, e, _ in events if e == "display" and got <= t <= seen), default=seen)


def phases(events: Events, key: float) -> dict[str, float] | None:
    """ms after ``key`` at which each phase ended; None for an edit answered from the app's cache."""

    def first(event: str, contains: str = "", after: float = key) -> float | None:
        return first_event(events, event, contains, after)

    edited = first("edited")
    sent = first("send", "['eager'")
    if edited is None or sent is None:
        return None
    start = first("handle>", "eager", sent)
    result = first("emit", "MeasurementResult eager", sent)
    got = first("recv", "MeasurementResult eager", sent)
    seen = first("seen")
    if None in (start, result, got, seen):
        return None
    ends = (edited, sent, start, result, got, drawn_by(events, got, seen), seen)
    return {name: 1000 * (end - key) for name, end in zip(PHASES, ends, strict=True)}


def compiled_phases(events: Events, key: float) -> dict[str, float] | None:
    """ms after ``key`` at which each phase of a new chain's compiled rows ended; None for rows
    answered from the app's cache."""

    def first(event: str, contains: str = "", after: float = key) -> float | None:
        return first_event(events, event, contains, after)

    sent = first("send", "'compiled'")
    start = first("handle>", "compiled", sent or key)
    compiling = first("emit", "Progress  compiling", start or key)
    compile_began = first("compile>", "", start or key)
    compiled = first("compile<", "", compile_began or key)
    profiled = first("profile<", "", compiled or key)
    out = first("emit", "MeasurementResult compiled early", start or key)
    got = first("recv", "MeasurementResult compiled early", out or key)
    seen = first("seen", "compiled rows")
    if None in (sent, start, compiling, compile_began, compiled, profiled, out, got, seen):
        return None
    first_call = compile_began + next(float(d) for t, _, e, d in events if e == "compile<" and t == compiled) / 1000
    whole = first("emit", "MeasurementResult compiled ", got)
    whole_out = whole if whole is not None else float("nan")
    ends = (
        sent,
        start,
        compiling,
        first_call,
        compiled,
        profiled,
        out,
        got,
        drawn_by(events, got, seen),
        seen,
        whole_out,
    )
    found = {name: 1000 * (end - key) for name, end in zip(COMPILED_PHASES, ends, strict=True)}
    found["gc ms"] = sum(float(d.split()[1]) for t, _, e, d in events if e == "gc" and key <= t <= seen)
    return found


def main(argv: list[str]) -> int:
    events = read(argv[0])
    verbose = "-v" in argv
    compiled = "--compiled" in argv
    names, measure, seen_what = (
        (COMPILED_PHASES, compiled_phases, "compiled rows") if compiled else (PHASES, phases, "")
    )
    keys = [float(d) for _, _, e, d in events if e == "lastkey"]
    table: list[dict[str, float]] = []
    print("ms after the last key: " + " | ".join(names))
    for key in keys:
        seen = next((t for t, _, e, d in events if e == "seen" and seen_what in d and t > key), None)
        if seen is None:
            continue
        window = [row for row in events if key - 0.001 <= row[0] <= seen + 0.1]
        found = measure(window, key)
        if found is not None:
            table.append(found)
            print("  ".join(f"{found[name]:7.1f}" for name in names))
        if verbose:
            for t, pid, event, detail in window:
                print(f"      {1000 * (t - key):8.1f}  {pid:>7}  {event:14} {detail[:60]}")
    if table:
        print("median " + "  ".join(f"{statistics.median(row[name] for row in table):7.1f}" for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
