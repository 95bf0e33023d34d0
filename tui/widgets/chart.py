"""A small log-log line chart drawn with braille dots, for the sweep: time or GB/s against size.

textual-plot has no log axis, so this draws its own: both axes are log10, ticks sit on decades
(labelled 1e2..1e8 along x, time units or GB/s along y), each series is a braille line with a
marker at every measured point, horizontal reference lines (the device's peak bandwidth) are
dashed, and an optional vertical mark (the crossover size) is dotted. Pure rendering: the output
depends only on the data and the widget size, so snapshots are stable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

_BRAILLE_BASE = 0x2800
# Dot bit for (column 0..1, row 0..3) within one braille cell.
_DOT = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


@dataclass
class Series:
    label: str
    style: str
    points: list[tuple[float, float]] = field(default_factory=list)
    marker: str = "●"
    marks: dict[float, str] = field(default_factory=dict)
    """The marker of a point whose own differs, by its x (a sweep spread over devices: each
    point its device's)."""


@dataclass
class HLine:
    value: float
    label: str
    style: str


def time_label(us: float) -> str:
    """Compact decade labels: 1µs, 10µs, 100µs, 1ms, 10ms, 1s, 100ns."""
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("µs", 1.0), ("ns", 1e-3)):
        if us >= scale * 0.999:
            value = us / scale
            return f"{value:.0f}{unit}" if value >= 1 else f"{value:.1f}{unit}"
    return f"{us * 1e3:.2g}ns"


def gbps_label(gbps: float) -> str:
    if gbps >= 1000:
        return f"{gbps / 1000:g}TB/s"
    if gbps >= 1:
        return f"{gbps:g}GB/s"
    return f"{gbps * 1000:g}MB/s"


def size_label(n: float) -> str:
    return f"1e{round(math.log10(n))}"


class LogChart(Widget):
    """Log-log braille chart. Set ``series``/``hlines``/``vmark`` with :meth:`set_data`."""

    DEFAULT_CSS = """
    LogChart {
        height: 1fr;
        min-height: 6;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: list[Series] = []
        self.hlines: list[HLine] = []
        self.vmark: tuple[float, str] | None = None
        self.y_format: Callable[[float], str] = time_label
        self.empty_message = "no sweep yet"
        self.legend: tuple[Text, ...] = ()
        """The legend's entries where the series' own labels would not say it (one per series)."""

    def set_data(
        self,
        series: Sequence[Series],
        *,
        hlines: Sequence[HLine] = (),
        vmark: tuple[float, str] | None = None,
        y_format: Callable[[float], str] = time_label,
        empty_message: str | None = None,
        legend: Sequence[Text] = (),
    ) -> None:
        """``legend``: entries of the legend in place of one per series (several devices: a
        marker per device, a colour per mode)."""
        data = (
            [s for s in series if s.points],
            [h for h in hlines if h.value and h.value > 0],
            vmark,
            y_format,
            self.empty_message if empty_message is None else empty_message,
            tuple(legend),
        )
        if data == (self.series, self.hlines, self.vmark, self.y_format, self.empty_message, self.legend):
            return  # the same picture: the sweep pane draws on every key, and each repaint re-plotted every line
        self.series, self.hlines, self.vmark, self.y_format, self.empty_message, self.legend = data
        self.refresh()

    # -- geometry ----------------------------------------------------------------------------

    def _ranges(self) -> tuple[int, int, int, int] | None:
        xs = [math.log10(x) for s in self.series for x, y in s.points if x > 0 and y > 0]
        ys = [math.log10(y) for s in self.series for x, y in s.points if x > 0 and y > 0]
        ys += [math.log10(h.value) for h in self.hlines]
        if not xs or not ys:
            return None
        x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
        if x1 - x0 < 1:
            x0, x1 = x0 - 1, x1 + 1
        y0, y1 = math.floor(min(ys) - 0.05), math.ceil(max(ys) + 0.05)
        if y1 - y0 < 1:
            y1 = y0 + 1
        return x0, x1, y0, y1

    def render(self) -> Text:
        width, height = self.size.width, self.size.height
        ranges = self._ranges()
        if ranges is None or width < 20 or height < 5:
            return Text(self.empty_message, style="dim", justify="center")
        x0, x1, y0, y1 = ranges
        y_ticks = list(range(y0, y1 + 1))
        labels = {k: self.y_format(10.0**k) for k in y_ticks}
        margin = max(len(v) for v in labels.values()) + 1
        plot_w = width - margin - 1
        plot_h = height - 3  # legend row, axis row, tick-label row
        if plot_w < 8 or plot_h < 2:
            return Text(self.empty_message, style="dim", justify="center")
        dots_w, dots_h = plot_w * 2, plot_h * 4

        def dot_x(lx: float) -> int:
            return round((lx - x0) / (x1 - x0) * (dots_w - 1))

        def dot_y(ly: float) -> int:
            return round((y1 - ly) / (y1 - y0) * (dots_h - 1))

        cells: dict[tuple[int, int], int] = {}
        colors: dict[tuple[int, int], str] = {}
        markers: dict[tuple[int, int], tuple[str, str]] = {}

        def put(dx: int, dy: int, style: str) -> None:
            if 0 <= dx < dots_w and 0 <= dy < dots_h:
                key = (dx // 2, dy // 4)
                cells[key] = cells.get(key, 0) | _DOT[dx % 2][dy % 4]
                colors[key] = style

        # Reference lines first, so data lines draw over them.
        for h in self.hlines:
            dy = dot_y(math.log10(h.value))
            for dx in range(0, dots_w, 4):
                put(dx, dy, h.style)
                put(dx + 1, dy, h.style)
        if self.vmark is not None and self.vmark[0] > 0:
            dx = dot_x(math.log10(self.vmark[0]))
            for dy in range(0, dots_h, 3):
                put(dx, dy, "dim yellow")
        for s in self.series:
            pts = sorted((math.log10(x), math.log10(y)) for x, y in s.points if x > 0 and y > 0)
            prev = None
            for lx, ly in pts:
                px, py = dot_x(lx), dot_y(ly)
                if prev is not None:
                    steps = max(abs(px - prev[0]), abs(py - prev[1]), 1)
                    for i in range(steps + 1):
                        x = round(prev[0] + (px - prev[0]) * i / steps)
                        y = round(prev[1] + (py - prev[1]) * i / steps)
                        put(x, y, s.style)
                        put(x, y + 1, s.style)  # two dots thick: reads as a line, not a dotted trail
                else:
                    put(px, py, s.style)
                prev = (px, py)
            for at, value in s.points:
                if at > 0 and value > 0:
                    cell = (dot_x(math.log10(at)) // 2, dot_y(math.log10(value)) // 4)
                    markers[cell] = (s.marks.get(at, s.marker), s.style)

        text = Text(no_wrap=True, overflow="crop")
        # Legend: whole entries only (one that does not fit is left out, never cut).
        entries = list(self.legend) or [Text.assemble(("━━ ", s.style), f"{s.label}  ") for s in self.series]
        entries += [Text.assemble(("╌╌ ", h.style), f"{h.label}  ") for h in self.hlines]
        if self.vmark is not None:
            entries.append(Text.assemble(("┆ ", "yellow"), self.vmark[1]))
        legend = Text(" " * margin)
        for entry in entries:
            if legend.cell_len + entry.cell_len <= width:
                legend.append_text(entry)
        text.append_text(legend)
        text.append("\n")
        tick_rows: dict[int, str] = {}
        for k in y_ticks:
            row = dot_y(k) // 4
            tick_rows.setdefault(row, labels[k])
        for row in range(plot_h):
            label = tick_rows.get(row, "")
            text.append(label.rjust(margin - 1) + " ", style="dim")
            text.append("┤" if row in tick_rows else "│", style="dim")
            for col in range(plot_w):
                key = (col, row)
                if key in markers:
                    char, style = markers[key]
                    text.append(char, style=Style.parse(style) + Style(bold=True))
                elif key in cells:
                    text.append(chr(_BRAILLE_BASE + cells[key]), style=colors[key])
                else:
                    text.append(" ")
            text.append("\n")
        # x axis.
        x_ticks = list(range(x0, x1 + 1))
        if len(x_ticks) * 5 > plot_w:
            x_ticks = x_ticks[:: math.ceil(len(x_ticks) * 5 / plot_w)]
        tick_cols = {dot_x(k) // 2: k for k in x_ticks}
        axis = "".join("┬" if c in tick_cols else "─" for c in range(plot_w))
        text.append(" " * margin + "└" + axis + "\n", style="dim")
        line = [" "] * (plot_w + 4)
        for col, k in tick_cols.items():
            label = size_label(10.0**k)
            start = max(0, min(col + 1 - len(label) // 2, plot_w + 1 - len(label)))
            if all(ch == " " for ch in line[max(0, start - 1) : start + len(label) + 1]):
                line[start : start + len(label)] = list(label)
        text.append(" " * margin + "".join(line).rstrip().ljust(plot_w + 1)[: plot_w + 1], style="dim")
        text.append(" N", style="dim italic")
        lines = text.split("\n")
        for row_text in lines:
            row_text.truncate(width)
        return Text("\n").join(lines)
