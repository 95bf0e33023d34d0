"""Rich tables of measurements, as ``kernel-tui profile`` prints them (live or from a report).

Every string that came from outside (kernel names, ops, reasons, the device label: a report file
can hold anything) is made inert and placed as a rich ``Text``, never parsed as markup.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from probes.link.protocol import COMPILED_MODES, MODES, Measurement
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
    sweep_verdict,
)


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


def kernels_table(size: int, results: list[Measurement]) -> Table:
    """Kernel rows of every mode at one size, a section per mode; memcpy/memset rows dimmed."""
    table = Table(
        title=f"N = {format_size(size)}  ({size:,} elements)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    table.add_column("kernel", no_wrap=True, overflow="ellipsis", min_width=16, max_width=34)
    for column in ("n", "µs", "bytes", "GB/s", "%pk"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("ops", overflow="fold", min_width=8)
    for m in results:
        table.add_row(plain(mode_label(m), "bold"))
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
                plain(", ".join(op.removeprefix("aten::") for op in row.ops)),
            )
        if not m.kernels:
            table.add_row(plain("(no kernels)", "dim"))
        if m.fallback_reason:
            table.add_row(plain(m.fallback_reason, "yellow"))
    return table


def headline_table(results: list[Measurement]) -> Table:
    table = Table(box=None, padding=(0, 1))
    for column in ("mode", "kernels", "bytes/call", "transfers", "device", "wall", "compile"):
        table.add_column(column, justify="left" if column == "mode" else "right", no_wrap=True)
    for m in results:
        table.add_row(
            plain(mode_label(m)),
            f"{m.kernels_per_call:g}",
            format_bytes(m.bytes_per_call),
            format_transfers(m),
            _time_cell(m.device_time_us, m.device_time_us_iqr, m.noisy),
            _time_cell(m.wall_time_us, m.wall_time_us_iqr, m.noisy),
            f"{m.compile_time_s:.2f} s" if m.compile_time_s is not None else "-",
        )
    return table


def notes(results: list[Measurement]) -> list[Text]:
    """Noise reasons and diagnostics, one line each, under the size they belong to."""
    lines = []
    for m in results:
        if m.grad and m.forward_time_us is not None and m.backward_time_us is not None:
            lines.append(
                plain(
                    f"{m.mode}: forward {format_time_us(m.forward_time_us)}, backward {format_time_us(m.backward_time_us)} (device)"
                )
            )
        for reason in m.noise_reasons:
            lines.append(plain(f"~ {m.mode}: noisy: {reason}", "yellow"))
        for line in m.diagnostics:
            lines.append(plain(f"! {m.mode}: {line}", "dim"))
    return lines


def sweep_table(results: list[Measurement]) -> Table:
    """Every size x mode, with compiled/eager speedups by device time and by wall time."""
    table = Table(title="sweep", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for column in ("N", "mode", "kernels", "device", "wall", "GB/s", "x device", "x wall"):
        table.add_column(column, justify="left" if column == "mode" else "right", no_wrap=True)
    speedups = {(p.size, mode): p for mode in COMPILED_MODES for p in comparisons(results, mode)}
    for m in sorted(results, key=lambda r: (r.size, _mode_order(r.mode))):
        pair = speedups.get((m.size, m.mode))
        device, wall = (pair.device_ratio, pair.wall_ratio) if pair else (None, None)
        table.add_row(
            format_size(m.size),
            plain(mode_label(m)),
            f"{m.kernels_per_call:g}",
            _time_cell(m.device_time_us, m.device_time_us_iqr, m.noisy),
            _time_cell(m.wall_time_us, m.wall_time_us_iqr, m.noisy),
            format_gbps(m.gbps).removesuffix(" GB/s"),
            _ratio_cell(device),
            _ratio_cell(wall),
        )
    return table


def _ratio_cell(found: Ratio | None) -> Text:
    """The ratio; a ``?`` marks one whose interval straddles 1 (no conclusion)."""
    if found is None:
        return Text("")
    value = f"{format_ratio(found.value)}x"
    return Text(value + "?", style="yellow") if found.verdict == "unclear" else Text(value)


def print_size(console: Console, batch: list[Measurement]) -> None:
    """One size: its kernel rows, the headline counts, notes, and the eager -> compiled line."""
    batch = sorted(batch, key=lambda m: _mode_order(m.mode))
    console.print(kernels_table(batch[0].size, batch))
    console.print(headline_table(batch))
    for line in notes(batch):
        console.print(line, soft_wrap=True)
    eager = next((m for m in batch if m.mode == "eager"), None)
    compiled = next((m for m in batch if m.mode != "eager"), None)
    console.print(plain(headline(eager, compiled), "bold"), "\n", highlight=False, sep="")


def print_sweep(console: Console, results: list[Measurement]) -> None:
    console.print(sweep_table(results))
    pairs = comparisons(results)
    if pairs:
        console.print(plain(sweep_verdict(pairs)), highlight=False)
