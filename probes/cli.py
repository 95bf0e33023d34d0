"""``kernel-tui profile EXPR``: the engine's results as rich tables (or JSON), without the TUI.

For scripts, CI and non-interactive SSH. It measures in a worker child through
``probes.link.client.WorkerClient``, exactly as the app does: the same figures, and a poisoned CUDA
context, a crash or a flood of device printf is one line here, never a traceback. This process
never imports torch. The exit status is in ``EPILOG`` (and ``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import NoReturn

from rich.console import Console

from probes.chain.command_line import chain_text
from probes.link.baseline import METRICS, compare, gate, parse_fail_on
from probes.link.help_text import HelpFormatter, SafeParser
from probes.link.protocol import Measurement, ProfileReport, ProfileRequest, ProtocolError, read_report
from probes.link.report_tables import output_console, plain, print_size, print_sweep
from probes.link.safe_text import inert_line
from probes.link.settings import (
    MAX_DEVICES,
    DeviceEntry,
    SettingError,
    Settings,
    add_flags,
    add_host_flag,
    check_hosts,
    check_spread,
    flags_given,
    parse_device_entries,
)
from probes.link.source_spec import parse_source_spec
from probes.link.state_files import UnusableDir, user_cache_dir
from probes.profile_run import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_MEASURED,
    EXIT_STATUSES,
    EXIT_UNJUDGED,
    ProfileRun,
    inert_json,
    is_usage_error,
    measure_in_worker,
)

PROFILE_SETTINGS = ("sizes", "modes", "device", "dtype", "reps", "call_budget_s", "grad", "spread")
"""The settings ``kernel-tui profile`` takes flags for (``probes.link.settings.FLAGS``)."""
PER_DEVICE_SETTINGS = tuple(name for name in PROFILE_SETTINGS if name not in ("device", "spread"))
"""The settings every entry of a device list is measured with alike."""
PROFILE_NOTES = {
    "device": f"or a comma list of at most {MAX_DEVICES} [HOST:]DEVICE, e.g. cpu,gpu2:cuda (HOST from --host), "
    "each measured by its own worker in parallel, then compared side by side (or, with --spread, sharing "
    "the sweep); --from, --baseline and --fail-on take one"
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
    spread = len({m.measured_on for m in report.results}) > 1  # a sweep --spread over several devices
    for size in sorted(by_size):
        print_size(console, by_size[size], measured_on=spread)
    if len(by_size) > 1:
        print_sweep(console, report.results, measured_on=spread)
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


def _check_baseline_options(args: argparse.Namespace) -> None:
    if args.fail_on and args.baseline is None:
        raise UsageError("--fail-on needs --baseline REPORT")
    try:
        args.fail_on_parsed = [parse_fail_on(text) for text in args.fail_on]
    except ValueError as exc:
        raise UsageError(f"--fail-on: {inert_line(str(exc))}") from None
    args.pinned = report_given(args.baseline, "--baseline")[1] if args.baseline is not None else None


def run(args: argparse.Namespace, console: Console, err: Console) -> int:
    entries, hosts = device_entries(args)
    several = len(entries) > 1
    if args.spread:
        try:
            check_spread(entries)
        except SettingError as exc:
            raise UsageError(f"--spread: {exc}") from None
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
        from probes.several_devices import measure_several

        requests = [request, *(parse_request(args, entry) for entry in entries[1:])]
        return measure_several(
            requests, entries, hosts, spread=bool(args.spread), as_json=args.json, console=console, err=err
        )
    measured = ProfileRun(request, console, err, args.json, host=entries[0].host)
    pinned, fail_on = args.pinned, args.fail_on_parsed
    spoiled = (lambda results: gate(pinned.results, results, fail_on).busy) if fail_on else None
    asyncio.run(measure_in_worker([measured], hosts.get(entries[0].host) if entries[0].host else None, spoiled))
    measured.finish()
    code = measured.exit_code()
    if code == EXIT_BAD_INPUT:
        raise UsageError(inert_line(next(f for f in measured.failures if is_usage_error(f)).error.located()))
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
