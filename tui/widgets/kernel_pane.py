"""The kernel pane: the headline, then one table of kernel rows per mode, side by side.

Each row is one kernel of one call: readable name, launches per call, device time per launch,
share of the call, bytes, GB/s and % of the device's measured peak, a GPU kernel's theoretical
occupancy (where the table is wide), and the op(s) it ran.
memcpy/memset rows come last, dimmed, and are never counted as kernels. Enter on a row posts
``KernelChosen`` (the app shows the full name and, for compiled kernels, the generated source).

The pane renders its ``state`` (a ``tui.views.FocusView``) at its own width: tables side by side
when each gets room, kernel names given whatever width the other columns leave.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.message import Message
from textual.widgets import DataTable

from probes.link import fast_paths
from probes.link.protocol import MODES, KernelRow, Measurement
from probes.link.summary import format_bytes, format_size, format_transfers, input_dtypes, mode_label
from tui.commands import bindings
from tui.views import FocusView, ModeView
from tui.widgets.cells import (
    CELL_PADDING,
    display_name,
    fit,
    fit_kernel,
    flex_width,
    gbps_cell,
    pct,
    plain,
    share_width,
)
from tui.widgets.device_summary import devices_text
from tui.widgets.facts import fact_lines
from tui.widgets.headline import comparison_text, readings_apart
from tui.widgets.keys_in_order import KeysInOrder
from tui.widgets.pane import Pane, PaneText
from tui.widgets.passes import ordered_rows, pass_cell, pass_facts
from tui.widgets.spread import NOISY_MARK, NOISY_STYLE, kernel_is_noisy, time_text
from tui.widgets.tables import ResultsTable

SIDE_BY_SIDE_MIN = 72
"""Narrower than this per table, the mode tables are stacked."""
TABLE_MAX_LINES = 10
"""A kernel table shows at most this many lines (header included) and scrolls beyond."""
TABLE_SCROLLBAR = 1
"""The width of a kernel table's scrollbar, which it gets beside its columns when it scrolls."""
OPS_MIN = 100
"""Tables get their ops column (and long headers) from this width each."""
NAME_MIN = 14

ACTIVITY_NOTES = {
    "waiting": ("waiting…", "dim italic"),
    "starting": ("waiting for the compile worker to start…", "dim italic"),
    "measuring": ("measuring…", "italic cyan"),
    "compiling": ("compiling and measuring… (a first torch.compile takes a while)", "italic cyan"),
    "after a pause": ("compiles when you pause typing", "dim italic"),
    "held": ("not measured: ctrl+r measures", "dim italic"),
}


def scrollbar_width(rows: int) -> int:
    """The cells a kernel table of ``rows`` rows gives its scrollbar, beside its columns: none
    unless it scrolls."""
    return TABLE_SCROLLBAR if rows + 1 > TABLE_MAX_LINES else 0


def table_lines(table: DataTable[Any]) -> int:
    """Lines a kernel table takes on screen: its header and rows, up to TABLE_MAX_LINES."""
    return min(table.row_count + 1, TABLE_MAX_LINES)


def measurement_facts(m: Measurement) -> list[list[Text]]:
    """The title's facts, line by line (a second line per pass with grad): ``2 kernels``, ``5N``,
    ``device 174 µs ±3%``, ``wall 119 µs ±12%~``, then the compile's for compiled runs."""
    count = m.kernels_per_call
    first = [
        Text(f"{count:g} kernel{'' if count == 1 else 's'}", style="bold"),
        Text(format_transfers(m)),
        Text("device ").append_text(time_text(m, "device")),
        Text("wall ").append_text(time_text(m, "wall")),
    ]
    lines = [first, pass_facts(m)] if m.grad else [first]
    if m.compile is not None:
        c = m.compile
        lines[-1].append(Text(f"compile {c.compile_time_s:.2f} s", style="dim"))
        if c.graph_breaks:
            lines[-1].append(
                Text(f"{c.graph_breaks} graph break{'s' if c.graph_breaks != 1 else ''}", style="bold yellow")
            )
        if c.recompiles:
            lines[-1].append(Text(f"{c.recompiles} recompile{'s' if c.recompiles != 1 else ''}", style="yellow"))
    return lines


def kernel_cells(row: KernelRow, *, stale: bool) -> list[Text]:
    """Every cell of one kernel row but its name, in column order (ops last); a launch time whose
    spread is wide is marked ``~``."""
    transfer = row.kind != "kernel"
    style = "dim italic" if transfer else ("dim" if stale else "")
    ops = ", ".join(op.removeprefix("aten::") for op in row.ops)
    noisy = kernel_is_noisy(row)
    return [
        Text(f"{row.launches_per_call:g}", style=style, justify="right"),
        Text(
            f"{row.device_time_us:.2f}" + (NOISY_MARK if noisy else ""),
            style=style or (NOISY_STYLE if noisy else ""),
            justify="right",
        ),
        Text("-" if transfer else f"{row.share:.0%}", style=style, justify="right"),
        Text(format_bytes(row.bytes), style=style, justify="right"),
        Text(gbps_cell(row.gbps), style=style, justify="right"),
        Text(pct(row.pct_of_peak), style=style, justify="right"),
        plain(fit(ops, 24), style or "dim"),
    ]


def occupancy_cell(row: KernelRow, *, stale: bool) -> Text:
    """A GPU kernel's theoretical occupancy (``46%``), yellow with a ``!`` when it spills
    registers; ``-`` where unknown (a CPU kernel, a memcpy)."""
    info = row.launch
    style = "dim" if stale else ""
    if info is None or info.occupancy is None:
        return Text("-", style=style or "dim", justify="right")
    text = f"{info.occupancy:.0%}"
    if info.spills:
        return Text(text + "!", style=style or "yellow", justify="right")
    return Text(text, style=style, justify="right")


COLUMNS = ("launch", "µs/launch", "share", "bytes", "GB/s", "%peak", "ops")
SHORT_COLUMNS = ("n", "µs", "share", "bytes", "GB/s", "%pk")
"""Headers of a table without its ops column (narrow): as ``kernel-tui profile`` prints them."""


def _layout(m: Measurement, with_ops: bool, stale: bool) -> tuple[list[Text], list[list[Text]], list[int], list[str]]:
    rows = ordered_rows(m)
    labels = [Text(label, justify="right") for label in (COLUMNS[:6] if with_ops else SHORT_COLUMNS)]
    occupancy = with_ops and any(row.launch is not None for row in rows)  # GPU rows, where there is room
    if occupancy:
        labels.append(Text("occ", justify="right"))
    labels += [Text("ops")] if with_ops else []
    cells = []
    for row in rows:
        row_cells = kernel_cells(row, stale=stale)
        if occupancy:
            row_cells.insert(len(COLUMNS) - 1, occupancy_cell(row, stale=stale))
        cells.append(row_cells[: len(labels)])
    if m.grad:  # every row says its pass
        labels.insert(0, Text("pass"))
        cells = [[pass_cell(row), *c] for row, c in zip(rows, cells, strict=False)]
    widths = [max([label.cell_len, *(c[i].cell_len for c in cells)]) for i, label in enumerate(labels)]
    names = [display_name(row) + (f" ({row.kind})" if row.kind != "kernel" else "") for row in rows]
    return labels, cells, widths, names


def needed_width(m: Measurement | None, with_ops: bool) -> int:
    """The cells ``m``'s table takes with every kernel name whole (and its scrollbar if it scrolls)."""
    if m is None:
        return 40
    _, _, widths, names = _layout(m, with_ops, False)
    return (
        sum(widths)
        + max([len("kernel"), *map(len, names)])
        + CELL_PADDING * (len(widths) + 1)
        + scrollbar_width(len(names))
    )


def kernel_table(
    m: Measurement, width: int, *, with_ops: bool, stale: bool
) -> tuple[list[Text], list[list[Text]], list[KernelRow]]:
    """Columns, rows and the rows' kernels of ``m`` laid out in ``width`` cells: the ops column
    and the long headers ``with_ops``, kernel names elided only when there is no room for them."""
    rows = ordered_rows(m)
    labels, cells, widths, names = _layout(m, with_ops, stale)
    longest = max([len("kernel"), *map(len, names)])
    room = min(longest, flex_width(widths, width, NAME_MIN))
    table_rows = []
    for row, name, rest in zip(rows, names, cells, strict=False):
        style = "dim italic" if row.kind != "kernel" else ("dim" if stale else "")
        table_rows.append([Text(fit_kernel(name, room), style=style), *rest])
    if not rows:
        table_rows.append([Text("(no kernels recorded)", style="dim italic")])
    return [Text("kernel"), *labels], table_rows, rows


class KernelTable(ResultsTable):
    BINDINGS = bindings("kernel table")


class ModeBlock(Vertical):
    """One mode: a title line with its totals, a note when there is one, then its kernel table
    (made with the mode's first rows: a table is slow to style, and the first frame has none)."""

    def __init__(self, mode: str) -> None:
        super().__init__(id=f"mode-{mode}", classes="mode-block")
        self.display = False  # until the pane draws a state with this mode
        self.mode = mode
        self.rows: list[KernelRow] = []
        self.measurement: Measurement | None = None
        self.note_lines = 0
        self._width: int | None = None

    def compose(self) -> ComposeResult:
        yield PaneText(id=f"mode-title-{self.mode}", classes="mode-title")
        yield PaneText(id=f"mode-note-{self.mode}", classes="mode-note")

    def set_width(self, width: int | None) -> None:
        """A width of its own (None: its container's) where it changes: setting a width, even the
        same one, lays the whole screen out again, and the pane draws on every key."""
        if width != self._width:
            self._width = width
            self.styles.width = width

    @property
    def table(self) -> KernelTable | None:
        return next(iter(self.query(KernelTable)), None)

    def show(self, view: ModeView, note: Text | None, *, dim: bool, width: int, with_ops: bool) -> None:
        m = view.measurement
        self.measurement = m
        label = Text()
        if m is None:
            label.append(self.mode, style="bold")
        else:
            label.append(mode_label(m), style="bold red" if m.mode != "eager" and not m.ran_compiled else "bold")
            label = fact_lines(label.append("  "), measurement_facts(m), width)
        if dim:
            label.stylize("dim")
        console = self.app.console
        self.note_lines = lines_of(console, label, width) - 1 + (lines_of(console, note, width) if note else 0)
        self.query_one(".mode-title", PaneText).show_text(label)
        note_widget = self.query_one(".mode-note", PaneText)
        note_widget.show_text(note or "")
        note_widget.display = bool(note)
        table = self.table
        if m is None:
            if table is not None:
                table.display = False
            self.rows = []
            return
        if table is None:
            table = KernelTable(id=f"table-{self.mode}", cursor_type="row", zebra_stripes=False)
            table.styles.scrollbar_size_vertical = TABLE_SCROLLBAR
            self.mount(table)
        table.display = True
        scrollbar = scrollbar_width(len(ordered_rows(m)))
        columns, rows, self.rows = kernel_table(m, width - scrollbar, with_ops=with_ops, stale=dim)
        table.fill(columns, rows)
        # Its size set here, not left to "auto": the table measures its rows later (when idle), and
        # a layout made before that left it 0 wide or 0 high, blank until something else moved.
        table.styles.width = sum(column.get_render_width(table) for column in table.columns.values()) + scrollbar
        table.styles.height = table_lines(table)

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.rows) and self.measurement is not None:
            self.post_message(KernelPane.KernelChosen(self.measurement, self.rows[event.cursor_row]))


def diagnostics_note(m: Measurement) -> Text | None:
    """What torch said while measuring (a warning, a recompile), one line; enter shows them all."""
    if not m.diagnostics:
        return None
    more = f" (+{len(m.diagnostics) - 1} more: enter on a row)" if len(m.diagnostics) > 1 else ""
    note = Text("note: ", style="dim yellow")
    note.append_text(plain(m.diagnostics[0] + more, "dim"))
    return note


def lines_of(console: Console, text: Text, width: int) -> int:
    """Rows ``text`` takes wrapped at ``width`` cells, as a Static wraps it."""
    return len(text.wrap(console, max(1, width)))


def mode_note(view: ModeView) -> Text | None:
    """What a mode's block says besides its rows: a failure, a fallback, graph breaks, or what runs."""
    failure = view.failure
    if failure is not None and (failure.size is not None or failure.mode is not None):
        return plain(f"✗ {failure.error.located()}", "bold red", one_line=False)
    m = view.measurement
    if m is not None and view.fresh:
        if m.mode != "eager" and not m.ran_compiled:
            return plain(f"⚠ ran eager, not compiled: {m.fallback_reason or 'no reason given'}", "bold red")
        if m.compile is not None and m.compile.break_reasons:
            return plain("graph breaks: " + "; ".join(m.compile.break_reasons[:3]), "yellow", one_line=False)
        return diagnostics_note(m)
    note = ACTIVITY_NOTES.get(view.activity)
    return Text(note[0], style=note[1]) if note else None


def headline_text(state: FocusView, width: int, baseline: Text | None = None) -> Text:
    """The comparison line (from fresh rows only, unless nothing is fresh), the deltas against the
    pinned result (``baseline``), and the state marks."""
    eager = state.mode("eager")
    others = [v for v in state.modes if v.mode != "eager" and v.measurement is not None]
    any_fresh = any(v.fresh for v in state.modes if v.measurement is not None)

    def usable(view: ModeView | None) -> Measurement | None:
        if view is None or view.measurement is None or (any_fresh and not view.fresh):
            return None
        return view.measurement

    e = usable(eager)
    compiled = [m for v in others if (m := usable(v)) is not None]
    first = next((v for v in others if usable(v) is not None), None)
    head = Text()
    apart = readings_apart(eager if e is not None else None, first)
    line = comparison_text(e, compiled, width, apart=apart, two_processes=state.two_processes)
    if line:
        head.append_text(line)
        if baseline is not None:
            head.append("\n")
            head.append_text(baseline)
    elif state.busy:
        head.append("measuring…", style="italic")
    elif state.held:
        head.append(state.held, style="dim italic")
    else:
        head.append("no results yet", style="dim italic")
    if state.stale:
        head.stylize("dim")
        head.append("  ")
        head.append(" STALE ", style="bold reverse yellow")
        head.append(f" {state.stale}", style="yellow")
    elif state.updating:
        head.append("  ⟳ updating", style="cyan")
    if state.errors:
        head.append("\n")
        head.append_text(plain(f"✗ {state.errors[0].error.located()}", "bold red", one_line=False))
    return head


class KernelPane(KeysInOrder, Pane, can_focus=True):
    """Headline + one ModeBlock per selected mode (a tab stop itself only while it has no table:
    with tables, Tab goes from one to the next, and ``enter`` on a row opens its detail)."""

    TITLE = "kernels"
    baseline: Text | None = None
    """The deltas against the pinned result, set by the app before each new ``state``."""
    blocks: tuple[ModeBlock, ...] = ()
    """One per mode, once mounted (after the first frame) with their lines."""
    head_lines = 1
    """Lines of the headline as last drawn."""
    stacked = False
    """The modes' tables are drawn one above the other (too narrow side by side)."""
    posted_height: int | None = None
    """The height last said in a ``HeightChanged``."""

    class HeightChanged(Message):
        """The rows the pane needs changed (the main grid sizes its row with them)."""

    class KernelChosen(Message):
        def __init__(self, measurement: Measurement, row: KernelRow) -> None:
            super().__init__()
            self.measurement = measurement
            self.row = row

    def compose(self) -> ComposeResult:
        yield PaneText(id="headline")
        if fast_paths.enabled("after_first_frame"):
            yield Container(id="mode-blocks")
        else:
            self.blocks = tuple(ModeBlock(mode) for mode in MODES)
            yield Container(*self.blocks, id="mode-blocks")

    def on_mount(self) -> None:
        if not self.blocks:
            # The blocks show only once drawn: made after the first frame, which they would only slow.
            self.call_after_refresh(self._add_blocks)

    async def _add_blocks(self) -> None:
        blocks = tuple(ModeBlock(mode) for mode in MODES)
        await self.query_one("#mode-blocks").mount_all(blocks)
        self.blocks = blocks
        self._redraw()

    @property
    def inner_width(self) -> int:
        """The width the pane's children get: its content's, less the scrollbar's gutter, which
        stays reserved (``scrollbar-gutter: stable``) without a scrollbar. Lines counted at the
        content's width came one short where the headline wrapped at its last cell, and the pane,
        sized from that count, hid its last row."""
        gutter = self.styles.scrollbar_size_vertical if self.styles.scrollbar_gutter == "stable" else 0
        return self.content_size.width - gutter

    def draw(self, state: FocusView) -> None:
        head = headline_text(state, self.inner_width, self.baseline)
        if state.devices:  # several devices: the side by side first, then the followed one's headline
            head = devices_text(state.devices, state.entry, self.inner_width).append("\n").append_text(head)
        self.head_lines = lines_of(self.app.console, head, self.inner_width)
        self.query_one("#headline", PaneText).show_text(head)
        shown = next((v.measurement for v in state.modes if v.measurement is not None), None)
        where = f"N={format_size(state.size)}"
        if shown is not None:
            where += f" · {input_dtypes(shown)} · {plain(state.entry or shown.device).plain}"
        if state.entry:  # one of several devices: named as --device names it
            where += f"{'' if shown is not None else ' · ' + plain(state.entry).plain} (d: next device)"
        self.set_border(f"kernels · {where}", f"STALE: {state.stale}" if state.stale else "")
        width = self.inner_width
        count = len(state.modes)
        total = width - 2 * (count - 1)
        stacked = count > 1 and total // count < SIDE_BY_SIDE_MIN
        self.stacked = stacked
        self.query_one("#mode-blocks").set_class(stacked, "-stacked")
        # One column set for every table, from the width alone: tables side by side are read
        # across, and a set chosen by their content changed as a new chain's rows came in.
        with_ops = (width if stacked or count == 1 else total // count) >= OPS_MIN
        if stacked or count == 1:
            widths = [width] * count
        else:
            widths = share_width(total, [needed_width(v.measurement, with_ops) for v in state.modes])
        per_mode = {v.mode: (v, w) for v, w in zip(state.modes, widths, strict=False)}
        for block in self.blocks:
            view, block_width = per_mode.get(block.mode, (None, 0))
            block.display = view is not None
            if view is not None:
                block.set_width(None if stacked or count == 1 else block_width)
                dim = not view.fresh and state.stale is not None
                block.show(view, mode_note(view), dim=dim, width=block_width, with_ops=with_ops)
        focused = self.screen.focused
        if focused is not None and self in focused.ancestors_with_self and focused not in self.shown_tables():
            self.focus_table()  # rows came while the pane had the focus, or its table went: to one shown
        height = self.desired_height()
        if height != self.posted_height:
            self.posted_height = height
            self.post_message(self.HeightChanged())

    def desired_height(self) -> int:
        """Rows this pane needs to show everything (the main grid sizes its row with it)."""
        head = 1 + self.head_lines
        heights = []
        for block in self.blocks:
            if block.display:
                table = block.table
                rows = table_lines(table) if table is not None and table.display else 0
                heights.append(1 + block.note_lines + rows)
        stacked = self.stacked
        body = sum(h + 1 for h in heights) - 1 if stacked and heights else max(heights, default=1)
        return head + body + 2

    def shown_tables(self) -> list[KernelTable]:
        return [t for t in self.query(KernelTable) if t.display and t.parent is not None and t.parent.display]

    def allow_focus(self) -> bool:
        return not self.shown_tables()

    def focus_table(self) -> None:
        """Focus the first table on screen now (not after the queued keys: see ``ChainEditor``)."""
        tables = self.shown_tables()
        self.screen.set_focus(tables[0] if tables else self)
