"""The roofline view: the chart, and every kernel of the current chain in a table under it.

The table's cursor (up/down) picks the kernel highlighted on the chart; kernels without a place
(FLOPs or bytes unknown) are listed with why, never plotted. The app hands the screen the
measurements on screen whenever they change, so it follows edits and re-measures while open.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from probes.link.protocol import Measurement
from probes.link.summary import format_flops, format_si, format_size, input_dtypes
from tui.screens.own_footer import OwnFooter
from tui.widgets.cells import CELL_PADDING, display_name, fit_kernel, plain
from tui.widgets.keys_in_order import ScreenKeysInOrder
from tui.widgets.passes import SHORT
from tui.widgets.roofline import RooflineChart, marker
from tui.widgets.roofline_points import Entry, Roofs, bound, entries, pct_of_roof
from tui.widgets.sweep_pane import MODE_STYLES
from tui.widgets.tables import RowsTable, column_widths

NAME_WIDTH = 34
"""The kernel column at its widest. Where the view is narrower, names are shortened first (down to
MIN_NAME_WIDTH), then the FLOP/B column is left out (the chart's x axis shows it): a figure is never
cut at the table's edge (at 80x24 "103%" read "1")."""
MIN_NAME_WIDTH = 12
SCROLLBAR_WIDTH = 2
"""Kept free for the vertical scrollbar that a long table shows."""


UNPLACED = {"bytes unknown": "no bytes", "no time measured": "no time", "no intensity": "no FLOP/B"}
"""Why a kernel with FLOPs has no place, in the "bound" column's few cells."""


def format_intensity(flop_per_byte: float) -> str:
    return f"{flop_per_byte:,.0f}" if flop_per_byte >= 1000 else f"{flop_per_byte:.3g}"


def columns(with_intensity: bool) -> list[Text | str]:
    figures = [Text("FLOPs", justify="right"), Text("FLOP/B", justify="right")][: 2 if with_intensity else 1]
    return [
        "mode",
        "pass",
        "kernel",
        *figures,
        Text("FLOP/s", justify="right"),
        Text("of roof", justify="right"),
        "bound",
    ]


def entry_cells(e: Entry, r: Roofs, name_width: int, with_intensity: bool = True) -> list[Text]:
    style = MODE_STYLES.get(e.mode, "")
    cells = [
        Text(f"{marker(e) if e.placed else ' '} {e.mode}", style=style),
        Text(SHORT.get(e.row.pass_ or "", ""), style="cyan" if e.row.pass_ == "backward" else ""),
        Text(fit_kernel(display_name(e.row), name_width)),
    ]
    found = bound(e, r)
    if e.row.flops is None:
        figures = [Text("unknown", style="dim italic"), *[Text("")] * (3 if with_intensity else 2)]
        return [*cells, *figures, Text(found or "-", style="" if found else "dim")]
    share = pct_of_roof(e, r)
    intensity = Text(format_intensity(e.intensity) if e.intensity is not None else "-", justify="right")
    rate = format_si(e.tflops * 1e12, "").rstrip() if e.tflops is not None else "-"
    why_not = UNPLACED.get(e.why_not or "", e.why_not or "")
    return [
        *cells,
        Text(format_flops(e.row.flops), justify="right"),
        *([intensity] if with_intensity else []),
        Text(rate, justify="right"),
        Text(f"{share:.0f}%" if share is not None else "-", justify="right"),
        Text(found or why_not, style="" if found else "dim italic"),
    ]


def table_for_width(entries: list[Entry], r: Roofs, width: int) -> tuple[list[Text | str], list[list[Text]]]:
    """The table's columns and rows, made to fit ``width`` cells (see NAME_WIDTH)."""
    name_width = NAME_WIDTH
    for with_intensity in (True, False):
        heads = columns(with_intensity)
        widths = column_widths(heads, [entry_cells(e, r, 0, with_intensity) for e in entries])
        others = sum(widths) - widths[2] + CELL_PADDING * len(heads) + SCROLLBAR_WIDTH
        name_width = min(NAME_WIDTH, width - others)
        if name_width >= MIN_NAME_WIDTH:
            break
    name_width = max(MIN_NAME_WIDTH, name_width)
    return heads, [entry_cells(e, r, name_width, with_intensity) for e in entries]


class RooflineScreen(OwnFooter, ScreenKeysInOrder, ModalScreen[None]):
    DEFAULT_CSS = """
    RooflineScreen { align: center middle; background: $background 60%; }
    RooflineScreen #roofline {
        width: 98%; max-width: 160; height: 96%; border: round $accent; background: $panel; padding: 0 1;
    }
    RooflineScreen #roofline-title { text-style: bold; }
    RooflineScreen #roofline-table { height: auto; max-height: 40%; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,f", "dismiss", "Close")]

    def __init__(self, title: str, measurements: list[Measurement], roofs: Roofs) -> None:
        super().__init__()
        self.title_text = title
        self.entries = entries(measurements)
        self.roofs = roofs

    def compose(self) -> ComposeResult:
        with Vertical(id="roofline"):
            yield Static(id="roofline-title")
            yield RooflineChart(id="roofline-chart")
            yield RowsTable(id="roofline-table", cursor_type="row", zebra_stripes=False)
            yield Static(id="roofline-note", classes="dialog-hint")
            yield Static(
                "↑↓: pick a kernel · escape: close · y: FLOP/s · x: FLOP per byte moved", classes="dialog-hint"
            )

    def on_mount(self) -> None:
        self.draw()
        self.query_one(RowsTable).focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self.draw)  # the table is fitted to the view's width once laid out

    def show(self, title: str, measurements: list[Measurement], roofs: Roofs) -> None:
        """New measurements (an edit, a re-measure): redraw, keeping the cursor's row."""
        self.title_text, self.entries, self.roofs = title, entries(measurements), roofs
        if self.is_mounted:
            self.draw()

    def draw(self) -> None:
        self.query_one("#roofline-title", Static).update(plain(self.title_text, "bold"))
        chart = self.query_one(RooflineChart)
        chart.set_data(self.entries, self.roofs)
        width = self.query_one("#roofline").content_size.width or 76  # not laid out yet
        heads, rows = table_for_width(self.entries, self.roofs, width)
        if not rows:
            rows = [[Text(""), Text(""), Text("no kernels measured yet", style="dim italic")]]
        self.query_one(RowsTable).fill(heads, rows)
        self.query_one("#roofline-note", Static).update(self.note())
        chart.selected = self.query_one(RowsTable).cursor_row if self.entries else None

    def note(self) -> Text:
        placed = sum(e.placed for e in self.entries)
        unknown = len(self.entries) - placed
        text = Text(f"{placed} of {len(self.entries)} kernels placed")
        if unknown:
            text.append(f"; {unknown} not placed: their FLOPs or bytes are unknown (never guessed)", style="dim")
        return text

    @on(DataTable.RowHighlighted)
    def _picked(self, event: DataTable.RowHighlighted) -> None:
        self.query_one(RooflineChart).selected = event.cursor_row if self.entries else None


def roofline_title(name: str, measurements: list[Measurement], stale: str | None) -> str:
    """The chain's name (its text's first line is often an input's declaration), where it ran."""
    m = measurements[0] if measurements else None
    where = f" · N={format_size(m.size)} · {input_dtypes(m)} · {m.device}" if m else ""
    return f"roofline · {name}{where}" + (f" · STALE: {stale}" if stale else "")
