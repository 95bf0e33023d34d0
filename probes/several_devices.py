"""``kernel-tui profile --device A,B``: one chain measured on several devices and boxes at once.

Two ways, one entry point (``measure_several``): side by side, every entry measuring the whole
sweep, each entry's tables under its name and a side-by-side summary; or ``--spread``, the sweep's
(size, mode) pairs shared out among the entries (``probes.link.spread.share_out``), measured in parallel and merged
back in size and mode order into one result set, each measurement saying which entry measured it.
Each entry is a worker of its own (``probes.profile_run.measure_in_worker``), on this machine or on
a ``--host`` box; one that cannot be reached or drops is one line naming it, the others go on.
"""

from __future__ import annotations

import asyncio
import datetime
import io
import json
import platform
import sys
from dataclasses import dataclass

from rich.console import Console

from probes.link.protocol import Measurement, ProfileReport, ProfileRequest
from probes.link.report_tables import SIDE_BY_SIDE_LEGEND, plain, print_size, print_sweep, side_by_side_table
from probes.link.settings import DeviceEntry
from probes.link.spread import Pair, not_measured_text, share_out, share_requests
from probes.link.summary import sizes_measured
from probes.profile_run import (
    EXIT_FAILED,
    EXIT_MEASURED,
    ProfileRun,
    compute_peaks,
    failure_line,
    inert_json,
    measure_in_worker,
)


def measure_several(
    requests: list[ProfileRequest],
    entries: list[DeviceEntry],
    hosts: dict[str, str],
    *,
    spread: bool,
    as_json: bool,
    console: Console,
    err: Console,
) -> int:
    """Measure ``requests`` (one per entry, alike but for the device) side by side, or spread
    (``spread``); print the tables (or one JSON document) and return the exit status: 1 when an
    entry could not be reached, dropped, or any pair was not measured, else 0."""
    job = _Job(requests, entries, hosts, as_json, console, err)
    return _measure_spread(job) if spread else _measure_side_by_side(job)


@dataclass(frozen=True)
class _Job:
    """What ``measure_several`` was asked, as its two ways read it."""

    requests: list[ProfileRequest]
    entries: list[DeviceEntry]
    hosts: dict[str, str]
    as_json: bool
    console: Console
    err: Console


def _command(entry: DeviceEntry, hosts: dict[str, str]) -> str | None:
    return hosts[entry.host] if entry.host else None


def _measure_all(shares: list[list[ProfileRun]], entries: list[DeviceEntry], hosts: dict[str, str]) -> None:
    """Each entry's runs in its own worker, the entries in parallel; an entry with none starts none."""

    async def measure_all() -> None:
        measuring = [
            measure_in_worker(runs, _command(entry, hosts)) for runs, entry in zip(shares, entries, strict=True) if runs
        ]
        await asyncio.gather(*measuring)

    asyncio.run(measure_all())


def _held_console(console: Console) -> Console:
    """A console that holds one entry's tables until every entry is measured, laid out as
    ``console`` lays them out: the entries measure in parallel, their tables print in order."""
    return Console(
        file=io.StringIO(),
        width=console.width,
        soft_wrap=False,
        force_terminal=console.is_terminal,
        color_system=console.color_system,  # type: ignore[arg-type]  # the names it accepts
    )


def _measure_side_by_side(job: _Job) -> int:
    """Every entry measures the whole sweep; then each entry's tables under a heading naming it,
    and the side-by-side summary (or one JSON document of the entries' reports)."""
    console, entries = job.console, job.entries
    runs = [
        ProfileRun(request, _held_console(console), job.err, job.as_json, entry)
        for request, entry in zip(job.requests, entries, strict=True)
    ]
    _measure_all([[run] for run in runs], entries, job.hosts)
    for measured in runs:
        measured.finish()
    if job.as_json:
        document = {"reports": [_tagged_report(measured) for measured in runs]}
        sys.stdout.write(inert_json(json.dumps(document, indent=1)) + "\n")
    else:
        for measured in runs:
            label = measured.device_label() or "not reached"
            console.print(plain(f"{measured.name}: {label}", "bold underline"), "\n", highlight=False, sep="")
            held = measured.console.file
            assert isinstance(held, io.StringIO)
            console.file.write(held.getvalue())
        named = [(str(measured.name), measured.results) for measured in runs if measured.results]
        if len(named) > 1:
            console.print(side_by_side_table(named))
            console.print(plain(SIDE_BY_SIDE_LEGEND.format(first=named[0][0]), "dim"), highlight=False, soft_wrap=True)
    return EXIT_FAILED if any(measured.exit_code() != EXIT_MEASURED for measured in runs) else EXIT_MEASURED


def _tagged_report(measured: ProfileRun) -> dict[str, object]:
    """One entry's report (as a single ``--json`` run prints it) under the host and device that
    name the entry."""
    assert measured.entry is not None
    report: dict[str, object] = json.loads(measured.report().to_json())
    return {"host": measured.entry.host, "device": measured.entry.device, "report": report}


def _measure_spread(job: _Job) -> int:
    """The sweep's pairs shared out, measured in parallel, printed as one sweep; an entry that
    could not measure its share is one line naming it and the pairs it leaves unmeasured."""
    whole, entries, err = job.requests[0], job.entries, job.err
    pairs = [(size, mode) for size in whole.sizes for mode in whole.modes]
    shares = share_out(pairs, len(entries))
    runs_by_entry = [
        [ProfileRun(part, job.console, err, True, entry) for part in share_requests(request, share, str(index))]
        for index, (request, share, entry) in enumerate(zip(job.requests, shares, entries, strict=True))
    ]
    _measure_all(runs_by_entry, entries, job.hosts)
    missing: list[Pair] = []
    for share, entry_runs, entry in zip(shares, runs_by_entry, entries, strict=True):
        left = _not_measured(share, entry_runs)
        if left:
            err.print(failure_line(None, None, not_measured_text(left), str(entry)), highlight=False, soft_wrap=True)
        missing += left
    runs = [run for entry_runs in runs_by_entry for run in entry_runs]
    results = sorted((m for run in runs for m in run.results), key=lambda m: pairs.index((m.size, m.mode)))
    failed = [failure for run in runs for failure in run.failures]
    if job.as_json:
        sys.stdout.write(inert_json(_spread_report(runs_by_entry, entries, results).to_json()) + "\n")
    else:
        _print_spread(job.console, whole, runs, results, failed_sizes={f.size for f in failed if f.size is not None})
    return EXIT_FAILED if failed or missing else EXIT_MEASURED


def _not_measured(share: list[Pair], runs: list[ProfileRun]) -> list[Pair]:
    """The pairs of an entry's share that neither came back measured nor failed on their own: all
    that is left when the entry could not be reached or dropped."""
    measured = {(m.size, m.mode) for run in runs for m in run.results}
    failed = {(f.size, f.mode) for run in runs for f in run.failures if f.size is not None}
    return [pair for pair in share if pair not in measured and not failed & {pair, (pair[0], None)}]


def _spread_report(
    runs_by_entry: list[list[ProfileRun]], entries: list[DeviceEntry], results: list[Measurement]
) -> ProfileReport:
    """The merged results as one report, as a single device's ``--json`` prints it: ``device``
    names the entries, ``devices`` each one that answered, and each measurement its own (``host``
    and ``device``)."""
    runs = [run for entry_runs in runs_by_entry for run in entry_runs]
    ready = next((run.ready for run in runs if run.ready is not None), None)
    identities = [identity for entry_runs in runs_by_entry if entry_runs and (identity := entry_runs[0].identity())]
    labels = dict.fromkeys(label for run in runs if (label := run.device_label()))
    return ProfileReport(
        device=",".join(str(entry) for entry in entries),
        device_label=", ".join(labels),
        torch=ready.torch_version if ready else "",
        date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        results=results,
        failures=[failure for run in runs for failure in run.failures],
        host=platform.node(),
        peak_gbps=next((m.peak_gbps for m in results if m.peak_gbps), None),
        compute_peaks_tflops=compute_peaks(results),
        devices=identities,
    )


def _print_spread(
    console: Console, whole: ProfileRequest, runs: list[ProfileRun], results: list[Measurement], failed_sizes: set[int]
) -> None:
    """One sweep's tables, as one device's run prints them, each mode saying which entry measured it."""
    on = dict.fromkeys(f"{run.name} ({run.device_label() or 'not reached'})" for run in runs)
    console.print(plain(f"spread over {', '.join(on)}", "bold"), "\n", highlight=False, sep="")
    by_size: dict[int, list[Measurement]] = {}
    for m in results:
        by_size.setdefault(m.size, []).append(m)
    for batch in by_size.values():
        print_size(console, batch, measured_on=True)
    complete = [size for size in whole.sizes if len(by_size.get(size, [])) == len(whole.modes)]
    if len(by_size) > 1:
        missing = [size for size in whole.sizes if size not in complete and size not in failed_sizes]
        print_sweep(console, results, complete=not missing, measured_on=True)
    if len(whole.sizes) > 1 and len(complete) < len(whole.sizes):
        console.print(plain(sizes_measured(whole.sizes, complete, failed_sizes)))
