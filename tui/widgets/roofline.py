"""The roofline chart: every placed kernel at (FLOP/byte, TFLOP/s) under the machine's roofs,
log-log, drawn with braille dots.

The roof is the lower of the bandwidth roof (TFLOP/s = intensity x measured TB/s, a line of slope
1) and the measured compute peak (flat); a second dtype's compute peak is a dashed line. Eager
kernels are ``●``, compiled ones ``◆`` (hollow ``○``/``◇`` for backward kernels), coloured by mode
as in the sweep; the kernel under the table's cursor is drawn reversed. Pure rendering: the output
depends only on the data and the widget's size.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from probes.link.summary import format_flop_rate, format_si
from tui.widgets.roofline_points import ROOF_STYLE, Entry, Roofs
from tui.widgets.sweep_pane import MODE_STYLES

X_AXIS_NAME = "  FLOP/byte"
_BRAILLE = 0x2800
_DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
"""The bit of the dot at (column 0..1, row 0..3) of a braille cell."""


def flat(tflops: float) -> Callable[[float], float]:
    """A compute roof: the same TFLOP/s at every intensity."""
    return lambda _intensity: tflops


def marker(e: Entry) -> str:
    return mode_marker(e.mode, backward=e.row.pass_ == "backward")


def mode_marker(mode: str, *, backward: bool = False) -> str:
    if mode == "eager":
        return "○" if backward else "●"
    return "◇" if backward else "◆"


def tflops_label(tflops: float) -> str:
    """Decade labels of the y axis: ``100T``, ``1T``, ``10G``, ``1M``."""
    return format_si(tflops * 1e12, "", lambda v: f"{v:.0f}", sep="")


def intensity_label(x: float) -> str:
    return f"{x:g}" if 1e-3 <= x < 1e5 else f"1e{round(math.log10(x))}"


class Plot:
    """A braille canvas over a log-log window (decades ``x0..x1`` by ``y0..y1``)."""

    def __init__(self, cols: int, rows: int, window: tuple[int, int, int, int]) -> None:
        self.cols, self.rows = cols, rows
        self.x0, self.x1, self.y0, self.y1 = window
        self.bits: dict[tuple[int, int], int] = {}
        self.styles: dict[tuple[int, int], str] = {}
        self.marks: dict[tuple[int, int], tuple[str, str]] = {}

    def to_dots(self, x: float, y: float) -> tuple[int, int]:
        """Dot coordinates (column, row from the top) of the value (x, y)."""
        dx = (math.log10(x) - self.x0) / (self.x1 - self.x0) * (self.cols * 2 - 1)
        dy = (self.y1 - math.log10(y)) / (self.y1 - self.y0) * (self.rows * 4 - 1)
        return round(dx), round(dy)

    def x_at(self, dot_col: int) -> float:
        return 10 ** (self.x0 + dot_col / (self.cols * 2 - 1) * (self.x1 - self.x0))

    def dot(self, dx: int, dy: int, style: str) -> None:
        if 0 <= dx < self.cols * 2 and 0 <= dy < self.rows * 4:
            cell = (dx // 2, dy // 4)
            self.bits[cell] = self.bits.get(cell, 0) | _DOT_BITS[dx % 2][dy % 4]
            self.styles[cell] = style

    def curve(self, f: Callable[[float], float | None], style: str, *, dashed: bool = False) -> None:
        """``y = f(x)`` across the window, joined dot to dot (no gaps where it is steep)."""
        last = None
        for col in range(self.cols * 2):
            if dashed and col % 4 >= 2:
                last = None
                continue
            y = f(self.x_at(col))
            if y is None or y <= 0:
                last = None
                continue
            _, dy = self.to_dots(1.0, y)
            for row in range(
                min(dy, last) if last is not None else dy, (max(dy, last) if last is not None else dy) + 1
            ):
                self.dot(col, row, style)
            last = dy

    def mark(self, x: float, y: float, char: str, style: str) -> None:
        dx, dy = self.to_dots(x, y)
        cell = (dx // 2, dy // 4)
        if 0 <= cell[0] < self.cols and 0 <= cell[1] < self.rows:
            self.marks[cell] = (char, style)

    def line(self, row: int) -> Text:
        text = Text()
        for col in range(self.cols):
            cell = (col, row)
            if cell in self.marks:
                char, style = self.marks[cell]
                text.append(char, style=style)
            elif cell in self.bits:
                text.append(chr(_BRAILLE + self.bits[cell]), style=self.styles[cell])
            else:
                text.append(" ")
        return text


def window(entries: list[Entry], roofs: Roofs) -> tuple[int, int, int, int]:
    """Whole decades that hold every placed kernel, the ridge and the compute roofs."""
    xs = [math.log10(e.intensity) for e in entries if e.placed and e.intensity]
    ys = [math.log10(e.tflops) for e in entries if e.placed and e.tflops]
    if roofs.ridge:
        xs.append(math.log10(roofs.ridge))
    ys += [math.log10(r.tflops) for r in roofs.compute]
    if not xs:
        xs = [0.0]
    x0, x1 = math.floor(min(xs)) - 1, math.ceil(max(xs)) + 1
    if not ys and roofs.bandwidth_gbps:
        ys = [math.log10(roofs.bandwidth_gbps / 1000 * 10**x) for x in (x0, x1)]
    if not ys:
        ys = [0.0]
    y0, y1 = math.floor(min(ys)) - 1, math.ceil(max(ys) + 0.15)
    return x0, max(x1, x0 + 3), y0, max(y1, y0 + 2)


class RooflineChart(Widget):
    """Set ``entries``/``roofs`` with :meth:`set_data`; ``selected`` is the highlighted entry."""

    DEFAULT_CSS = """
    RooflineChart {
        height: 1fr;
        min-height: 8;
    }
    """

    selected: reactive[int | None] = reactive(None)

    def __init__(self, *, id: str | None = None) -> None:  # Textual's name
        super().__init__(id=id)
        self.entries: list[Entry] = []
        self.roofs = Roofs(None)

    def set_data(self, entries: list[Entry], roofs: Roofs) -> None:
        self.entries = entries
        self.roofs = roofs
        self.refresh()

    def render(self) -> Text:
        return chart_text(self.entries, self.roofs, self.selected, self.size.width, self.size.height)


def legend(entries: list[Entry], r: Roofs, width: int) -> Text:
    text = Text()
    modes = list(dict.fromkeys(e.mode for e in entries if e.placed))
    for mode in modes:
        text.append(mode_marker(mode), style=MODE_STYLES.get(mode, "white"))
        text.append(f" {mode}  ")
    if any(e.row.pass_ == "backward" for e in entries if e.placed):
        text.append("○◇ backward  ", style="dim")
    if r.bandwidth_gbps:
        text.append("── ", style=ROOF_STYLE)
        text.append(f"{r.bandwidth_gbps:,.0f} GB/s  ")
    for i, roof in enumerate(r.compute):
        text.append("── " if i == 0 else "╌╌ ", style=ROOF_STYLE)
        text.append(f"{roof.label} {format_flop_rate(roof.tflops)}  ")
    if not r.compute:
        text.append("(no compute peak measured)", style="dim")
    text.truncate(width, overflow="ellipsis")
    return text


def chart_text(entries: list[Entry], r: Roofs, selected: int | None, width: int, height: int) -> Text:
    """The chart in ``width`` x ``height`` cells: the legend, the plot and its axes; no line is
    longer than ``width`` and nothing but the roofs and the kernels is drawn inside the plot."""
    placed = [e for e in entries if e.placed]
    if not placed and not r.bandwidth_gbps and not r.compute:
        return Text("no kernel has known FLOPs and bytes, and no roof is known", style="dim", justify="center")
    x0, x1, y0, y1 = window(entries, r)
    labels = {k: tflops_label(10.0**k) for k in range(y0, y1 + 1)}
    margin = max(map(len, labels.values())) + 1
    cols, rows = width - margin - 1, height - 3  # legend, axis, tick labels
    if cols < 10 or rows < 3:
        return Text("too small for the roofline", style="dim")
    plot = Plot(cols, rows, (x0, x1, y0, y1))
    for roof in r.compute[1:]:
        plot.curve(flat(roof.tflops), ROOF_STYLE, dashed=True)
    first = r.compute[0].tflops if r.compute else None
    bandwidth = r.bandwidth_gbps

    def attainable(x: float) -> float:
        return min(v for v in (x * bandwidth / 1000 if bandwidth else None, first) if v)

    plot.curve(attainable, ROOF_STYLE)
    for i, e in enumerate(entries):
        if e.intensity is not None and e.tflops is not None and e.placed and i != selected:
            plot.mark(e.intensity, e.tflops, marker(e), f"bold {MODE_STYLES.get(e.mode, 'white')}")
    if selected is not None and 0 <= selected < len(entries):
        e = entries[selected]
        if e.intensity is not None and e.tflops is not None and e.placed:
            plot.mark(e.intensity, e.tflops, marker(e), "bold reverse")
    text = Text(no_wrap=True, overflow="crop")
    text.append_text(legend(entries, r, width))
    tick_rows: dict[int, str] = {}
    for k in range(y0, y1 + 1):
        tick_rows.setdefault(plot.to_dots(1.0, 10.0**k)[1] // 4, labels[k])
    for row in range(rows):
        text.append("\n")
        text.append(tick_rows.get(row, "").rjust(margin - 1) + " ", style="dim")
        text.append("┤" if row in tick_rows else "│", style="dim")
        text.append_text(plot.line(row))
    ticks = {plot.to_dots(10.0**k, 1.0)[0] // 2: intensity_label(10.0**k) for k in range(x0, x1 + 1)}
    text.append("\n" + " " * margin + "└" + "".join("┬" if c in ticks else "─" for c in range(cols)), style="dim")
    under = [" "] * (cols + 1)
    for col, label in sorted(ticks.items()):
        start = max(0, min(col + 1 - len(label) // 2, cols + 1 - len(label)))
        if all(ch == " " for ch in under[max(0, start - 1) : start + len(label) + 1]):
            under[start : start + len(label)] = list(label)
    labels_line = " " * margin + "".join(under).rstrip()
    text.append("\n" + labels_line, style="dim")
    if len(labels_line) + len(X_AXIS_NAME) <= width:  # never past the edge (the hint names both axes)
        text.append(X_AXIS_NAME, style=Style(dim=True, italic=True))
    return text
