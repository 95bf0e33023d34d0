"""The sweep pane: every size x mode as a table, the crossover size, and a log-log chart.

Rows stream in as the worker measures them. The chart plots, per mode, the wall time per call,
the device time per call, or the achieved GB/s with the device's measured peak as a dashed line
(``g`` cycles); the size from which compiled is faster per call at every larger size measured
(the crossover) is called out in text and marked on the chart.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from probes.protocol import COMPILED_MODES, MODES, Measurement
from probes.summary import comparisons, crossover, format_gbps, format_size, format_time_us, mode_label
from tui.results import ResultSet
from tui.widgets.chart import HLine, LogChart, Series, gbps_label, time_label
from tui.widgets.kernel_pane import gbps_cell, pct
from tui.widgets.tables import fill_table

MODE_STYLES = {
    "eager": "#ff8c42",
    "compiled": "#4fc3f7",
    "max-autotune": "#b388ff",
    "reduce-overhead": "#69f0ae",
}
CHART_VIEWS = ("time", "device", "gbps")
CHART_TITLES = {"time": "wall time per call", "device": "device time per call", "gbps": "achieved GB/s"}


class SweepPane(Vertical):
    def compose(self) -> ComposeResult:
        yield Static(id="crossover")
        with Horizontal(id="sweep-body"):
            yield DataTable(id="sweep-table", cursor_type="row", zebra_stripes=False)
            yield LogChart(id="sweep-chart")

    def on_mount(self) -> None:
        self.border_title = "sweep"

    @staticmethod
    def _columns(compact: bool, modes: list[str]) -> list[Text]:
        if compact:
            # One row per size: each mode's wall time side by side, then the speedup.
            labels = [Text("N", justify="right")]
            labels += [Text(mode if len(mode) <= 10 else mode[:9] + "…", justify="right") for mode in modes]
            return labels + ([Text("speedup", justify="right")] if len(modes) > 1 else [])
        return [Text("N", justify="right"), Text("mode")] + [
            Text(label, justify="right") for label in ("kern", "device", "wall", "GB/s", "%peak", "speedup")
        ]

    def show(
        self,
        rs: ResultSet | None,
        *,
        stale: bool,
        running: bool,
        compile_mode: str,
        chart: str,
        compact: bool,
        peak_gbps: float | None,
        sizes: list[int],
    ) -> None:
        table = self.query_one("#sweep-table", DataTable)
        modes = list(rs.key.modes) if rs else ["eager", compile_mode]
        columns = self._columns(compact, modes)
        rows: list[list[Text]] = []
        results: list[Measurement] = rs.measurements() if rs else []
        speedups = {(p.size, mode): p for mode in COMPILED_MODES for p in comparisons(results, mode)}
        base = "dim" if stale else ""

        def speed_cell(size: int, mode: str) -> Text:
            pair = speedups.get((size, mode))
            speed = pair.wall_speedup if pair else None
            if not speed:
                return Text("", justify="right")
            return Text(f"{speed:.2f}x", style=base or ("green" if speed > 1 else "red"), justify="right")

        def mode_style(m: Measurement) -> str:
            return "bold red" if m.mode != "eager" and not m.ran_compiled else MODE_STYLES.get(m.mode, "")

        if compact:
            for size in sorted({m.size for m in results}):
                cells = [Text(format_size(size), style=base, justify="right")]
                for mode in modes:
                    m = rs.at(size, mode) if rs else None
                    cells.append(Text(format_time_us(m.wall_time_us) if m else "", style=base, justify="right"))
                if len(modes) > 1:
                    compiled = next((mode for mode in modes if mode != "eager"), None)
                    cells.append(speed_cell(size, compiled) if compiled else Text(""))
                rows.append(cells)
        else:
            for m in results:
                rows.append([
                    Text(format_size(m.size), style=base, justify="right"),
                    Text(mode_label(m), style=base or mode_style(m)),
                    Text(f"{m.kernels_per_call:g}", style=base, justify="right"),
                    Text(format_time_us(m.device_time_us), style=base, justify="right"),
                    Text(format_time_us(m.wall_time_us), style=base, justify="right"),
                    Text(gbps_cell(m.gbps), style=base, justify="right"),
                    Text(pct(self._pct(m, peak_gbps)), style=base, justify="right"),
                    speed_cell(m.size, m.mode),
                ])  # fmt: skip
        fill_table(table, columns, rows)
        table.display = rs is not None
        # Crossover and status line.
        line = Text()
        pairs = comparisons(results, compile_mode)
        size = crossover(pairs)
        if pairs:
            if size is not None:
                line.append(f"{compile_mode} is faster per call from N = {format_size(size)} up", style="bold green")
            else:
                line.append(f"{compile_mode} is not faster per call at the largest size measured", style="bold yellow")
        elif rs is None:
            line.append("no sweep yet: press s to measure ", style="dim italic")
            line.append(", ".join(format_size(s) for s in sizes), style="dim")
        if rs is not None:
            expected = len(rs.key.sizes) * len(rs.key.modes)
            got = len(rs.results) + sum(1 for f in rs.failures if f.size is not None)
            if running and not rs.done:
                line.append(f"  measuring {got}/{expected}…", style="italic cyan")
            elif rs.cancelled:
                line.append(f"  cancelled at {got}/{expected}", style="yellow")
        if stale and rs is not None:
            line.append("  ")
            line.append(" STALE ", style="bold reverse yellow")
        failures = rs.failures if rs else []
        if failures:
            f = failures[0]
            where = " ".join(x for x in (f.mode or "", f"N={format_size(f.size)}" if f.size else "") if x)
            more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
            line.append(f"\n✗ {where + ': ' if where else ''}{fit_error(f.error.located(), 100)}{more}", style="red")
        self.query_one("#crossover", Static).update(line)
        self.border_title = f"sweep · {CHART_TITLES.get(chart, chart)}"
        self.border_subtitle = "STALE: sweep of an earlier text" if stale and rs else ""
        self._chart(results, chart, peak_gbps, size, compile_mode)

    @staticmethod
    def _pct(m: Measurement, peak: float | None) -> float | None:
        peak = m.peak_gbps or peak
        gbps = m.gbps
        if not peak or gbps is None:
            return None
        return gbps / peak * 100

    def _chart(self, results: list[Measurement], chart: str, peak: float | None, cross: int | None, cmode: str) -> None:
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
        peak = next((m.peak_gbps for m in results if m.peak_gbps), None) or peak
        hlines = [HLine(peak, f"peak {format_gbps(peak)}", "red")] if chart == "gbps" and peak else []
        mark = (cross, f"crossover {format_size(cross)}") if cross else None
        self.query_one(LogChart).set_data(
            series,
            hlines=hlines,
            vmark=mark,
            y_format=gbps_label if chart == "gbps" else time_label,
            empty_message="" if not results else "nothing to plot",
        )


def fit_error(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
