"""One request of ``kernel-tui profile``: its events printed as they arrive, and the worker that
measures it (``measure_in_worker``); the exit statuses the command ends with.

Used by the command for one device (``probes/cli.py``) and for several (``probes/several_devices.py``).
Never imports torch: the worker measures.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import platform
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from probes.link.protocol import (
    ChainErrorInfo,
    DeviceIdentity,
    Event,
    Measurement,
    MeasurementResult,
    ProfileReport,
    ProfileRequest,
    Progress,
    RequestFailed,
    WorkerReady,
)
from probes.link.report_tables import plain, print_size, print_sweep
from probes.link.safe_text import inert_line
from probes.link.settings import DeviceEntry
from probes.link.summary import SHORT_DTYPE_NAMES, format_size, sizes_measured

if TYPE_CHECKING:
    from probes.link.client import WorkerClient

EXIT_MEASURED = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNJUDGED = 3
EXIT_INTERRUPTED = 130
EXIT_STATUSES = (
    (
        EXIT_MEASURED,
        "every requested size and mode was measured and every --fail-on metric judged no worse "
        "(or the report was printed); also when the reader of the output went away (| head)",
    ),
    (EXIT_FAILED, "a measurement failed (one line each on stderr), or a --fail-on metric regressed"),
    (
        EXIT_BAD_INPUT,
        "bad usage or input: an unknown option or value, a chain that does not parse or is refused, "
        "a report that cannot be read (one line on stderr)",
    ),
    (
        EXIT_UNJUDGED,
        "could not judge: a --fail-on metric had no verdict (a busy machine after two more "
        "measurements, a time the host decides, a figure unknown on either side), and nothing regressed",
    ),
    (EXIT_INTERRUPTED, "interrupted (ctrl+c)"),
)
"""The one table of exit statuses: ``--help`` prints it, README's table repeats it (a test keeps
the two alike)."""
USER_ERROR_KINDS = ("syntax", "rejected", "input")

_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def inert_json(text: str) -> str:
    """JSON text with each character the terminal sanitiser would show as an escape (DEL, C1
    controls, bidirectional overrides and marks) written as a ``\\uXXXX`` escape: the same values
    when parsed, inert on a terminal. Valid JSON holds no raw C0 control inside a string, and
    outside strings only its whitespace."""
    return _NON_ASCII.sub(lambda m: m[0] if inert_line(m[0]) == m[0] else f"\\u{ord(m[0]):04x}", text)


def failure_line(mode: str | None, size: int | None, message: str, name: str | None = None) -> Text:
    """``error (compiled N=1,000): why``: one line, whatever the message held. With several
    devices it starts with the entry's ``name``, and a failure of the whole entry (a box that
    cannot be reached) is ``name: why``."""
    where = " ".join(x for x in (mode or "", f"N={format_size(size)}" if size else "") if x)
    line = Text(f"{inert_line(name)}: " if name else "", style="bold")
    if where or not name:
        line.append("error", style="red")
        line.append(f" ({where})" if where else "")
        line.append(": ")
    line.append(inert_line(message))
    return line


def compute_peaks(results: list[Measurement]) -> dict[str, float]:
    """The compute peak each dtype's roofline figures used, as the report records them."""
    found: dict[str, float] = {}
    for m in results:
        counted = {op for row in m.kernels if row.flops for op in row.ops}
        dtype = next((op.dtype for op in m.ops if op.op in counted), None)
        if dtype and m.compute_peak_tflops:
            found.setdefault(SHORT_DTYPE_NAMES.get(dtype, dtype), m.compute_peak_tflops)
    return found


def is_usage_error(event: RequestFailed) -> bool:
    """The request as a whole was refused for bad input (e.g. a device this machine lacks)."""
    return event.size is None and event.mode is None and event.error.kind in USER_ERROR_KINDS


class ProfileRun:
    """The events of one request, printed as they arrive."""

    def __init__(
        self,
        request: ProfileRequest,
        console: Console,
        err: Console,
        as_json: bool,
        entry: DeviceEntry | None = None,
        host: str | None = None,
    ) -> None:
        """``entry``: the device list's entry this run measures, when there are several (its
        lines on stderr name it; no spinner, which the runs would share). ``host``: the ``--host``
        box the worker runs on (``entry``'s when None), which each measurement is tagged with.
        ``as_json``: no tables; the report goes out as JSON instead (``finish`` prints it for one
        device, the caller one document for several)."""
        self.request = request
        self.console = console
        self.err = err
        self.as_json = as_json
        self.entry = entry
        self.host = host if host is not None else entry.host if entry is not None else None
        self.name = str(entry) if entry is not None else None
        self.results: list[Measurement] = []
        self.failures: list[RequestFailed] = []
        self.by_size: dict[int, list[Measurement]] = {}
        self.ready: WorkerReady | None = None
        shows_status = err.is_terminal and not as_json and entry is None
        self.status = err.status("starting the worker") if shows_status else None
        self.said_wait = False
        """Whether a wait for the device (held by another process) was said."""

    def on_event(self, event: Event) -> None:
        if isinstance(event, Progress) and event.stage == "waiting" and not self.said_wait:
            self.said_wait = True  # once: a sweep may wait at each size
            named = f"{self.name}: " if self.name else ""
            self.err.print(Text(f"{named}{inert_line(event.message)}; ctrl+c to stop"), highlight=False, soft_wrap=True)
        if isinstance(event, Progress) and self.status is not None:
            self.status.update(Text(f"{inert_line(event.message)} ({event.step}/{event.total})"))
        elif isinstance(event, MeasurementResult):
            m = dataclasses.replace(event.measurement, host=self.host)
            same = [i for i, r in enumerate(self.results) if (r.size, r.mode) == (m.size, m.mode)]
            if same:  # measured again: the new reading replaces the old, printed once all are in
                self.results[same[0]] = m
                self.by_size[m.size] = [m if r.mode == m.mode else r for r in self.by_size[m.size]]
                return
            self.results.append(m)
            self.by_size.setdefault(m.size, []).append(m)
            if not self.as_json and len(self.by_size[m.size]) == len(self.request.modes):
                print_size(self.console, self.by_size[m.size])
        elif isinstance(event, RequestFailed):
            self.failures.append(event)
            if self.name or not is_usage_error(event):  # alone, that one becomes the usage line
                line = failure_line(event.mode, event.size, event.error.located(), self.name)
                self.err.print(line, highlight=False, soft_wrap=True)

    def measured_sizes(self) -> list[int]:
        """The sizes every mode asked for came back measured at."""
        return [size for size in self.request.sizes if len(self.by_size.get(size, [])) == len(self.request.modes)]

    def missing_sizes(self) -> list[int]:
        """The sizes neither measured nor failed on their own (a run cut short): while any is
        missing, no verdict is drawn from the rest."""
        failed = {f.size for f in self.failures if f.size is not None}
        return [n for n in self.request.sizes if n not in failed and n not in self.measured_sizes()]

    def unaccounted(self) -> list[tuple[int, str]]:
        """The (size, mode) pairs asked for that neither came back measured nor failed."""
        measured = {(m.size, m.mode) for m in self.results}
        failed = {(f.size, f.mode) for f in self.failures}
        return [
            (size, mode)
            for size in self.request.sizes
            for mode in self.request.modes
            if (size, mode) not in measured and not failed & {(size, mode), (size, None), (None, mode), (None, None)}
        ]

    def finish(self) -> None:
        for size, mode in self.unaccounted():
            self.err.print(failure_line(mode, size, "not measured", self.name), highlight=False, soft_wrap=True)
        if not self.as_json:
            for size in sorted(self.by_size):
                if len(self.by_size[size]) != len(self.request.modes):
                    print_size(self.console, self.by_size[size])
            if len(self.by_size) > 1:
                print_sweep(self.console, self.results, complete=not self.missing_sizes())
            if len(self.request.sizes) > 1 and len(self.measured_sizes()) < len(self.request.sizes):
                failed = {f.size for f in self.failures if f.size is not None}
                self.console.print(plain(sizes_measured(self.request.sizes, self.measured_sizes(), failed)))
            return
        if self.entry is None:  # several entries make one document of their reports
            sys.stdout.write(inert_json(self.report().to_json()) + "\n")

    def device(self) -> str:
        """The device measured: the worker's name for it (``cuda:0`` for ``cuda``) once known."""
        return self.results[0].device if self.results else (self.request.device or "")

    def device_label(self) -> str:
        """What people call the device (``NVIDIA H200``), from the worker's ready message."""
        device = self.device()
        return next((d.label for d in self.ready.devices if d.name == device), "") if self.ready else ""

    def identity(self) -> DeviceIdentity | None:
        """The device that measured this run (``ProfileReport.devices``), once its worker answered."""
        return DeviceIdentity.of(self.host, self.device(), self.ready) if self.ready else None

    def report(self) -> ProfileReport:
        return ProfileReport(
            device=self.device(),
            device_label=self.device_label(),
            torch=self.ready.torch_version if self.ready else "",
            date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            results=self.results,
            failures=self.failures,
            host=self.host or platform.node(),
            peak_gbps=next((m.peak_gbps for m in self.results if m.peak_gbps), None),
            compute_peaks_tflops=compute_peaks(self.results),
            devices=[identity] if (identity := self.identity()) else [],
        )

    def exit_code(self) -> int:
        """2 for a request refused as a whole for bad input, 1 when any size or mode was not
        measured, else 0."""
        if any(is_usage_error(f) for f in self.failures):
            return EXIT_BAD_INPUT
        return EXIT_FAILED if self.failures or self.unaccounted() else EXIT_MEASURED


REMEASURES = 2
"""How many more times a reading a busy machine spoiled for ``--fail-on`` is measured."""
REMEASURE_WAIT_S = 5.0
"""How long the machine is given to quiet down before each of those."""

Spoiled = Callable[[list[Measurement]], list[tuple[int, str]]]
"""The (size, mode) readings that a gate could not judge because the machine was busy."""


async def measure_in_worker(runs: list[ProfileRun], command: str | None = None, spoiled: Spoiled | None = None) -> None:
    """Measure each run's request in turn in one worker started by ``command`` (a ``--host``'s;
    None: the local worker), stopping at a request that fails as a whole (a worker that cannot
    start or drops: what is left is not measured); then, while ``spoiled`` names readings a busy
    machine kept a gate from judging, wait and measure those again (``REMEASURES`` times at most),
    saying so."""
    from probes.link.client import WorkerClient

    client = WorkerClient(command)
    status = runs[0].status
    try:
        if status is not None:
            status.start()
        try:
            ready = await client.start()
        except RuntimeError as exc:
            runs[0].on_event(RequestFailed(runs[0].request.id, ChainErrorInfo("worker", str(exc))))
            return
        for run in runs:
            run.ready = ready
            async for event in client.request(run.request):
                run.on_event(event)
            if any(f.size is None and f.mode is None for f in run.failures):
                return
            if spoiled is not None:
                await _measure_spoiled_again(client, run, spoiled)
    finally:
        if status is not None:
            status.stop()
        await client.close()


async def _measure_spoiled_again(client: WorkerClient, run: ProfileRun, spoiled: Spoiled) -> None:
    for attempt in range(1, REMEASURES + 1):
        busy = spoiled(run.results)
        if not busy:
            break
        where = ", ".join(f"{mode} N={format_size(size)}" for size, mode in busy)
        run.err.print(
            plain(
                f"the machine was busy while {where} was measured, so --fail-on cannot judge it: "
                f"measuring again in {REMEASURE_WAIT_S:g} s ({attempt} of {REMEASURES})",
                "yellow",
            ),
            highlight=False,
            soft_wrap=True,
        )
        await asyncio.sleep(REMEASURE_WAIT_S)
        sizes = sorted({size for size, _ in busy})
        modes = [mode for mode in run.request.modes if mode in {m for _, m in busy}]
        again = dataclasses.replace(run.request, id=f"{run.request.id}-again-{attempt}", sizes=sizes, modes=modes)
        async for event in client.request(again):
            run.on_event(event)
        if not run.as_json:
            for size in sizes:
                print_size(run.console, run.by_size[size])
