"""Two results side by side (two chains, or one chain in two modes), with what changed.

Rows: kernels per call, bytes per call (as array-sized transfers), device time, wall time, and
the kernel names present on one side only. The change column reads ``2 -> 1 kernels``,
``5N -> 3N``, ``1.42x faster``: green when the right side is better, red when worse.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement as CellWidths
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestDone, RequestFailed
from probes.link.safe_text import inert_line
from probes.link.summary import (
    format_bytes,
    format_size,
    format_time_us,
    format_transfers,
    input_dtypes,
    mode_label,
    ratio,
)
from tui.bridge import WorkerEvent
from tui.screens.own_footer import OwnFooter
from tui.widgets.cells import display_name, fit_kernel, plain
from tui.widgets.keys_in_order import ScreenKeysInOrder
from tui.widgets.spread import cost_text, time_text

NAME_MIN_CELLS = 16
"""A kernel name column narrower than this would keep too little of the names."""


@dataclass
class Side:
    label: str
    """``chain · mode`` as the column header."""
    measurement: Measurement | None = None
    failure: RequestFailed | None = None
    pending: bool = True


@dataclass(frozen=True)
class DiffRow:
    what: str
    left: str
    right: str
    change: str
    style: str
    """green (right better), red (worse), dim (same)."""
    names: bool = False
    """``left`` and ``right`` are kernel names, one a line."""


class KernelNames:
    """Kernel names one a line, each cut in its middle to the cell's width (``fit_kernel``), never
    folded: folding split ``vectorized_elementwise_kernel<clamp_scalar>`` inside its op's name."""

    def __init__(self, lines: str) -> None:
        self.names = lines.split("\n")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> CellWidths:
        longest = max(cell_len(name) for name in self.names)
        return CellWidths(min(longest, NAME_MIN_CELLS), longest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(fit_kernel(name, options.max_width) for name in self.names), no_wrap=True, overflow="crop")


def _style(left: float, right: float) -> str:
    if abs(left - right) <= 1e-9 * max(abs(left), abs(right), 1):
        return "dim"
    return "green" if right < left else "red"


def _time_row(a: Measurement, b: Measurement, which: Literal["wall", "device"]) -> DiffRow:
    """The right side against the left in words (``4.74x faster``), as far as the two spreads
    allow (a ratio whose interval straddles 1 is no clear difference). The times themselves are in
    their columns: repeated here with their spreads, they wrapped over three lines at 120 columns."""
    found = ratio(a, b, which)
    left, right = time_text(a, which), time_text(b, which)
    if found is None:
        return DiffRow(f"{which} time", left.plain, right.plain, f"{left.plain} -> {right.plain}", "dim")
    style = {"faster": "green", "slower": "red", "unclear": "dim"}[found.verdict]
    return DiffRow(f"{which} time", left.plain, right.plain, cost_text(a, b, which).plain, style)


def kernel_names(m: Measurement) -> list[str]:
    return [display_name(k) for k in m.kernels]


def diff_rows(a: Measurement, b: Measurement) -> list[DiffRow]:
    ka, kb = a.kernels_per_call, b.kernels_per_call
    rows = [
        DiffRow(
            "kernels/call", f"{ka:g}", f"{kb:g}", f"{ka:g} -> {kb:g} kernel{'' if kb == 1 else 's'}", _style(ka, kb)
        ),
    ]
    ta, tb = format_transfers(a), format_transfers(b)
    ba, bb = a.bytes_per_call or 0, b.bytes_per_call or 0
    rows.append(
        DiffRow(
            "bytes/call",
            f"{ta} ({format_bytes(a.bytes_per_call)})",
            f"{tb} ({format_bytes(b.bytes_per_call)})",
            f"{ta} -> {tb}",
            _style(ba, bb),
        )
    )
    rows.append(_time_row(a, b, "device"))
    rows.append(_time_row(a, b, "wall"))
    names_a, names_b = kernel_names(a), kernel_names(b)
    only_a = [n for n in names_a if n not in names_b]
    only_b = [n for n in names_b if n not in names_a]
    rows.append(
        DiffRow(
            "only here",
            "\n".join(only_a) or "-",
            "\n".join(only_b) or "-",
            f"{len(only_a)} gone, {len(only_b)} new" if only_a or only_b else "same kernels",
            "yellow" if only_a or only_b else "dim",
            names=True,
        )
    )
    return rows


def not_alike(a: Measurement, b: Measurement) -> str | None:
    """Why two results were not measured alike (another size, device, dtype or grad setting), so
    that no difference between them means anything; None when they were."""
    for what, left, right in (
        ("size", format_size(a.size), format_size(b.size)),
        ("device", a.device, b.device),
        ("dtype", a.dtype, b.dtype),
        ("pass", "fwd+bwd" if a.grad else "forward", "fwd+bwd" if b.grad else "forward"),
    ):
        if left != right:
            return f"measured at another {what} ({inert_line(left)} vs {inert_line(right)})"
    return None


def compare_table(left: Side, right: Side) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("", style="dim", no_wrap=True)
    table.add_column(Text(left.label, overflow="fold"), max_width=40)
    table.add_column(Text(right.label, overflow="fold"), max_width=40)
    table.add_column("change", max_width=36)
    a, b = left.measurement, right.measurement
    differ = not_alike(a, b) if a is not None and b is not None else None
    if differ is not None:
        table.add_row("", "", "", plain(f"not compared: {differ}", "yellow", one_line=False))
        return table
    if a is None or b is None:

        def state(side: Side) -> Text:
            if side.measurement is not None:
                m = side.measurement
                device = format_time_us(m.device_time_us)
                return Text(f"{m.kernels_per_call:g} kernels · {format_transfers(m)} · device {device}")
            if side.failure is not None:
                return plain(f"✗ {side.failure.error.located()}", "bold red", one_line=False)
            return Text(
                "measuring…" if side.pending else "no result", style="italic cyan" if side.pending else "dim italic"
            )

        table.add_row("", state(left), state(right), "")
        return table
    for row in diff_rows(a, b):
        side = KernelNames if row.names else (lambda text: Text(text, overflow="fold"))
        table.add_row(row.what, side(row.left), side(row.right), Text(row.change, style=row.style, overflow="fold"))
    return table


class CompareScreen(OwnFooter, ScreenKeysInOrder, ModalScreen[None]):
    BINDINGS = [Binding("escape,q,o", "dismiss", "Close")]
    table_ready = False
    """Mounted: the table can be drawn (a side's rows may come before)."""

    def __init__(self, left: Side, right: Side, title: str = "compare", *, one_chain: bool = False) -> None:
        super().__init__()
        self.left = left
        self.right = right
        self.title_text = inert_line(title)
        self.one_chain = one_chain
        """Both sides ran one chain (eager vs compiled): a side is labelled by its mode alone."""
        self._expected: dict[
            str, tuple[ProfileRequest, list[tuple[str, str]], dict[str, Measurement], list[RequestFailed]]
        ] = {}

    def expect(self, request: ProfileRequest, pairs: list[tuple[str, str]]) -> None:
        """``request`` (sent with this screen as the reply target) fills the sides in ``pairs``: (mode, side)."""
        self._expected[request.id] = (request, pairs, {}, [])

    def on_worker_event(self, message: WorkerEvent) -> None:
        """Events of the requests this screen expects (they bubble on to the app, which caches them)."""
        found = self._expected.get(message.request_id)
        if found is None:
            return
        request, pairs, results, failures = found
        event = message.event
        if isinstance(event, MeasurementResult):
            results[event.measurement.mode] = event.measurement
        elif isinstance(event, RequestFailed):
            failures.append(event)
        elif isinstance(event, RequestDone):
            del self._expected[message.request_id]
            for mode, which in pairs:
                m = results.get(mode)
                failure = None if m is not None else next((f for f in failures if f.mode in (None, mode)), None)
                self.update_side(
                    which,
                    Side(side_label(None if self.one_chain else request.chain, m, mode), m, failure, pending=False),
                )

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail", id="compare"):
            yield Static(Text(self.title_text, style="bold"), classes="detail-title")
            yield Static(id="compare-table")
            yield Static(id="compare-where", classes="dialog-hint")
            yield Static(
                "escape: close · green: right is better · red: worse · dim: same (within the noise)",
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        self.table_ready = True
        self.refresh_table()
        self.call_after_refresh(self.refresh_table)  # again at the real width

    def table_text(self, width: int = 110) -> Text:
        """The table rendered to styled text at ``width`` cells."""
        from rich.console import Console

        with open(os.devnull, "w") as sink:
            console = Console(width=width, record=True, file=sink, color_system="truecolor")
            console.print(compare_table(self.left, self.right))
        return Text.from_ansi(console.export_text(styles=True).rstrip("\n"))

    def plain_text(self, width: int = 110) -> str:
        """The table as plain text (for tests and the record)."""
        return self.table_text(width).plain

    def update_side(self, which: str, side: Side) -> None:
        if which == "left":
            self.left = side
        else:
            self.right = side
        self.refresh_table()

    def refresh_table(self) -> None:
        if not self.table_ready:
            return
        width = self.query_one("#compare").content_size.width
        if not width:
            return  # not laid out yet: on_mount draws again after the first refresh
        width = max(40, width - 2)
        self.query_one("#compare-table", Static).update(self.table_text(width))
        m = self.left.measurement or self.right.measurement
        where = f"N={format_size(m.size)} · {input_dtypes(m)} · {inert_line(m.device)}" if m else ""
        self.query_one("#compare-where", Static).update(where)


def side_label(chain: str | None, m: Measurement | None, mode: str) -> str:
    """The chain's first line and the mode it ran in; the mode alone where both sides ran one
    chain (``chain`` None: the title names it)."""
    label = mode_label(m) if m else mode
    if chain is None:
        return label
    first = next((line.strip() for line in chain.splitlines() if line.strip()), chain)
    return f"{inert_line(first)} · {label}"
