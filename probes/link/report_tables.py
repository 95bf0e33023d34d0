"""Rich tables of measurements, as ``kernel-tui profile`` prints them (live or from a report).

Every string that came from outside (kernel names, ops, reasons, the device label: a report file
can hold anything) is made inert and placed as a rich ``Text``, never parsed as markup.

Output fits where it goes (``output_console``): a terminal gets tables as wide as the terminal, a
long kernel name cut with an ellipsis; a pipe, a file or a CI log gets every table at its full
width, so every name is whole and nothing is wrapped mid-word. No line ends in spaces.
"""

from __future__ import annotations

import re
from typing import IO, TextIO, cast

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from probes.link.protocol import COMPILED_MODES, MODES, KernelRow, Measurement
from probes.link.safe_text import inert_line
from probes.link.summary import (
    Ratio,
    comparisons,
    format_bytes,
    format_gbps,
    format_ratio,
    format_size,
    format_time_us,
    format_transfers,
    headline,
    mode_label,
    ratio,
    sweep_verdict,
)

FULL_WIDTH = 10_000
"""The width tables are laid out in when the output is not a terminal: wider than any table, so
each takes its natural width (rich does not stretch a table to the console)."""
NAME_WIDTH = 34
"""The kernel column's width in a terminal too narrow for the names: the rest of a row fits 80
columns beside it."""
OTHER_COLUMNS = 46
"""About what the kernel table's other columns take: a wide terminal gives the names the rest."""

_TRAILING = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+$")
"""A line's end: spaces and the style codes a terminal gets between them."""


def _trimmed(line: str) -> str:
    """``line`` without its trailing spaces, the style codes among them kept."""
    end = _TRAILING.search(line)
    return line if end is None else line[: end.start()] + end.group().replace(" ", "").replace("\t", "")


class TrimmedLines:
    """A text stream that drops the spaces rich pads a line's end with (a table's last cell, a
    title): a log, a diff or ``grep ' $'`` of the output meets none. A line reaches the stream
    when it ends; ``flush`` writes a partial one as it is."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self._partial = ""

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        if lines:
            self.stream.write("".join(_trimmed(line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self.stream.write(self._partial)
            self._partial = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


class _OutputConsole(Console):
    """A console that leaves a closed pipe to its caller: rich's own answer is ``exit(1)``, where
    the shell's convention (``git log | head``) is a quiet success."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def output_console(stream: TextIO) -> Console:
    """A console for ``stream``: the terminal's width on a terminal, FULL_WIDTH elsewhere (a
    pipe, a file, a CI log), trailing spaces trimmed either way."""
    trimmed = cast(IO[str], TrimmedLines(stream))  # rich writes, flushes and asks isatty/fileno only
    return _OutputConsole(file=trimmed, soft_wrap=False, width=None if trimmed.isatty() else FULL_WIDTH)


def plain(text: object, style: str = "") -> Text:
    """Outside text as one inert line of rich Text (markup is never interpreted)."""
    return Text(inert_line(str(text)), style=style)


def _mode_order(mode: str) -> int:
    return MODES.index(mode) if mode in MODES else len(MODES)


def _time_cell(us: float | None, iqr: list[float] | None, noisy: bool) -> Text:
    text = Text(format_time_us(us))
    if noisy and iqr:
        text.append(" ~", style="yellow")
    return text


def kernels_table(size: int, results: list[Measurement], width: int = FULL_WIDTH, measured_on: bool = False) -> Table:
    """Kernel rows of every mode at one size, a section per mode; memcpy/memset rows dimmed.
    ``width``: the console's; the kernel names get what the other columns leave (at least
    NAME_WIDTH) and are cut with an ellipsis only past that. ``measured_on``: each mode's section
    says which device measured it (a sweep spread over several)."""
    table = Table(
        title=f"N = {format_size(size)}  ({size:,} elements)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    name_width = max(NAME_WIDTH, width - OTHER_COLUMNS)
    table.add_column("kernel", no_wrap=True, overflow="ellipsis", min_width=16, max_width=name_width)
    for column in ("n", "µs", "bytes", "GB/s", "%pk"):
        table.add_column(column, justify="right", no_wrap=True)
    launches = any(row.launch is not None for m in results for row in m.kernels)
    if launches:
        table.add_column("regs/occ", justify="right", no_wrap=True)
    table.add_column("ops", overflow="fold", min_width=8)
    for m in results:
        on = plain(f"  on {m.measured_on}", "dim") if measured_on else ""
        table.add_row(Text.assemble(plain(mode_label(m), "bold"), on))
        for row in m.kernels + m.transfers:
            name = plain(row.short_name) if row.kind == "kernel" else plain(f"{row.short_name} ({row.kind})", "dim")
            if row.pass_:  # in front, so that a long name is cut at its end, never its pass
                name = Text.assemble(("bwd " if row.pass_ == "backward" else "fwd ", "cyan"), name)
            table.add_row(
                name,
                f"{row.launches_per_call:g}",
                f"{row.device_time_us:.2f}",
                format_bytes(row.bytes),
                format_gbps(row.gbps).removesuffix(" GB/s"),
                f"{row.pct_of_peak:.0f}%" if row.pct_of_peak is not None else "-",
                *([registers_and_occupancy(row)] if launches else []),
                plain(", ".join(op.removeprefix("aten::") for op in row.ops)),
            )
        if not m.kernels:
            table.add_row(plain("(no kernels)", "dim"))
        if m.fallback_reason:
            table.add_row(plain(m.fallback_reason, "yellow"))
    return table


def registers_and_occupancy(row: KernelRow) -> str:
    """``168/19%``: a GPU kernel's registers per thread and theoretical occupancy, ``-`` where
    unknown."""
    info = row.launch
    if info is None:
        return "-"
    registers = str(info.registers_per_thread) if info.registers_per_thread is not None else "-"
    occupancy = f"{info.occupancy:.0%}" if info.occupancy is not None else "-"
    return f"{registers}/{occupancy}"


def _with_peaks(results: list[Measurement]) -> bool:
    return any(m.peak_memory_bytes is not None for m in results)


def headline_table(results: list[Measurement], measured_on: bool = False) -> Table:
    """Each mode's counts and times; ``measured_on``: with an ``on`` column naming the device
    that measured it."""
    table = Table(box=None, padding=(0, 1))
    peaks = _with_peaks(results)
    columns = ("mode", *(["on"] if measured_on else []), "kernels", "bytes/call", "transfers", "device", "wall")
    for column in (*columns, "compile", *(["peak mem"] if peaks else [])):
        table.add_column(column, justify="left" if column in ("mode", "on") else "right", no_wrap=True)
    for m in results:
        table.add_row(
            plain(mode_label(m)),
            *([plain(m.measured_on)] if measured_on else []),
            f"{m.kernels_per_call:g}",
            format_bytes(m.bytes_per_call),
            format_transfers(m),
            _time_cell(m.device_time_us, m.device_time_us_iqr, m.noisy),
            _time_cell(m.wall_time_us, m.wall_time_us_iqr, m.noisy),
            f"{m.compile_time_s:.2f} s" if m.compile_time_s is not None else "-",
            *([format_bytes(m.peak_memory_bytes)] if peaks else []),
        )
    return table


def notes(results: list[Measurement]) -> list[Text]:
    """Noise reasons and diagnostics, one line each, under the size they belong to."""
    lines = []
    for m in results:
        if m.grad and m.forward_time_us is not None and m.backward_time_us is not None:
            forward, backward = format_time_us(m.forward_time_us), format_time_us(m.backward_time_us)
            lines.append(plain(f"{m.mode}: forward {forward}, backward {backward} (device){pass_peaks(m)}"))
        for reason in m.noise_reasons:
            lines.append(plain(f"~ {m.mode}: noisy: {reason}", "yellow"))
        for line in m.diagnostics:
            lines.append(plain(f"! {m.mode}: {line}", "dim"))
    return lines


def pass_peaks(m: Measurement) -> str:
    """``; peak memory forward 8.00 MB, backward 12.0 MB`` with grad, where both are known."""
    forward, backward = m.forward_peak_memory_bytes, m.backward_peak_memory_bytes
    if forward is None or backward is None:
        return ""
    return f"; peak memory forward {format_bytes(forward)}, backward {format_bytes(backward)}"


def sweep_table(results: list[Measurement], measured_on: bool = False) -> Table:
    """Every size x mode, with compiled/eager speedups by device time and by wall time (and each
    result's peak memory, where known); ``measured_on``: with an ``on`` column naming the device
    that measured each."""
    table = Table(title="sweep", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    peaks = _with_peaks(results)
    columns = ("N", "mode", *(["on"] if measured_on else []), "kernels", "device", "wall", "GB/s", "x device")
    for column in (*columns, "x wall", *(["peak mem"] if peaks else [])):
        table.add_column(column, justify="left" if column in ("mode", "on") else "right", no_wrap=True)
    speedups = {(p.size, mode): p for mode in COMPILED_MODES for p in comparisons(results, mode)}
    for m in sorted(results, key=lambda r: (r.size, _mode_order(r.mode))):
        pair = speedups.get((m.size, m.mode))
        device, wall = (pair.device_ratio, pair.wall_ratio) if pair else (None, None)
        table.add_row(
            format_size(m.size),
            plain(mode_label(m)),
            *([plain(m.measured_on)] if measured_on else []),
            f"{m.kernels_per_call:g}",
            _time_cell(m.device_time_us, m.device_time_us_iqr, m.noisy),
            _time_cell(m.wall_time_us, m.wall_time_us_iqr, m.noisy),
            format_gbps(m.gbps).removesuffix(" GB/s"),
            _ratio_cell(device),
            _ratio_cell(wall),
            *([format_bytes(m.peak_memory_bytes)] if peaks else []),
        )
    return table


HOST_BOUND_MARK = "hb"
HOST_BOUND_LEGEND = (
    f"{HOST_BOUND_MARK}: host-bound, the kernels under half of the call's wall time: that ratio is the host's "
    "speed in this process, shown as its spread over reps (another process reads another figure)"
)


def _ratio_cell(found: Ratio | None) -> Text:
    """The ratio; a ``?`` marks one whose interval straddles 1 (no conclusion); ``unclear`` with no
    figure where its readings cannot be trusted (a busy machine, drift: see ``summary.Ratio``); a
    host-bound wall ratio is its interval, marked ``hb``."""
    if found is None:
        return Text("")
    if found.unclear_reason is not None:
        return Text("unclear", style="yellow")
    if found.host_bound:
        return Text(f"{found.span()} {HOST_BOUND_MARK}" + ("?" if found.verdict == "unclear" else ""), style="yellow")
    value = f"{format_ratio(found.value)}x"
    return Text(value + "?", style="yellow") if found.verdict == "unclear" else Text(value)


SIDE_BY_SIDE_LEGEND = (
    "x {first}: {first}'s device time over this one's (above 1: this one is faster), with the interval "
    "the two spreads allow where it is wide"
)


def _against_first(found: Ratio | None) -> Text:
    """A ratio to the first device in words (``1.68x``, its interval where wide, ``unclear: ...``
    where its readings cannot be trusted), yellow where it is no conclusion."""
    if found is None:
        return Text("")
    return Text(found.text(), style="yellow" if found.verdict == "unclear" else "")


def side_by_side_table(named: list[tuple[str, list[Measurement]]]) -> Table:
    """Each size and mode measured on several devices (``named``: each device's name and
    results, the first the one the others are set against): per device its device time and GB/s,
    and for the others how many times faster than the first, by device time with its spread."""
    table = Table(title="side by side", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    first_name = named[0][0]
    table.add_column("N", justify="right", no_wrap=True)
    table.add_column("mode", no_wrap=True)
    for index, (name, _) in enumerate(named):
        table.add_column(Text(f"{inert_line(name)} device"), justify="right", no_wrap=True)
        table.add_column("GB/s", justify="right", no_wrap=True)
        if index:
            table.add_column(Text(f"x {inert_line(first_name)}"), justify="right", no_wrap=True)
    found = [{(m.size, m.mode): m for m in results} for _, results in named]
    keys = sorted({key for by_key in found for key in by_key}, key=lambda key: (key[0], _mode_order(key[1])))
    for size, mode in keys:
        first = found[0].get((size, mode))
        cells: list[Text | str] = [format_size(size), plain(mode)]
        for index, by_key in enumerate(found):
            m = by_key.get((size, mode))
            cells.append(_time_cell(m.device_time_us, m.device_time_us_iqr, m.noisy) if m else "")
            cells.append(format_gbps(m.gbps).removesuffix(" GB/s") if m else "")
            if index:
                cells.append(_against_first(ratio(first, m, "device") if first and m else None))
        table.add_row(*cells)
    return table


def print_size(console: Console, batch: list[Measurement], measured_on: bool = False) -> None:
    """One size: its kernel rows, the headline counts, notes, and the eager -> compiled line;
    ``measured_on``: each mode says which device measured it."""
    batch = sorted(batch, key=lambda m: _mode_order(m.mode))
    console.print(kernels_table(batch[0].size, batch, console.width, measured_on))
    console.print(headline_table(batch, measured_on))
    for line in notes(batch):
        console.print(line, soft_wrap=True)
    eager = next((m for m in batch if m.mode == "eager"), None)
    compiled = next((m for m in batch if m.mode != "eager"), None)
    console.print(plain(headline(eager, compiled), "bold"), "\n", highlight=False, sep="")


def print_sweep(
    console: Console, results: list[Measurement], *, complete: bool = True, measured_on: bool = False
) -> None:
    """The sweep table, then its verdict where every size is in (``complete``): a verdict on part
    of the sizes would be a guess shown as fact. ``measured_on``: each row says which device
    measured it."""
    console.print(sweep_table(results, measured_on))
    if any(p.wall_ratio and p.wall_ratio.host_bound for mode in COMPILED_MODES for p in comparisons(results, mode)):
        console.print(plain(HOST_BOUND_LEGEND, "dim"), highlight=False, soft_wrap=True)
    pairs = comparisons(results)
    if pairs and complete:
        console.print(plain(sweep_verdict(pairs)), highlight=False)
