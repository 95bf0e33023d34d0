"""``kernel-tui profile EXPR``: the engine's results as rich tables (or JSON), without the TUI.

For scripts, CI and non-interactive SSH. It measures in a worker child through
``probes.link.client.WorkerClient``, exactly as the app does: the same figures, and a poisoned CUDA
context, a crash or a flood of device printf is one line here, never a traceback. This process
never imports torch. The exit status is in ``EPILOG`` (and ``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import io
import json
import os
import platform
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.text import Text

from probes.chain.command_line import chain_text
from probes.link.baseline import METRICS, compare, gate, parse_fail_on
from probes.link.help_text import HelpFormatter, SafeParser
from probes.link.protocol import (
    ChainErrorInfo,
    Event,
    Measurement,
    MeasurementResult,
    ProfileReport,
    ProfileRequest,
    Progress,
    ProtocolError,
    RequestFailed,
    WorkerReady,
    read_report,
)
from probes.link.report_tables import (
    SIDE_BY_SIDE_LEGEND,
    output_console,
    plain,
    print_size,
    print_sweep,
    side_by_side_table,
)
from probes.link.safe_text import inert_line
from probes.link.settings import (
    MAX_DEVICES,
    DeviceEntry,
    SettingError,
    Settings,
    add_flags,
    add_host_flag,
    check_hosts,
    flags_given,
    parse_device_entries,
)
from probes.link.source_spec import parse_source_spec
from probes.link.state_files import UnusableDir, user_cache_dir
from probes.link.summary import SHORT_DTYPE_NAMES, format_size, sizes_measured

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
PROFILE_SETTINGS = ("sizes", "modes", "device", "dtype", "reps", "call_budget_s", "grad")
"""The settings ``kernel-tui profile`` takes flags for (``probes.link.settings.FLAGS``)."""
PER_DEVICE_SETTINGS = tuple(name for name in PROFILE_SETTINGS if name != "device")
"""The settings every entry of a device list is measured with alike."""
PROFILE_NOTES = {
    "device": f"or a comma list of at most {MAX_DEVICES} [HOST:]DEVICE, e.g. cpu,gpu2:cuda (HOST from --host), "
    "each measured by its own worker in parallel, then compared side by side; --from, --baseline and "
    "--fail-on take one"
}


def _exit_status_text() -> str:
    lines = []
    for code, meaning in EXIT_STATUSES:
        wrapped = textwrap.wrap(meaning, 92)
        lines.append(f"  {code:<5}{wrapped[0]}")
        lines.extend(f"       {line}" for line in wrapped[1:])
    return "\n".join(lines)


EPILOG = f"""\
output:
  Tables fit a terminal; piped or redirected (| cat, > log, CI) they are printed at full width,
  every kernel name whole. No line ends in spaces. --json prints one JSON document instead.

exit status:
{_exit_status_text()}
"""


class UsageError(Exception):
    """Bad command-line input: reported as one line on stderr, exit 2."""


class _Parser(SafeParser):
    """argparse whose errors are one line (no usage block): a UsageError."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kernel-tui profile",
        description="Measure the kernels an op chain launches, eager vs torch.compile, over tensor sizes.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "chain",
        nargs="?",
        help="the op chain, e.g. '(a + b).relu()'; use '\\n' or ';' for several lines; or FILE.py:NAME, "
        "a function or nn.Module of your own file (its inputs declared with --input)",
    )
    add_flags(parser, PROFILE_SETTINGS[:4], PROFILE_NOTES)
    add_host_flag(parser)
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="DECL",
        help="declare an input, e.g. 'x: [N, 4096] bf16' (repeatable)",
    )
    add_flags(parser, PROFILE_SETTINGS[4:])
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument(
        "--from",
        dest="report",
        type=Path,
        metavar="REPORT",
        help="print the tables of a report saved with --json instead of measuring",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="REPORT",
        help="print the deltas against a report saved with --json (noise-aware)",
    )
    parser.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="METRIC:PCT",
        help=f"with --baseline: exit 1 when METRIC ({', '.join(METRICS)}) regresses by more than PCT "
        "beyond its noise, 3 when it cannot be judged, e.g. device_time:5%%",
    )
    return parser


_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def inert_json(text: str) -> str:
    """JSON text with each character the terminal sanitiser would show as an escape (DEL, C1
    controls, bidirectional overrides and marks) written as a ``\\uXXXX`` escape: the same values
    when parsed, inert on a terminal. Valid JSON holds no raw C0 control inside a string, and
    outside strings only its whitespace."""
    return _NON_ASCII.sub(lambda m: m[0] if inert_line(m[0]) == m[0] else f"\\u{ord(m[0]):04x}", text)


def _no_cuda_here() -> bool:
    """True when this machine has no NVIDIA driver at all (so ``--device cuda`` cannot work),
    known without importing torch."""
    return not (Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists())


def device_entries(args: argparse.Namespace) -> tuple[list[DeviceEntry], dict[str, str]]:
    """The ``--device`` entries (one, the worker's default, when not given) and the ``--host``
    commands by name, each entry's host among them (UsageError otherwise)."""
    try:
        entries = parse_device_entries(args.device) if args.device is not None else [DeviceEntry(None, None)]
    except SettingError as exc:
        raise UsageError(f"--device: {exc}") from None
    try:
        return entries, check_hosts(entries, args.host)
    except SettingError as exc:
        raise UsageError(str(exc)) from None


def parse_request(args: argparse.Namespace, entry: DeviceEntry | None = None) -> ProfileRequest:
    """The request the flags ask for on ``entry`` (the first of ``--device`` when None), each
    setting checked by the settings model (UsageError otherwise)."""
    entry = entry or device_entries(args)[0][0]
    try:
        settings = Settings().given(flags_given(args, PER_DEVICE_SETTINGS) | {"device": entry.device})
    except SettingError as exc:
        raise UsageError(str(exc)) from None
    device = settings.device
    if entry.host is None and device is not None and device.startswith("cuda") and _no_cuda_here():
        raise UsageError(f"--device {device}: this machine has no NVIDIA GPU; use --device cpu")
    source = parse_source_spec(args.chain, args.input)
    chain = source.label if source else chain_text(args.chain, args.input)
    return ProfileRequest.of("cli", chain, settings, source=source)


def report_given(path: Path, option: str = "--from") -> tuple[str, ProfileReport]:
    """The report file's text and what it holds (``protocol.read_report``); UsageError naming the
    option if it is not one."""
    try:
        return read_report(path)
    except ProtocolError as exc:
        raise UsageError(f"{option}: {exc}") from None


def show_report(args: argparse.Namespace, console: Console) -> int:
    """A saved report: its JSON as it is (``--json``), or its tables as the run printed them."""
    text, report = report_given(args.report)
    if args.json:
        sys.stdout.write(inert_json(text if text.endswith("\n") else text + "\n"))
        return baseline_verdict(args, report.results, console, Console(file=sys.stderr))
    console.print(
        plain(f"{report.device_label} ({report.device}), torch {report.torch}, {report.date}"), highlight=False
    )
    by_size: dict[int, list[Measurement]] = {}
    for m in report.results:
        by_size.setdefault(m.size, []).append(m)
    for size in sorted(by_size):
        print_size(console, by_size[size])
    if len(by_size) > 1:
        print_sweep(console, report.results)
    return baseline_verdict(args, report.results, console, Console(file=sys.stderr))


def baseline_verdict(args: argparse.Namespace, results: list[Measurement], console: Console, err: Console) -> int:
    """Print the deltas against ``--baseline`` (to stderr when stdout carries JSON), then judge
    the ``--fail-on`` metrics: 1 when one regressed beyond its threshold and its noise, 3 when one
    could not be judged (each such figure one line on stderr), else 0."""
    if args.baseline is None:
        return EXIT_MEASURED
    deltas = compare(args.pinned.results, results)
    out = err if args.json else console
    out.print(plain(f"against {args.baseline}:", "bold"), highlight=False, soft_wrap=True)
    for delta in deltas:
        style = {"worse": "red", "better": "green", "same": "dim", "unclear": "yellow"}[delta.verdict]
        out.print(plain(delta.text(), style), highlight=False, soft_wrap=True)
    if not deltas:
        out.print(plain("no size and mode in common with the baseline"), highlight=False, soft_wrap=True)
    verdict = gate(args.pinned.results, results, args.fail_on_parsed)
    for delta in verdict.regressed:
        err.print(plain(f"regression: {delta.text()}", "red"), highlight=False, soft_wrap=True)
    if verdict.outcome == "unjudged":
        for line in verdict.unjudged:
            err.print(plain(f"could not judge: {line}", "yellow"), highlight=False, soft_wrap=True)
    return {"failed": EXIT_FAILED, "unjudged": EXIT_UNJUDGED, "passed": EXIT_MEASURED}[verdict.outcome]


def _failure_line(mode: str | None, size: int | None, message: str, name: str | None = None) -> Text:
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


def _is_usage_error(event: RequestFailed) -> bool:
    """The request as a whole was refused for bad input (e.g. a device this machine lacks)."""
    return event.size is None and event.mode is None and event.error.kind in USER_ERROR_KINDS


class _Run:
    """The events of one request, printed as they arrive."""

    def __init__(
        self,
        request: ProfileRequest,
        console: Console,
        err: Console,
        as_json: bool,
        entry: DeviceEntry | None = None,
    ) -> None:
        """``entry``: the device list's entry this run measures, when there are several (its
        lines on stderr name it; no spinner, which the runs would share)."""
        self.request = request
        self.console = console
        self.err = err
        self.as_json = as_json
        self.entry = entry
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
            m = event.measurement
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
            if self.name or not _is_usage_error(event):  # alone, that one becomes the usage line
                line = _failure_line(event.mode, event.size, event.error.located(), self.name)
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
            self.err.print(_failure_line(mode, size, "not measured", self.name), highlight=False, soft_wrap=True)
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

    def report(self) -> ProfileReport:
        return ProfileReport(
            device=self.device(),
            device_label=self.device_label(),
            torch=self.ready.torch_version if self.ready else "",
            date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            results=self.results,
            failures=self.failures,
            host=self.entry.host if self.entry is not None and self.entry.host else platform.node(),
            peak_gbps=next((m.peak_gbps for m in self.results if m.peak_gbps), None),
            compute_peaks_tflops=compute_peaks(self.results),
        )

    def exit_code(self) -> int:
        """2 for a request refused as a whole for bad input, 1 when any size or mode was not
        measured, else 0."""
        if any(_is_usage_error(f) for f in self.failures):
            return EXIT_BAD_INPUT
        return EXIT_FAILED if self.failures or self.unaccounted() else EXIT_MEASURED


REMEASURES = 2
"""How many more times a reading a busy machine spoiled for ``--fail-on`` is measured."""
REMEASURE_WAIT_S = 5.0
"""How long the machine is given to quiet down before each of those."""

Spoiled = Callable[[list[Measurement]], list[tuple[int, str]]]
"""The (size, mode) readings that a gate could not judge because the machine was busy."""


async def _measure_in_worker(run: _Run, spoiled: Spoiled | None = None, command: str | None = None) -> None:
    """Measure ``run``'s request in a worker started by ``command`` (a ``--host``'s; None: the
    local worker); then, while ``spoiled`` names readings a busy machine kept a gate from judging,
    wait and measure those again (``REMEASURES`` times at most), saying so."""
    from probes.link.client import WorkerClient

    client = WorkerClient(command)
    try:
        if run.status is not None:
            run.status.start()
        try:
            run.ready = await client.start()
        except RuntimeError as exc:
            run.on_event(RequestFailed(run.request.id, ChainErrorInfo("worker", str(exc))))
            return
        async for event in client.request(run.request):
            run.on_event(event)
        for attempt in range(1, REMEASURES + 1):
            busy = spoiled(run.results) if spoiled is not None else []
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
    finally:
        if run.status is not None:
            run.status.stop()
        await client.close()


def _check_baseline_options(args: argparse.Namespace) -> None:
    if args.fail_on and args.baseline is None:
        raise UsageError("--fail-on needs --baseline REPORT")
    try:
        args.fail_on_parsed = [parse_fail_on(text) for text in args.fail_on]
    except ValueError as exc:
        raise UsageError(f"--fail-on: {inert_line(str(exc))}") from None
    args.pinned = report_given(args.baseline, "--baseline")[1] if args.baseline is not None else None


def _side_by_side_console(console: Console) -> Console:
    """A console that holds one entry's tables until every entry is measured, laid out as
    ``console`` lays them out: the entries measure in parallel, their tables print in order."""
    return Console(
        file=io.StringIO(),
        width=console.width,
        soft_wrap=False,
        force_terminal=console.is_terminal,
        color_system=console.color_system,  # type: ignore[arg-type]  # the names it accepts
    )


def measure_side_by_side(
    args: argparse.Namespace, entries: list[DeviceEntry], hosts: dict[str, str], console: Console, err: Console
) -> int:
    """Measure the chain on every entry at once, a worker each; then each entry's tables under a
    heading naming it, and the side-by-side summary (or one JSON document of the entries'
    reports). An entry that cannot be reached or drops is one line on stderr naming it; the
    others' results are printed all the same, and the exit status is 1."""
    runs = [_Run(parse_request(args, e), _side_by_side_console(console), err, args.json, e) for e in entries]

    async def measure_all() -> None:
        commands = [hosts.get(entry.host) if entry.host else None for entry in entries]
        await asyncio.gather(*(_measure_in_worker(run, command=cmd) for run, cmd in zip(runs, commands, strict=True)))

    asyncio.run(measure_all())
    for measured in runs:
        measured.finish()
    if args.json:
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


def _tagged_report(measured: _Run) -> dict[str, object]:
    """One entry's report (as a single ``--json`` run prints it) under the host and device that
    name the entry."""
    assert measured.entry is not None
    report: dict[str, object] = json.loads(measured.report().to_json())
    return {"host": measured.entry.host, "device": measured.entry.device, "report": report}


def run(args: argparse.Namespace, console: Console, err: Console) -> int:
    entries, hosts = device_entries(args)
    several = len(entries) > 1
    if several and (args.report is not None or args.baseline is not None or args.fail_on):
        raise UsageError("--from, --baseline and --fail-on take one device: give --device one entry")
    _check_baseline_options(args)
    if args.report is not None:
        return show_report(args, console)
    if args.chain is None:
        raise UsageError("give an op chain, e.g. kernel-tui profile '(a + b).relu()'")
    request = parse_request(args, entries[0])
    try:
        user_cache_dir()  # the worker's peaks and device locks: the same environment, the same folder
    except UnusableDir as exc:
        raise UsageError(str(exc)) from None

    from probes.chain.expr import ChainError, parse_chain, parse_inputs

    try:
        if request.source is None:
            parse_chain(request.chain)
        else:
            parse_inputs(request.source.inputs)
    except ChainError as exc:
        raise UsageError(inert_line(str(exc))) from None
    if several:
        return measure_side_by_side(args, entries, hosts, console, err)
    measured = _Run(request, console, err, args.json)
    pinned, fail_on = args.pinned, args.fail_on_parsed
    spoiled = (lambda results: gate(pinned.results, results, fail_on).busy) if fail_on else None
    asyncio.run(_measure_in_worker(measured, spoiled, hosts.get(entries[0].host) if entries[0].host else None))
    measured.finish()
    code = measured.exit_code()
    if code == EXIT_BAD_INPUT:
        raise UsageError(inert_line(next(f for f in measured.failures if _is_usage_error(f)).error.located()))
    verdict = baseline_verdict(args, measured.results, console, err)
    return EXIT_FAILED if EXIT_FAILED in (code, verdict) else verdict


def _quiet_broken_pipe() -> int:
    """The reader went away (``| head``): a quiet exit 0, as ``git log | head`` ends; stdout
    pointed at /dev/null so that the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_MEASURED


def main(argv: list[str] | None = None) -> int:
    console = output_console(sys.stdout)
    err = Console(file=sys.stderr)
    try:
        args = build_parser().parse_args(argv)
        code = run(args, console, err)
        console.file.flush()
        return code
    except UsageError as exc:
        sys.stderr.write(f"kernel-tui profile: {inert_line(str(exc))}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("kernel-tui profile: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _quiet_broken_pipe()
