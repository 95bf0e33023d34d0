"""``kernel-tui profile EXPR``: the engine's results as rich tables (or JSON), without the TUI.

For scripts, CI and non-interactive SSH. Measures in-process through ``probes.sweep.run_profile``,
the same call the worker makes, so the figures are the TUI's.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from probes.protocol import (
    COMPILED_MODES,
    DEFAULT_SIZES,
    DTYPES,
    MODES,
    Event,
    Measurement,
    MeasurementResult,
    ProfileReport,
    ProfileRequest,
    Progress,
    RequestFailed,
)
from probes.safe_text import inert_line
from probes.summary import (
    comparisons,
    crossover,
    format_bytes,
    format_gbps,
    format_size,
    format_time_us,
    format_transfers,
    headline,
    mode_label,
    parse_sizes,
)

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


NATIVE_NOISE = ("USDT:", "STAGE:", "INFO:", "Compiled module path:", "_warn_once(", "warnings.warn(")


@contextlib.contextmanager
def library_chatter_captured() -> Iterator[tuple[TextIO, TextIO]]:
    """Send what libraries print on fds 1 and 2 (Kineto's USDT lines, Inductor's "Compiled module
    path") to a temp file, so stdout carries only our tables or JSON; yields the real stdout and
    stderr. Afterwards, captured lines that are not known noise are replayed on stderr."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    sink = tempfile.TemporaryFile()
    os.dup2(sink.fileno(), 1)
    os.dup2(sink.fileno(), 2)
    real_out = os.fdopen(os.dup(saved_out), "w", buffering=1)
    real_err = os.fdopen(os.dup(saved_err), "w", buffering=1)
    try:
        yield real_out, real_err
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        os.close(saved_out)
        os.close(saved_err)
        sink.seek(0)
        for line in sink.read().decode("utf-8", "replace").splitlines():
            if line.strip() and not line.lstrip().startswith(NATIVE_NOISE) and "Profiler clears events" not in line:
                real_err.write(line + "\n")
        real_out.close()
        real_err.close()
        sink.close()


class UsageError(Exception):
    """Bad command-line input: reported as one line on stderr, exit 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernel-tui profile",
        description="Measure the kernels an op chain launches, eager vs torch.compile, over tensor sizes.",
    )
    parser.add_argument("chain", nargs="?", help="the op chain, e.g. '(a + b).relu()'; use '\\n' or ';' for several lines")
    parser.add_argument("--sizes", default=",".join(format_size(s) for s in DEFAULT_SIZES),
                        help="comma-separated sizes N: 1e6, 1_000_000 and 1M all work")
    parser.add_argument("--modes", default="eager,compiled", help=f"comma-separated: {', '.join(MODES)}")
    parser.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: CUDA if present)")
    parser.add_argument("--dtype", default="fp32", choices=DTYPES, help="dtype of the default inputs a, b, c")
    parser.add_argument("--input", action="append", default=[], metavar="DECL",
                        help="declare an input, e.g. 'x: [N, 4096] bf16' (repeatable)")
    parser.add_argument("--reps", type=int, default=None, help="timing reps (default: sized to the kernel time)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument("--from", dest="report", type=Path, metavar="REPORT",
                        help="print the tables of a report saved with --json instead of measuring")
    return parser


def chain_text(chain: str, declarations: list[str]) -> str:
    """The chain as the engine reads it: declarations first, ``;`` and literal ``\\n`` as newlines."""
    body = chain.replace("\\n", "\n").replace(";", "\n")
    return "\n".join([*declarations, body])


def parse_request(args: argparse.Namespace) -> ProfileRequest:
    try:
        sizes = parse_sizes(args.sizes)
    except ValueError as exc:
        raise UsageError(f"--sizes: {exc}") from None
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for mode in modes:
        if mode not in MODES:
            raise UsageError(f"--modes: unknown mode '{mode}': use {', '.join(MODES)}")
    if not modes:
        raise UsageError("--modes: give at least one mode")
    if args.reps is not None and not 1 <= args.reps <= 10_000:
        raise UsageError("--reps: give a number between 1 and 10000")
    return ProfileRequest(
        id="cli",
        chain=chain_text(args.chain, args.input),
        sizes=sizes,
        modes=modes,
        device=args.device,
        dtype=args.dtype,
        reps=args.reps,
    )


def kernels_table(size: int, results: list[Measurement]) -> Table:
    """Kernel rows of every mode at one size, a section per mode; memcpy/memset rows dimmed."""
    table = Table(
        title=f"N = {format_size(size)}  ({size:,} elements)", title_justify="left",
        box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
    )
    table.add_column("kernel", no_wrap=True, overflow="ellipsis", min_width=16, max_width=34)
    for column in ("n", "µs", "bytes", "GB/s", "%pk"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("ops", overflow="fold", min_width=8)
    for m in results:
        table.add_row(f"[bold]{mode_label(m)}[/]")
        for row in m.kernels + m.transfers:
            table.add_row(
                row.short_name if row.kind == "kernel" else f"[dim]{row.short_name} ({row.kind})[/]",
                f"{row.launches_per_call:g}",
                f"{row.device_time_us:.2f}",
                format_bytes(row.bytes),
                format_gbps(row.gbps).removesuffix(" GB/s"),
                f"{row.pct_of_peak:.0f}%" if row.pct_of_peak is not None else "-",
                ", ".join(op.removeprefix("aten::") for op in row.ops),
            )
        if not m.kernels:
            table.add_row("[dim](no kernels)[/]")
        if m.fallback_reason:
            table.add_row(f"[yellow]{m.fallback_reason}[/]")
    return table


def headline_table(results: list[Measurement]) -> Table:
    table = Table(box=None, padding=(0, 1))
    for column in ("mode", "kernels", "bytes/call", "transfers", "device", "wall", "compile"):
        table.add_column(column, justify="left" if column == "mode" else "right", no_wrap=True)
    for m in results:
        table.add_row(
            mode_label(m),
            f"{m.kernels_per_call:g}",
            format_bytes(m.bytes_per_call),
            format_transfers(m),
            format_time_us(m.device_time_us),
            format_time_us(m.wall_time_us),
            f"{m.compile_time_s:.2f} s" if m.compile_time_s is not None else "-",
        )
    return table


def sweep_table(results: list[Measurement]) -> Table:
    """Every size x mode, with compiled/eager speedups by device time and by wall time."""
    table = Table(title="sweep", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for column in ("N", "mode", "kernels", "device", "wall", "GB/s", "x device", "x wall"):
        table.add_column(column, justify="left" if column == "mode" else "right", no_wrap=True)
    speedups = {(p.size, mode): p for mode in COMPILED_MODES for p in comparisons(results, mode)}
    for m in sorted(results, key=lambda r: (r.size, MODES.index(r.mode))):
        pair = speedups.get((m.size, m.mode))
        device = f"{pair.device_speedup:.2f}x" if pair and pair.device_speedup else ""
        wall = f"{pair.wall_speedup:.2f}x" if pair and pair.wall_speedup else ""
        table.add_row(
            format_size(m.size), mode_label(m), f"{m.kernels_per_call:g}", format_time_us(m.device_time_us),
            format_time_us(m.wall_time_us), format_gbps(m.gbps).removesuffix(" GB/s"), device, wall,
        )
    return table


def print_size(console: Console, batch: list[Measurement]) -> None:
    """One size: its kernel rows, the headline counts, and the eager -> compiled line."""
    console.print(kernels_table(batch[0].size, batch))
    console.print(headline_table(batch))
    eager = next((m for m in batch if m.mode == "eager"), None)
    compiled = next((m for m in batch if m.mode != "eager"), None)
    console.print(f"[bold]{headline(eager, compiled)}[/]\n", highlight=False)


def print_sweep(console: Console, results: list[Measurement]) -> None:
    console.print(sweep_table(results))
    pairs = comparisons(results)
    size = crossover(pairs)
    if pairs:
        console.print(
            f"compiled is faster per call from N = {format_size(size)} up" if size
            else "compiled is not faster per call at the largest size measured",
            highlight=False,
        )


def show_report(path: Path, console: Console) -> int:
    """The tables of a saved report, exactly as the run that made it would have printed them."""
    try:
        report = ProfileReport.from_json(path.read_text())
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"--from: cannot read {path}: {exc}") from None
    console.print(f"{report.device_label} ({report.device}), torch {report.torch}, {report.date}", highlight=False)
    by_size: dict[int, list[Measurement]] = {}
    for m in report.results:
        by_size.setdefault(m.size, []).append(m)
    for size in sorted(by_size):
        print_size(console, by_size[size])
    if len(by_size) > 1:
        print_sweep(console, report.results)
    return 0


def _device_label(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return f"CPU ({os.cpu_count()} cores, {platform.machine()})"


def run(args: argparse.Namespace, console: Console, err: Console) -> int:
    if args.report is not None:
        return show_report(args.report, console)
    if args.chain is None:
        raise UsageError("give an op chain, e.g. kernel-tui profile '(a + b).relu()'")
    request = parse_request(args)

    from probes.expr import ChainError, parse_chain

    try:
        parse_chain(request.chain)
    except ChainError as exc:
        raise UsageError(str(exc)) from None

    import torch

    from probes.sweep import run_profile

    results: list[Measurement] = []
    failures: list[RequestFailed] = []
    by_size: dict[int, list[Measurement]] = {}
    status = err.status("starting") if err.is_terminal and not args.json else None

    def emit(event: Event) -> None:
        if isinstance(event, Progress) and status is not None:
            status.update(f"{event.message} ({event.step}/{event.total})")
        elif isinstance(event, MeasurementResult):
            m = event.measurement
            results.append(m)
            by_size.setdefault(m.size, []).append(m)
            if not args.json and len(by_size[m.size]) == len(request.modes):
                print_size(console, by_size[m.size])
        elif isinstance(event, RequestFailed):
            failures.append(event)
            where = " ".join(x for x in (event.mode or "", f"N={event.size:,}" if event.size else "") if x)
            # One line, however long, and the message is not markup ("[enforce fail at ...]").
            message = escape(inert_line(event.error.located()))
            err.print(f"[red]error[/]{' (' + where + ')' if where else ''}: {message}", highlight=False, soft_wrap=True)

    if status is not None:
        status.start()
    try:
        run_profile(request, emit)
    finally:
        if status is not None:
            status.stop()
    if not args.json:
        for size in sorted(by_size):
            if len(by_size[size]) != len(request.modes):
                print_size(console, by_size[size])
    device = results[0].device if results else (request.device or ("cuda:0" if torch.cuda.is_available() else "cpu"))
    if args.json:
        report = ProfileReport(
            device=device,
            device_label=_device_label(device) if results else "",
            torch=torch.__version__,
            date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            results=results,
            failures=failures,
            host=platform.node(),
            peak_gbps=results[0].peak_gbps if results else None,
        )
        if console.is_terminal:
            console.print_json(report.to_json())
        else:
            console.file.write(report.to_json() + "\n")
    elif len(by_size) > 1:
        print_sweep(console, results)
    if failures and not results:
        return EXIT_FAILED
    return 0


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
    warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
    parser = build_parser()
    args = parser.parse_args(argv)
    with library_chatter_captured() as (out, err_stream):
        console = Console(file=out, soft_wrap=False)
        err = Console(file=err_stream)
        try:
            return run(args, console, err)
        except UsageError as exc:
            err_stream.write(f"kernel-tui profile: {inert_line(str(exc))}\n")
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            err_stream.write("kernel-tui profile: interrupted\n")
            return 130
