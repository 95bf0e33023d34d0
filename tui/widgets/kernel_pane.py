"""The kernel pane: the headline, then one table of kernel rows per mode, side by side.

Each row is one kernel of one call: readable name, launches per call, device time per launch,
share of the call, bytes, GB/s and % of the device's measured peak, and the op(s) it ran.
memcpy/memset rows come last, dimmed, and are never counted as kernels. Enter on a row asks the
app to show the full name and, for compiled kernels, the generated source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from probes.protocol import MODES, KernelRow, Measurement, RequestFailed
from probes.summary import (
    format_bytes,
    format_size,
    format_time_us,
    format_transfers,
    headline,
    mode_label,
)
from tui.results import ResultSet
from tui.widgets.tables import fill_table


def fit(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` cells keeping its head and its (more telling) tail."""
    if len(text) <= width:
        return text
    head = max(4, width // 3)
    return text[:head] + "…" + text[-(width - head - 1) :]


def fit_kernel(name: str, width: int) -> str:
    """Shorten a kernel name keeping what tells kernels apart: the template detail.

    ``vectorized_elementwise_kernel<CUDAFunctor_add<float>>`` at 26 cells becomes
    ``v…<CUDAFunctor_add<float>>``; names without a template keep head and tail.
    """
    if len(name) <= width:
        return name
    base, sep, detail = name.partition("<")
    if sep and detail.endswith(">"):
        inner = detail[:-1]
        room = width - len(inner) - 3
        if room >= 1:
            return base[:room] + "…<" + inner + ">"
        return fit("<" + inner + ">", width)
    return fit(name, width)


def display_name(row: KernelRow) -> str:
    """The row's readable name; never empty (older recordings may lack a short name)."""
    if row.short_name:
        return row.short_name
    from probes.kernel_names import short_name  # noqa: PLC0415

    return short_name(row.name) or row.name[:60] or "(unnamed kernel)"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def gbps_cell(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2f}"


def measurement_summary(m: Measurement) -> Text:
    """``2 kernels · 5N · device 174 µs · wall 119 µs`` (+ compile facts for compiled runs)."""
    t = Text()
    count = m.kernels_per_call
    t.append(f"{count:g} kernel{'' if count == 1 else 's'}", style="bold")
    t.append(f" · {format_transfers(m)}")
    t.append(f" · device {format_time_us(m.device_time_us)}")
    t.append(f" · wall {format_time_us(m.wall_time_us)}")
    if m.compile is not None:
        c = m.compile
        t.append(f" · compile {c.compile_time_s:.2f} s", style="dim")
        if c.graph_breaks:
            t.append(f" · {c.graph_breaks} graph break{'s' if c.graph_breaks != 1 else ''}", style="bold yellow")
        if c.recompiles:
            t.append(f" · {c.recompiles} recompile{'s' if c.recompiles != 1 else ''}", style="yellow")
    return t


@dataclass
class PaneState:
    """Everything the pane renders, computed by the app."""

    results: ResultSet | None
    modes: list[str]
    size: int
    stale: bool
    running: bool
    current_mode: str | None = None
    """The mode the worker is measuring now (from Progress), if known."""
    progress: str = ""
    errors: list[RequestFailed] = field(default_factory=list)
    """Failures of the newest request while it has no results (the shown ones are then stale)."""


class KernelTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Details", tooltip="Full name and generated source")]


class ModeBlock(Vertical):
    """One mode: a title line with its totals, then its kernel table."""

    def __init__(self, mode: str) -> None:
        super().__init__(id=f"mode-{mode}", classes="mode-block")
        self.mode = mode
        self.rows: list[KernelRow] = []
        self.measurement: Measurement | None = None
        self.note_lines = 0

    def compose(self) -> ComposeResult:
        yield Static(id=f"mode-title-{self.mode}", classes="mode-title")
        yield Static(id=f"mode-note-{self.mode}", classes="mode-note")
        table = KernelTable(id=f"table-{self.mode}", cursor_type="row", zebra_stripes=False, show_cursor=True)
        table.can_focus = True
        yield table

    @staticmethod
    def _columns(compact: bool) -> list[Text]:
        """``compact`` here means: no ops column (narrow tables)."""
        labels = [Text("kernel")] + [
            Text(label, justify="right") for label in ("launch", "µs/launch", "share", "bytes", "GB/s", "%peak")
        ]
        return labels if compact else [*labels, Text("ops")]

    def show(self, m: Measurement | None, note: Text | None, *, stale: bool, compact: bool, name_width: int) -> None:
        title = self.query_one(".mode-title", Static)
        note_widget = self.query_one(".mode-note", Static)
        table = self.query_one(KernelTable)
        width = max(20, self.content_size.width or 76)
        self.note_lines = -(-note.cell_len // width) if note else 0
        self.measurement = m
        label = Text(no_wrap=True, overflow="ellipsis")
        if m is None:
            label.append(self.mode, style="bold")
        else:
            fell_back = m.mode != "eager" and not m.ran_compiled
            label.append(mode_label(m), style="bold red" if fell_back else "bold")
            label.append("  ")
            label.append_text(measurement_summary(m))
        if stale:
            label.stylize("dim")
        title.update(label)
        note_widget.update(note or "")
        note_widget.display = bool(note)
        self.rows = []
        if m is None:
            table.display = False
            return
        table.display = True
        row_style = "dim" if stale else ""
        rows = []
        for row in m.kernels + m.transfers:
            self.rows.append(row)
            transfer = row.kind != "kernel"
            style = "dim italic" if transfer else row_style
            name = fit_kernel(display_name(row), name_width) + (f" ({row.kind})" if transfer else "")
            cells = [
                Text(name, style=style),
                Text(f"{row.launches_per_call:g}", style=style, justify="right"),
                Text(f"{row.device_time_us:.2f}", style=style, justify="right"),
                Text("-" if transfer else f"{row.share:.0%}", style=style, justify="right"),
                Text(format_bytes(row.bytes), style=style, justify="right"),
                Text(gbps_cell(row.gbps), style=style, justify="right"),
                Text(pct(row.pct_of_peak), style=style, justify="right"),
            ]
            if not compact:
                cells.append(Text(fit(", ".join(op.removeprefix("aten::") for op in row.ops), 18), style=style or "dim"))
            rows.append(cells)
        if not m.kernels and not m.transfers:
            rows.append([Text("(no kernels recorded)", style="dim italic")])
        fill_table(table, self._columns(compact), rows)

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.rows) and self.measurement is not None:
            self.post_message(KernelPane.KernelChosen(self.measurement, self.rows[event.cursor_row]))


class KernelPane(Vertical, can_focus=True):
    """Headline + one ModeBlock per selected mode (focusable itself while it has no rows)."""

    class KernelChosen(Message):
        def __init__(self, measurement: Measurement, row: KernelRow) -> None:
            super().__init__()
            self.measurement = measurement
            self.row = row

    def compose(self) -> ComposeResult:
        yield Static(id="headline")
        with Container(id="mode-blocks"):
            for mode in MODES:
                yield ModeBlock(mode)

    def on_mount(self) -> None:
        self.border_title = "kernels"

    def show(self, state: PaneState, *, compact: bool) -> None:
        rs = state.results
        by_mode = {mode: rs.at(state.size, mode) if rs else None for mode in MODES}
        eager = by_mode.get("eager")
        compiled = next((by_mode[m] for m in state.modes if m != "eager" and by_mode.get(m)), None)
        head = Text()
        line = headline(eager if "eager" in state.modes else None, compiled)
        if line:
            head.append(line, style="bold")
            if eager and compiled and compiled.device_time_us > 0:
                head.append(" device", style="bold")
            if eager and compiled and compiled.wall_time_us > 0:
                wall = eager.wall_time_us / compiled.wall_time_us
                head.append(" · ")
                head.append(f"{wall:.2f}x wall", style="green" if wall > 1 else "yellow")
        elif state.running:
            head.append("measuring…", style="italic")
        elif rs is None:
            head.append("no results yet", style="dim italic")
        if state.stale and rs is not None:
            head.stylize("dim")
            head.append("  ")
            head.append(" STALE ", style="bold reverse yellow")
        errors = list(state.errors) + (rs.general_failures() if rs else [])
        if errors:
            head.append("\n")
            head.append(f"✗ {errors[0].error.located()}", style="bold red")
        self.query_one("#headline", Static).update(head)
        where = f"N={format_size(state.size)}"
        if rs is not None:
            any_m = next(iter(rs.results.values()), None)
            if any_m is not None:
                where = f"N={format_size(state.size)} · {any_m.dtype} · {any_m.device}"
        self.border_title = f"kernels · {where}"
        self.border_subtitle = "STALE: results are for an earlier text" if state.stale and rs else ""
        shown = len(state.modes)
        width = self.content_size.width or 156
        # Side by side when each table gets room for its columns; stacked otherwise.
        stacked = compact or (shown > 1 and (width - 2 * (shown - 1)) // shown < 72)
        self.stacked = stacked
        self.query_one("#mode-blocks").set_class(stacked and not compact, "-stacked")
        per = width if stacked or shown == 1 else (width - 2 * (shown - 1)) // shown
        with_ops = per >= 100
        name_width = max(16, min(56, per - (64 if with_ops else 52)))
        for mode in MODES:
            block = self.query_one(f"#mode-{mode}", ModeBlock)
            block.display = mode in state.modes
            if mode not in state.modes:
                continue
            m = by_mode.get(mode)
            note = self._note(state, mode, m)
            block.show(m, note, stale=state.stale, compact=not with_ops, name_width=name_width)

    def _note(self, state: PaneState, mode: str, m: Measurement | None) -> Text | None:
        rs = state.results
        failure = rs.failure_for(state.size, mode) if rs else None
        if failure is not None and (failure.size is not None or failure.mode is not None):
            return Text(f"✗ {failure.error.located()}", style="bold red")
        if m is not None:
            if m.mode != "eager" and not m.ran_compiled:
                reason = m.fallback_reason or "no reason given"
                return Text(f"⚠ ran eager, not compiled: {reason}", style="bold red")
            if m.compile is not None and m.compile.break_reasons:
                return Text("graph breaks: " + "; ".join(m.compile.break_reasons[:3]), style="yellow")
            return None
        if state.running:
            if state.current_mode == mode and mode != "eager":
                return Text("compiling and measuring… (a first torch.compile takes a while)", style="italic cyan")
            if state.current_mode == mode:
                return Text("measuring…", style="italic cyan")
            return Text("waiting…", style="dim italic")
        if rs is not None and not rs.done:
            return Text("waiting…", style="dim italic")
        return Text("no result", style="dim italic") if rs is not None else None

    def desired_height(self, compact: bool) -> int:
        """Rows this pane needs to show everything (the app sizes the grid row with it)."""
        headline = self.query_one("#headline", Static)
        head = 1 + str(headline.render()).count("\n") + (0 if compact else 1)
        blocks = [b for b in self.query(ModeBlock) if b.display]
        heights = []
        for block in blocks:
            table = block.query_one(KernelTable)
            rows = min(table.row_count + 1, 10) if table.display else 0
            heights.append(1 + block.note_lines + rows)
        stacked = compact or getattr(self, "stacked", False)
        body = sum(h + 1 for h in heights) - 1 if stacked and heights else max(heights, default=1)
        return head + body + 2

    def focus_table(self) -> None:
        for table in self.query(KernelTable):
            if table.display and table.parent is not None and table.parent.display:
                table.focus()
                return
        self.focus()
