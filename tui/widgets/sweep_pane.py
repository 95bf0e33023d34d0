"""The sweep pane: every size x mode as a table, the crossover size, and a log-log chart.

Rows stream in as the worker measures them. The chart plots, per mode, the wall time per call,
the device time per call, or the achieved GB/s with the device's measured peak as a dashed line
(``g`` cycles); the size from which compiled is faster per call at every larger size measured
(the crossover) is called out in text and marked on the chart. Before the first sweep the pane
is one line that says how to start one (the main grid then gives it little room).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from probes.protocol import COMPILED_MODES, MODES, Measurement
from probes.summary import comparisons, crossover, format_gbps, format_size, format_time_us, mode_label
from tui.runs import SweepResults
from tui.views import SweepView
from tui.widgets.cells import gbps_cell, pct, plain, speedup_cell
from tui.widgets.pane import Pane
from tui.widgets.chart import HLine, LogChart, Series, gbps_label, time_label
from tui.widgets.tables import fill_table

MODE_STYLES = {
    "eager": "#ff8c42",
    "compiled": "#4fc3f7",
    "max-autotune": "#b388ff",
    "reduce-overhead": "#69f0ae",
    "dynamic": "#ffd54f",
}
CHART_TITLES = {"time": "wall time per call", "device": "device time per call", "gbps": "achieved GB/s"}
NARROW_WIDTH = 110
"""Narrower than this, the table has one row per size (each mode's wall time, then the speedup)."""


@dataclass(frozen=True)
class SweepPaneState:
    view: SweepView
    chart: str = "time"
    peak_gbps: float | None = None
    hint: str = "press s to sweep"
    """How to start a sweep from where the focus is now."""


def pct_of_peak(m: Measurement, peak: float | None) -> float | None:
    peak = m.peak_gbps or peak
    gbps = m.gbps
    if not peak or gbps is None:
        return None
    return gbps / peak * 100


def sweep_rows(rs: SweepResults, narrow: bool, peak: float | None, stale: bool) -> tuple[list[Text], list[list[Text]]]:
    """The table's columns and rows: one row per size x mode, or per size when ``narrow``."""
    results = rs.measurements()
    modes = list(rs.modes)
    speedups = {(p.size, mode): p for mode in COMPILED_MODES for p in comparisons(results, mode)}
    base = "dim" if stale else ""

    def speed_cell(size: int, mode: str) -> Text:
        pair = speedups.get((size, mode))
        speed = pair.wall_speedup if pair else None
        return Text(speedup_cell(speed), style=base or ("green" if (speed or 0) > 1 else "red"), justify="right")

    if narrow:
        columns = [Text("N", justify="right"), *(Text(m if len(m) <= 10 else m[:9] + "…", justify="right") for m in modes)]
        compiled = next((m for m in modes if m != "eager"), None)
        if len(modes) > 1:
            columns.append(Text("speedup", justify="right"))
        rows = []
        for size in sorted({m.size for m in results}):
            cells = [Text(format_size(size), style=base, justify="right")]
            for mode in modes:
                m = rs.at(size, mode)
                cells.append(Text(format_time_us(m.wall_time_us) if m else "", style=base, justify="right"))
            if len(modes) > 1 and compiled:
                cells.append(speed_cell(size, compiled))
            rows.append(cells)
        return columns, rows
    columns = [Text("N", justify="right"), Text("mode")] + [
        Text(label, justify="right") for label in ("kern", "device", "wall", "GB/s", "%peak", "speedup")
    ]

    def mode_style(m: Measurement) -> str:
        return "bold red" if m.mode != "eager" and not m.ran_compiled else MODE_STYLES.get(m.mode, "")

    rows = [
        [
            Text(format_size(m.size), style=base, justify="right"),
            Text(mode_label(m), style=base or mode_style(m)),
            Text(f"{m.kernels_per_call:g}", style=base, justify="right"),
            Text(format_time_us(m.device_time_us), style=base, justify="right"),
            Text(format_time_us(m.wall_time_us), style=base, justify="right"),
            Text(gbps_cell(m.gbps), style=base, justify="right"),
            Text(pct(pct_of_peak(m, peak)), style=base, justify="right"),
            speed_cell(m.size, m.mode),
        ]
        for m in results
    ]
    return columns, rows


def status_line(state: SweepPaneState) -> Text:
    """The crossover (or how to start a sweep), progress, staleness, and the first failure."""
    view = state.view
    rs = view.results
    line = Text()
    results = rs.measurements() if rs else []
    pairs = comparisons(results, view.compile_mode)
    size = crossover(pairs)
    if pairs:
        if size is not None:
            line.append(f"{view.compile_mode} is faster per call from N = {format_size(size)} up", style="bold green")
        else:
            line.append(f"{view.compile_mode} is not faster per call at the largest size measured", style="bold yellow")
    elif rs is None:
        line.append(f"no sweep yet: {state.hint} ", style="dim italic")
        line.append(", ".join(format_size(s) for s in view.sizes), style="dim")
    if rs is not None:
        expected = len(rs.sizes) * len(rs.modes)
        got = len(rs.results) + sum(1 for f in rs.run.failures if f.size is not None)
        if view.running:
            line.append(f"  measuring {got}/{expected}…", style="italic cyan")
        elif rs.run.cancelled:
            line.append(f"  cancelled at {got}/{expected}", style="yellow")
    if view.stale and rs is not None:
        line.append("  ")
        line.append(" STALE ", style="bold reverse yellow")
        line.append(f" {view.stale}", style="yellow")
    failures = rs.run.failures if rs else []
    if failures:
        f = failures[0]
        where = " ".join(x for x in (f.mode or "", f"N={format_size(f.size)}" if f.size else "") if x)
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        line.append("\n")
        line.append_text(plain(f"✗ {where + ': ' if where else ''}{f.error.located()}{more}", "red", one_line=False))
    return line


def chart_series(results: list[Measurement], chart: str) -> list[Series]:
    series = []
    for mode in MODES:
        ms = [m for m in results if m.mode == mode]
        if not ms:
            continue
        if chart == "gbps":
            points = [(m.size, m.gbps) for m in ms if m.gbps]
        elif chart == "device":
            points = [(m.size, m.device_time_us) for m in ms if m.device_time_us > 0]
        else:
            points = [(m.size, m.wall_time_us) for m in ms if m.wall_time_us > 0]
        series.append(Series(mode, MODE_STYLES.get(mode, "white"), points))
    return series


class SweepPane(Pane):
    TITLE = "sweep"

    def compose(self) -> ComposeResult:
        yield Static(id="crossover")
        with Horizontal(id="sweep-body"):
            yield DataTable(id="sweep-table", cursor_type="row", zebra_stripes=False)
            yield LogChart(id="sweep-chart")

    @property
    def empty(self) -> bool:
        return self.state is None or self.state.view.results is None

    def draw(self, state: SweepPaneState) -> None:
        view, rs = state.view, state.view.results
        self.set_class(rs is None, "-empty")
        narrow = self.content_size.width < NARROW_WIDTH
        table = self.query_one("#sweep-table", DataTable)
        if rs is not None:
            fill_table(table, *sweep_rows(rs, narrow, state.peak_gbps, view.stale is not None))
        table.display = rs is not None
        self.query_one("#crossover", Static).update(status_line(state))
        self.border_title = f"sweep · {CHART_TITLES.get(state.chart, state.chart)}"
        self.border_subtitle = f"STALE: {view.stale}" if view.stale and rs else ""
        results = rs.measurements() if rs else []
        peak = next((m.peak_gbps for m in results if m.peak_gbps), None) or state.peak_gbps
        cross = crossover(comparisons(results, view.compile_mode))
        self.query_one(LogChart).set_data(
            chart_series(results, state.chart),
            hlines=[HLine(peak, f"peak {format_gbps(peak)}", "red")] if state.chart == "gbps" and peak else [],
            vmark=(cross, f"crossover {format_size(cross)}") if cross else None,
            y_format=gbps_label if state.chart == "gbps" else time_label,
            empty_message="" if not results else "nothing to plot",
        )
