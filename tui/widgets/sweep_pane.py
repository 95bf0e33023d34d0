"""The sweep pane: every size x mode as a table, the crossover size, and a log-log chart.

Rows stream in as the worker measures them. The chart plots, per mode, the wall time per call,
the device time per call, or the achieved GB/s with the device's measured peak as a dashed line
(``g`` cycles); the size from which compiled is faster per call at every larger size measured
(the crossover) is called out in text and marked on the chart, once the last size is in: a
sweep cut short (stopped, or its worker lost) says which sizes are missing, and no verdict is
drawn from the rest. Before the first sweep the pane is one line that says how to start one (the
main grid then gives it little room).
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal

from probes.link.baseline import Delta
from probes.link.protocol import COMPILED_MODES, MODES, Measurement
from probes.link.summary import (
    Ratio,
    comparisons,
    crossover,
    device_over_wall,
    format_bytes,
    format_gbps,
    format_size,
    mode_label,
    ratio,
    sizes_measured,
    sweep_verdict,
)
from tui.baseline_view import delta_cell
from tui.runs import SweepResults
from tui.views import SweepPaneState, missing_sizes
from tui.widgets.cells import gbps_cell, pct, plain
from tui.widgets.chart import HLine, LogChart, Series, gbps_label, time_label
from tui.widgets.headline import dynamic_line, static_and_dynamic
from tui.widgets.pane import Pane, PaneText
from tui.widgets.passes import PASS_COLUMNS, pass_cells
from tui.widgets.spread import OVER_WALL_MARK, ratio_text, time_text
from tui.widgets.tables import ResultsTable

MODE_STYLES = {
    "eager": "#ff8c42",
    "compiled": "#4fc3f7",
    "max-autotune": "#b388ff",
    "reduce-overhead": "#69f0ae",
    "dynamic": "#ffd54f",
}
TITLE_SIZES = 6
"""At most this many sizes are listed in the pane's title; a longer list is shown as its ends."""
CHART_TITLES = {"time": "wall time per call", "device": "device time per call", "gbps": "achieved GB/s"}
NARROW_WIDTH = 110
"""Narrower than this, the table has one row per size (each mode's wall time, then the speedup)."""


def pct_of_peak(m: Measurement, peak: float | None) -> float | None:
    peak = m.peak_gbps or peak
    gbps = m.gbps
    if not peak or gbps is None:
        return None
    return gbps / peak * 100


def sweep_rows(
    rs: SweepResults,
    narrow: bool,
    peak: float | None,
    stale: bool,
    baseline: list[Delta] | None = None,
    *,
    two_processes: bool = False,
    spread: tuple[str, ...] = (),
) -> tuple[list[Text], list[list[Text]]]:
    """The table's columns and rows: one row per size x mode, or per size when ``narrow``; with a
    pin (``baseline``), each row's device-time change against it; ``two_processes``: eager and
    compiled were timed in two workers (``SweepView.two_processes``); ``spread``: the devices a
    spread sweep was shared out among, each row (each time, ``narrow``) marked with its device."""
    results = rs.measurements()

    def on(m: Measurement) -> str:
        entry = rs.measured_by.get((m.size, m.mode))
        return "" if entry is None else f"{DEVICE_MARKERS[entry % len(DEVICE_MARKERS)]} {spread[entry]}"

    modes = list(rs.modes)
    speedups = speedup_ratios(results, two_processes=two_processes)
    base = "dim" if stale else ""

    def speed_cell(size: int, mode: str) -> Text:
        cell = ratio_text(speedups.get((size, mode)), short=True)
        cell.justify = "right"
        if base:
            cell.stylize(base)
        return cell

    if narrow:
        columns = [
            Text("N", justify="right"),
            *(Text(m if len(m) <= 10 else m[:9] + "…", justify="right") for m in modes),
        ]
        compiled = modes[-1]  # its speedup: over eager, or a dynamic compile's over the static one
        if len(modes) > 1:
            columns.append(Text("speedup", justify="right"))
        rows = []
        for size in sorted({m.size for m in results}):
            cells = [Text(format_size(size), style=base, justify="right")]
            for mode in modes:
                m = rs.at(size, mode)
                cell = time_cell(m, "wall", base) if m else Text("")
                if m and spread:
                    cell.append(f" {on(m)[:1]}", style="bold")
                cells.append(cell)
            if len(modes) > 1 and compiled:
                cells.append(speed_cell(size, compiled))
            rows.append(cells)
        return columns, rows
    grad = any(m.grad for m in results)
    figures: tuple[str, ...] = PASS_COLUMNS if grad else ("kern", "device", "wall", "GB/s", "%peak")
    peaks = any(m.peak_memory_bytes is not None for m in results)  # each result's peak memory, where measured
    if peaks:
        figures = (*figures, "mem")
    columns = [Text("N", justify="right"), Text("mode"), *([Text("on")] if spread else [])] + [
        Text(label, justify="right") for label in (*figures, "speedup", *(["vs pin"] if baseline else []))
    ]

    def mode_style(m: Measurement) -> str:
        return "bold red" if m.mode != "eager" and not m.ran_compiled else MODE_STYLES.get(m.mode, "")

    def figure_cells(m: Measurement) -> list[Text]:
        if grad:
            return [Text(c, style=base, justify="right") for c in pass_cells(m)] + [time_cell(m, "wall", base)]
        return [
            Text(f"{m.kernels_per_call:g}", style=base, justify="right"),
            time_cell(m, "device", base),
            time_cell(m, "wall", base),
            Text(gbps_cell(m.gbps), style=base, justify="right"),
            Text(pct(pct_of_peak(m, peak)), style=base, justify="right"),
        ]

    rows = [
        [
            Text(format_size(m.size), style=base, justify="right"),
            Text(mode_label(m), style=base or mode_style(m)),
            *([plain(on(m), base)] if spread else []),
            *figure_cells(m),
            *([Text(format_bytes(m.peak_memory_bytes), style=base, justify="right")] if peaks else []),
            speed_cell(m.size, m.mode),
            *([delta_cell(baseline, m.size, m.mode)] if baseline else []),
        ]
        for m in results
    ]
    return columns, rows


def speedup_ratios(results: list[Measurement], *, two_processes: bool = False) -> dict[tuple[int, str], Ratio | None]:
    """Per (size, mode): the wall-time ratio over eager; a dynamic compile measured without eager
    is set against the static compile of the same size instead."""
    found = {
        (p.size, mode): p.wall_ratio
        for mode in COMPILED_MODES
        for p in comparisons(results, mode, two_processes=two_processes)
    }
    for size in {m.size for m in results}:
        pair = static_and_dynamic([m for m in results if m.size == size])
        if pair is not None and (size, "dynamic") not in found:
            found[(size, "dynamic")] = ratio(pair[0], pair[1], "wall")
    return found


def time_cell(m: Measurement, which: Literal["wall", "device"], base: str) -> Text:
    """The time, marked ``~`` when its spread is wide (dimmed with the rest when stale)."""
    cell = time_text(m, which, wide=False)
    cell.justify = "right"
    if base:
        cell.stylize(base)
    return cell


def sizes_text(sizes: tuple[int, ...]) -> str:
    """The sweep's sizes for the pane's title (what ``s`` measures, set by ``--sizes``, ``z`` or the
    workspace): every size, or the first and last of a long list with how many."""
    if len(sizes) <= TITLE_SIZES:
        return ",".join(format_size(n) for n in sizes)
    return f"{format_size(sizes[0])}…{format_size(sizes[-1])} ({len(sizes)} sizes)"


def finished(state: SweepPaneState) -> bool:
    """The sweep has every size (measured, or refused on its own): a verdict may be drawn."""
    rs = state.view.results
    return rs is not None and not state.view.running and not missing_sizes(rs)


def coverage_text(rs: SweepResults) -> str | None:
    """``4 of 5 sizes measured, 1e2 failed``, where a size is not measured in every mode; None
    where all are."""
    measured = [n for n in rs.sizes if all((n, mode) in rs.results for mode in rs.modes)]
    if len(measured) == len(rs.sizes):
        return None
    return sizes_measured(rs.sizes, measured, {f.size for f in rs.run.failures if f.size is not None})


def incomplete_text(state: SweepPaneState) -> str:
    """``incomplete: 3 of 5 sizes measured, 1e7 and 1e8 missing (stopped)``: a sweep cut short."""
    view, rs = state.view, state.view.results
    assert rs is not None
    why = "stopped" if rs.run.cancelled else "the worker was lost" if view.lost else ""
    return f"incomplete: {coverage_text(rs)}" + (f" ({why}: {state.hint} again)" if why else "")


def status_line(state: SweepPaneState) -> Text:
    """The crossover (or how to start a sweep), progress, staleness, and the first failure."""
    view = state.view
    rs = view.results
    line = Text()
    results = rs.measurements() if rs else []
    pairs = comparisons(results, view.compile_mode, two_processes=view.two_processes)
    dynamic = dynamic_summary(results)
    done = finished(state)
    if pairs and done:  # a verdict on part of the sizes would be a guess shown as fact
        line.append(sweep_verdict(pairs), style="bold green" if crossover(pairs) is not None else "bold yellow")
    elif dynamic is not None and done:
        line.append_text(dynamic)
    elif rs is None:
        line.append(f"no sweep yet: {state.hint}", style="dim italic")
    if rs is not None:
        if view.running:
            steps, total = rs.run.count()
            line.append(f"  measuring: {steps}/{total} done…", style="italic cyan")
        elif not done:
            line.append(("  " if line.cell_len else "") + incomplete_text(state), style="yellow")
        elif coverage := coverage_text(rs):  # complete, with sizes that failed on their own
            line.append(("  " if line.cell_len else "") + coverage, style="yellow")
    if view.stale and rs is not None:
        line.append("  ")
        line.append(" STALE ", style="bold reverse yellow")
        line.append(f" {view.stale}", style="yellow")
    over_wall = device_over_wall_line(results)
    if over_wall is not None:
        line.append("\n")
        line.append_text(over_wall)
    failures = rs.run.failures if rs else []
    if failures:
        f = failures[0]
        where = " ".join(x for x in (f.mode or "", f"N={format_size(f.size)}" if f.size else "") if x)
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        line.append("\n")
        line.append_text(plain(f"✗ {where + ': ' if where else ''}{f.error.located()}{more}", "red", one_line=False))
    return line


def device_over_wall_line(results: list[Measurement]) -> Text | None:
    """``>wall eager N=1e6: the kernel times add up to 2.3x the call's wall time: ...``: why a
    row's device time stands above its wall time, in the words ``kernel-tui profile`` prints under
    its table (``summary.device_over_wall``); the first such row, with how many more."""
    found = [(m, reason) for m in results if (reason := device_over_wall(m)) is not None]
    if not found:
        return None
    m, reason = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return plain(f"{OVER_WALL_MARK} {m.mode} N={format_size(m.size)}: {reason}{more}", "yellow", one_line=False)


def dynamic_summary(results: list[Measurement]) -> Text | None:
    """Static against dynamic-shape compiles at the largest size both were measured at."""
    sizes = sorted({m.size for m in results}, reverse=True)
    for size in sizes:
        pair = static_and_dynamic([m for m in results if m.size == size])
        if pair is not None:
            line = Text(f"N = {format_size(size)}: ", style="bold")
            line.append_text(dynamic_line(*pair))
            return line
    return None


def chart_series(
    results: list[Measurement], chart: str, marks: dict[tuple[int, str], str] | None = None
) -> list[Series]:
    """A line per mode; ``marks``: each point's own marker by (size, mode), where it has one."""
    series = []
    for mode in MODES:
        ms = [m for m in results if m.mode == mode]
        if not ms:
            continue
        points: list[tuple[float, float]]
        if chart == "gbps":
            points = [(m.size, m.gbps) for m in ms if m.gbps]
        elif chart == "device":
            points = [(m.size, m.device_time_us) for m in ms if m.device_time_us > 0]
        else:
            points = [(m.size, m.wall_time_us) for m in ms if m.wall_time_us]
        own: dict[float, str] = {m.size: mark for m in ms if (mark := (marks or {}).get((m.size, mode)))}
        series.append(Series(mode, MODE_STYLES.get(mode, "white"), points, marks=own))
    return series


DEVICE_MARKERS = ("●", "◆", "▲", "■", "✚", "✖", "◼", "★")
"""Each device's marker on the chart, in ``--device`` order (the colour stays the mode's)."""


def device_chart(devices: tuple[tuple[str, SweepResults | None], ...], chart: str) -> tuple[list[Series], list[Text]]:
    """Several devices' sweeps on one chart: a line per device and mode, each device with its
    marker, and a legend that names each device by its marker and each mode by its colour."""
    series: list[Series] = []
    for index, (name, rs) in enumerate(devices):
        marker = DEVICE_MARKERS[index % len(DEVICE_MARKERS)]
        for line in chart_series(rs.measurements() if rs else [], chart):
            series.append(Series(f"{name} {line.label}", line.style, line.points, marker))
    return series, device_legend([name for name, _ in devices], series)


def spread_chart(rs: SweepResults, names: tuple[str, ...], chart: str) -> tuple[list[Series], list[Text]]:
    """A sweep spread over several devices on one chart: a line per mode, each point with the
    marker of the device that measured it, and the legend of ``device_chart``."""
    marks = {pair: DEVICE_MARKERS[entry % len(DEVICE_MARKERS)] for pair, entry in rs.measured_by.items()}
    series = chart_series(rs.measurements(), chart, marks)
    for line in series:
        line.label = line.label.split(" ")[-1]
    return series, device_legend(list(names), series)


def device_legend(names: list[str], series: list[Series]) -> list[Text]:
    """Each device by its marker, then each mode by its colour."""
    legend = [
        Text.assemble((f"{DEVICE_MARKERS[index % len(DEVICE_MARKERS)]} ", "bold"), f"{name}  ")
        for index, name in enumerate(names)
    ]
    styles = {line.label.split(" ")[-1]: line.style for line in series}
    return legend + [Text.assemble(("━━ ", style), f"{mode}  ") for mode, style in styles.items()]


class SweepPane(Pane, can_focus=True):
    """The sweep's table and chart; a tab stop itself while it has no sweep (``s`` starts one), so
    that Tab visits every pane."""

    TITLE = "sweep"
    DEFAULT_CLASSES = "-empty"
    """No sweep until a state says otherwise: the first frame has no table or chart to lay out."""

    def compose(self) -> ComposeResult:
        yield PaneText(id="crossover")
        with Horizontal(id="sweep-body"):
            yield ResultsTable(id="sweep-table", cursor_type="row", zebra_stripes=False)
            yield LogChart(id="sweep-chart")

    @property
    def empty(self) -> bool:
        return self.state is None or self.state.view.results is None

    def allow_focus(self) -> bool:
        return self.empty

    def draw(self, state: SweepPaneState) -> None:
        view, rs = state.view, state.view.results
        self.set_class(rs is None, "-empty")
        narrow = self.content_size.width < NARROW_WIDTH
        table = self.query_one("#sweep-table", ResultsTable)
        if rs is not None:
            stale = view.stale is not None
            rows = sweep_rows(
                rs, narrow, state.peak_gbps, stale, state.baseline, two_processes=view.two_processes, spread=view.spread
            )
            table.fill(*rows)
        table.display = rs is not None
        if rs is not None and self.has_focus:
            self.screen.set_focus(table)  # a sweep started from the empty pane: its rows have the focus
        self.query_one("#crossover", PaneText).show_text(status_line(state))
        following = f" · {plain(view.entry).plain} (d: next device)" if view.entry else ""
        self.set_border(
            f"sweep · N={sizes_text(view.sizes)} · {CHART_TITLES.get(state.chart, state.chart)}{following}",
            f"STALE: {view.stale}" if view.stale and rs else "",
        )
        results = rs.measurements() if rs else []
        peak = next((m.peak_gbps for m in results if m.peak_gbps), None) or state.peak_gbps
        pairs = comparisons(results, view.compile_mode, two_processes=view.two_processes)
        cross = crossover(pairs) if finished(state) else None
        series, legend = chart_series(results, state.chart), list[Text]()
        if view.devices:
            series, legend = device_chart(view.devices, state.chart)
        elif view.spread and rs is not None:
            series, legend = spread_chart(rs, view.spread, state.chart)
        self.query_one(LogChart).set_data(
            series,
            legend=legend,
            hlines=[HLine(peak, f"peak {format_gbps(peak)}", "red")] if state.chart == "gbps" and peak else [],
            vmark=(cross, f"crossover {format_size(cross)}") if cross else None,
            y_format=gbps_label if state.chart == "gbps" else time_label,
            empty_message="" if not series else "nothing to plot",
        )
