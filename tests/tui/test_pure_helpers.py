"""The pure helpers behind the panes: chart, name fitting, column widths, fusion marks, tables, sweeps."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable

import pytest
from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable
from tui_helpers import recorded

from probes.link.protocol import KernelRow, OpNode, ProfileRequest
from probes.link.summary import BUSY_REASON, DRIFT_REASON, format_size
from tui.commands import COMMANDS, LETTER_ACTIONS, bindings, commands
from tui.demo_steps import SEED, cap_compiled
from tui.runs import Run, SweepResults, Target
from tui.screens.compare import Side, compare_table
from tui.views import SweepPaneState, SweepView
from tui.widgets.cells import display_name, fit, fit_kernel, flex_width, plain, share_width
from tui.widgets.chart import HLine, LogChart, Series, gbps_label, size_label, time_label
from tui.widgets.facts import fact_lines
from tui.widgets.headline import comparison_text
from tui.widgets.kernel_pane import kernel_table, measurement_facts, needed_width
from tui.widgets.op_chain_pane import compile_facts, compile_text, fusion_marks, kernels_per_op, op_groups, op_name
from tui.widgets.sweep_pane import status_line
from tui.widgets.tables import RowsTable, line_width


def row(name: str, ops: list[str], short: str | None = None, launches: float = 1.0) -> KernelRow:
    return KernelRow(name, short if short is not None else name, "kernel", launches, 1.0, 1.0, 0.5, 100, 1.0, 1.0, ops)


@pytest.mark.parametrize(
    ("name", "width", "expected"),
    [
        ("triton_poi_fused_add_relu_0", 40, "triton_poi_fused_add_relu_0"),
        ("vectorized_elementwise_kernel<CUDAFunctor_add<float>>", 26, "v…<CUDAFunctor_add<float>>"),
        ("vectorized_elementwise_kernel<clamp_scalar>", 30, "vectorized_elem…<clamp_scalar>"),
        ("triton_poi_fused_add_relu_0", 20, "trito…sed_add_relu_0"),
    ],
)
def test_fit_kernel_keeps_what_tells_kernels_apart(name: str, width: int, expected: str) -> None:
    fitted = fit_kernel(name, width)
    assert fitted == expected and len(fitted) <= width


@pytest.mark.parametrize("width", range(1, 45))
def test_fit_kernel_never_exceeds_the_width(width: int) -> None:
    for name in ("vectorized_elementwise_kernel<clamp_scalar>", "triton_per_fused__softmax_0", "x<>", "a" * 60):
        assert len(fit_kernel(name, width)) <= width
        assert len(fit(name, width)) <= width


def test_widths_are_shared_by_need() -> None:
    assert share_width(100, [30, 40]) == [45, 55]  # both fit: the spare is spread
    assert share_width(60, [20, 80]) == [20, 40]  # the short one stays whole
    assert share_width(50, [40, 40]) == [25, 25]
    assert sum(share_width(77, [10, 50, 90])) == 77
    assert flex_width([5, 5], 40, 8) == 40 - 10 - 3 * 2


def test_kernel_table_names_take_the_free_width() -> None:
    rows = [row("vectorized_elementwise_kernel<clamp_scalar>", ["aten::relu"])]
    from probes.link.protocol import Measurement

    m = Measurement("a", "eager", 1, "cuda:0", "fp32", rows, [], 1, 100, 1.0, 1.0, 1, False)
    _, cells, _ = kernel_table(m, needed_width(m, False), with_ops=False, stale=False)
    assert str(cells[0][0]) == "vectorized_elementwise_kernel<clamp_scalar>"
    _, cells, _ = kernel_table(m, needed_width(m, False) - 10, with_ops=False, stale=False)
    assert str(cells[0][0]).endswith("<clamp_scalar>") and "…" in str(cells[0][0])


def test_outside_text_is_inert_and_never_markup() -> None:
    text = plain("\x1b]52;c;aGk=\x07 [bold]x[/bold]")
    assert "\x1b" not in text.plain and "\\x1b" in text.plain and "[bold]" in text.plain
    assert display_name(row("k\x1b[31m", [], short="")) == "k\\x1b[31m"


def test_ops_are_tied_to_the_kernel_rows_that_list_them() -> None:
    """CPU eager: relu names itself but runs as clamp_min; compiled softmax lists `softmax`."""
    from probes.link.protocol import Measurement

    ops = [
        OpNode("aten::add", [8], "fp32", 32, 64, ["aten::add"]),
        OpNode("aten::relu", [8], "fp32", 32, 32, ["aten::relu"]),
    ]
    eager_rows = [row("aten::add", ["aten::add"]), row("aten::clamp_min", ["aten::relu"])]
    eager = Measurement("c", "eager", 8, "cpu", "fp32", eager_rows, [], 2, 160, 1.0, 1.0, 1, False)
    assert kernels_per_op(ops, eager) == [["aten::add"], ["aten::clamp_min"]]
    softmax = [OpNode("aten::_softmax", [8], "fp32", 32, 32)]
    compiled = Measurement(
        "s",
        "compiled",
        8,
        "cpu",
        "fp32",
        [row("graph_0_cpp_fused__softmax_0", ["aten::softmax"], short="cpp_fused__softmax_0")],
        [],
        1,
        64,
        1.0,
        1.0,
        1,
        True,
    )
    assert kernels_per_op(softmax, compiled) == [["cpp_fused__softmax_0"]]
    assert op_name("aten::_softmax") == op_name("softmax") == "softmax"
    # Two adds in one chain keep their own kernels (recorded on the H200).
    m = next(m for m in recorded("modes").results if m.mode == "eager")
    assert kernels_per_op(m.ops, m) == [[display_name(m.kernels[0])], [display_name(m.kernels[1])]]


def test_fusion_marks_bracket_the_ops_of_one_kernel() -> None:
    assert fusion_marks(["k0", "k0", "k0", None, "k1"]) == ["┐", "│", "┘", " ", "─"]
    assert fusion_marks([None, None]) == [" ", " "]
    assert fusion_marks(["a", "b", "b"]) == ["─", "┐", "┘"]


def test_sweep_results_cover_fewer_sizes_not_other_settings() -> None:
    target = Target("cuda:0", "fp32", None)
    request = ProfileRequest("r1", "(a + b).relu()", sizes=[100, 10_000], modes=["eager", "compiled"])
    sweep = SweepResults(Run(request, "sweep", "(a+b).relu()", target, 0.0))
    modes = ("eager", "compiled")
    assert sweep.covers("(a+b).relu()", target, modes, (100,))
    assert not sweep.covers("(a+b).relu()", target, modes, (100, 10**6))
    assert not sweep.covers("(a+b).relu()", target, ("eager",), (100,))
    assert not sweep.covers("(a+b).relu()", Target("cuda:0", "bf16", None), modes, (100,))
    assert not sweep.covers("a+b", target, modes, (100,))


def test_chart_draws_series_reference_lines_and_axes() -> None:
    chart = LogChart()
    results = [m for m in recorded().results if m.mode == "eager"]
    chart.set_data(
        [Series("eager", "red", [(m.size, m.wall_time_us) for m in results])],
        hlines=[HLine(1000.0, "peak", "red")],
        vmark=(10**7, "crossover 1e7"),
    )
    assert min(m.wall_time_us for m in results) > 10  # the H200's eager calls take 15-480 µs
    assert chart._ranges() == (2, 8, 1, 4)  # 1e2..1e8; 10 µs..10 ms: the 1 ms reference line fits, with a margin
    assert [time_label(v) for v in (0.1, 1.0, 1000.0, 2e6)] == ["100ns", "1µs", "1ms", "2s"]
    assert gbps_label(4300) == "4.3TB/s" and gbps_label(0.5) == "500MB/s" and size_label(1e6) == "1e6"
    chart.set_data([])
    assert chart._ranges() is None


class ChartHost(App[None]):
    def compose(self) -> ComposeResult:
        yield LogChart(id="chart")


async def test_chart_renders_in_its_size() -> None:
    app = ChartHost()
    async with app.run_test(size=(60, 16)) as pilot:
        chart = app.query_one(LogChart)
        chart.set_data([Series("eager", "red", [(100, 2.0), (10**6, 20.0)])], vmark=(10**4, "x 1e4"))
        await pilot.pause()
        lines = str(chart.render()).split("\n")
        assert len(lines) == chart.size.height and all(len(line) <= chart.size.width for line in lines)
        assert "●" in "".join(lines) and "1e2" in lines[-1] and "1e6" in lines[-1]
        chart.set_data([], empty_message="nothing to plot")
        assert str(chart.render()) == "nothing to plot"


async def test_the_same_data_again_does_not_repaint_the_chart() -> None:
    """The sweep pane gives its chart its data on every key; each repaint re-plotted every line."""
    app = ChartHost()
    async with app.run_test(size=(60, 16)) as pilot:
        chart = app.query_one(LogChart)
        data = [Series("eager", "red", [(100, 2.0), (10**6, 20.0)])]
        chart.set_data(data, vmark=(10**4, "x 1e4"))
        await pilot.pause()
        repaints: list[int] = []
        refresh = chart.refresh
        chart.refresh = lambda *a, **k: (repaints.append(1), refresh(*a, **k))[1]  # type: ignore[method-assign]
        chart.set_data([Series("eager", "red", [(100, 2.0), (10**6, 20.0)])], vmark=(10**4, "x 1e4"))
        assert repaints == []
        chart.set_data([Series("eager", "red", [(100, 2.0), (10**6, 30.0)])], vmark=(10**4, "x 1e4"))
        assert repaints == [1]


async def test_a_table_sizes_its_columns_and_leaves_itself_alone_when_nothing_changed() -> None:
    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield RowsTable(id="t")

    app = Host()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(RowsTable)
        columns, rows = [Text("kernel"), Text("n")], [[Text("triton_poi_fused_add_relu_0"), Text("1")]]
        assert table.fill(columns, rows) is True
        assert table.widths == [27, 1]
        table.move_cursor(row=0)
        assert table.fill(columns, rows) is False  # same content: untouched
        assert table.fill(columns, [*rows, [Text("short")]]) is True  # a short row is padded
        assert table.row_count == 2 and table.cursor_row == 0
        assert [cell.plain for cell in table.row_cells(1)] == ["short", ""]
        await pilot.pause()


async def test_an_auto_width_table_is_as_wide_as_its_rows_before_it_is_idle() -> None:
    """The sweep table is ``width: auto``: laid out between ``fill`` and DataTable's idle-time
    measure, it must already be as wide as its rows, not zero cells (the table vanished)."""

    class Host(App[None]):
        CSS = "RowsTable { width: auto; }"

        def compose(self) -> ComposeResult:
            yield RowsTable(id="t")

    app = Host()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(RowsTable)
        table.fill([Text("N"), Text("eager")], [[Text("1e2"), Text("15.9 µs")]])
        expected = line_width(table.widths) + 2 * table.cell_padding
        assert table.get_content_width(app.size, app.size) == expected  # before any idle
        await pilot.pause()
        assert table.size.width >= expected


async def test_a_table_of_one_cell_per_row_draws_as_a_table_of_a_cell_per_column() -> None:
    """Each row is drawn as one cell (3x faster to draw): the lines must read, and be styled, as
    DataTable's own columns of the same widths would draw them, the cursor's row included."""
    columns = [Text("kernel"), Text("n", justify="right"), Text("µs", justify="right"), Text("note", justify="center")]
    rows = [
        [
            Text("triton_poi_fused_add_relu_0", style="bold"),
            Text("1", justify="right"),
            Text("4.52", justify="right"),
            Text("ok", justify="center"),
        ],
        [
            Text("vectorized_elementwise_kernel", style="dim"),
            Text("12", justify="right"),
            Text("10.10 ~", style="yellow", justify="right"),
            Text("a note", style="bold yellow reverse", justify="center"),
        ],
        [
            Text("x", style="underline", justify="left"),
            Text("3", style="reverse", justify="right"),
            Text("1.0"),
            Text("c", style="reverse", justify="center"),
        ],
        [Text("(no kernels recorded)", style="dim italic")],
    ]
    widths = [29, 2, 7, 6]

    def one_cell_per_row(table: RowsTable) -> None:
        table.fill(columns, rows)
        assert table.widths == widths

    def a_cell_per_column(table: DataTable) -> None:
        for label, width in zip(columns, widths, strict=True):
            table.add_column(label, width=width)
        for row in rows:
            table.add_row(*row, *[Text("")] * (len(columns) - len(row)))

    async def drawn(table: DataTable, fill: Callable) -> list[list[tuple[str, str]]]:
        class Host(App[None]):
            def compose(self) -> ComposeResult:
                yield table

        async with Host().run_test(size=(80, 12)) as pilot:
            fill(table)
            await pilot.pause()
            return [
                [(char, str(segment.style)) for segment in table.render_line(y) for char in segment.text]
                for y in range(len(rows) + 1)
            ]

    assert await drawn(RowsTable(cursor_type="row", zebra_stripes=False), one_cell_per_row) == await drawn(
        DataTable(cursor_type="row", zebra_stripes=False), a_cell_per_column
    )


def test_the_command_table_makes_one_binding_per_key_and_place() -> None:
    seen = set()
    for c in COMMANDS:
        for key in filter(None, c.keys.split(",")):
            assert (key, c.where) not in seen, (key, c.where)
            seen.add((key, c.where))
    assert "sweep" in LETTER_ACTIONS and "help" not in LETTER_ACTIONS and "quit" not in LETTER_ACTIONS
    assert [b.action for b in bindings("chains pane")] == [c.action for c in commands("chains pane")]
    assert bindings("kernel table")[0].action == "select_cursor"


@pytest.mark.parametrize("name", ["sweep", "fallback", "cpu_grad"])
def test_a_mode_title_breaks_between_facts_never_inside_one(name: str) -> None:
    """``compile 0.06 s`` is never split into ``compile 0.06`` / ``s``, nor a pass's ``3.22 ms``
    into ``3.22`` / ``ms`` (seen at 160x50 in a bf16 training step), whatever the width."""
    compiled = next(m for m in recorded(name).results if m.mode == "compiled")
    facts = [fact.plain for line in measurement_facts(compiled) for fact in line]
    assert any(f.startswith("compile ") for f in facts)
    assert not compiled.grad or [f.split()[0] for f in facts if f.startswith(("fwd ", "bwd "))] == ["fwd", "bwd"]
    for width in range(30, 130):
        title = fact_lines(Text("compiled  "), measurement_facts(compiled), width).plain
        assert title.replace("\n", " · ") == "compiled  " + " · ".join(facts), (
            width,
            title,
        )  # breaks at facts' ends only
        for line in title.split("\n"):
            assert len(line) <= width or line.removeprefix("compiled  ") in facts, (
                width,
                title,
            )  # a lone fact may overflow


@pytest.mark.parametrize("name", ["sweep", "fallback"])
def test_the_op_chain_panes_compile_line_breaks_between_facts_never_inside_one(name: str) -> None:
    """``0 recompiles`` read ``0`` / ``recompiles`` in the op chain pane at 120x40; a ran-eager
    warning above the line does not throw the breaks off."""
    compiled = next(m for m in recorded(name).results if m.mode == "compiled")
    groups = op_groups(None, compiled)
    facts = [fact.plain for fact in compile_facts(compiled, groups)]
    assert any(f.endswith("recompiles") or f.endswith("recompile") for f in facts)
    start = f"{compiled.mode}: "
    for width in range(24, 130):
        lines = compile_text(compiled, groups, width).plain.split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith(start))
        flowing = [
            lines[at].removeprefix(start),
            *[line for line in lines[at + 1 :] if not line.startswith("  break: ")],
        ]
        assert " · ".join(flowing).split(" · ") == facts, (width, lines)  # breaks at facts' ends only
        assert all(len(line) <= width or line in facts for line in flowing[1:]), (width, lines)


def test_the_headline_breaks_between_its_facts_never_inside_one() -> None:
    """``backward 4 -> 4 kernels, ...`` read ``backward 4`` / ``-> 4 kernels`` at 80x24, and a
    ratio's interval could be cut from its ratio: counts, ratios and passes are whole facts."""
    grad = recorded("cpu_grad").results
    eager = next(m for m in grad if m.mode == "eager")
    compiled = next(m for m in grad if m.mode == "compiled")
    wide = comparison_text(eager, [compiled], 10_000).plain.split("\n")
    facts = [fact for line in wide[:2] for fact in line.split(" · ")]
    assert any(f.startswith("forward ") for f in facts) and any(f.startswith("backward ") for f in facts)
    for width in range(40, 161):
        lines = comparison_text(eager, [compiled], width).plain.split("\n")
        for fact in facts:
            if len(fact) <= width:
                assert any(fact in line for line in lines), (width, fact, lines)


def test_the_sweep_says_why_a_device_time_stands_far_above_its_wall_time() -> None:
    """In the words the measurement carries, which ``kernel-tui profile`` prints under its table."""
    results = recorded().results
    reason = f"the kernel times add up to 3.1x the call's wall time: {DRIFT_REASON}"
    over = dataclasses.replace(results[0], device_time_us=results[0].wall_time_us * 3.1, device_time_us_iqr=None)
    sizes = tuple(sorted({m.size for m in results}))
    request = ProfileRequest("s1", over.chain, list(sizes), ["eager", "compiled"])
    rs = SweepResults(Run(request, "sweep", over.chain, Target("cuda:0", "fp32", None), 0.0, done=True))
    for m in [over, *results[1:]]:
        rs.results[(m.size, m.mode)] = m
    line = status_line(SweepPaneState(SweepView(rs, sizes, "compiled"))).plain
    assert f">wall {over.mode} N={format_size(over.size)}: {reason}" in line


def test_compare_sets_no_difference_between_results_measured_differently() -> None:
    m = recorded().results[0]
    other = dataclasses.replace(m, dtype="bf16")
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(compare_table(Side("left", m, pending=False), Side("right", other, pending=False)))
    text = console.export_text()
    assert "not compared: measured at another dtype (fp32 vs bf16)" in " ".join(text.split())
    assert "faster" not in text and "slower" not in text


def test_the_demo_caption_of_a_busy_reading_says_unclear_not_a_ratio() -> None:
    found = {m.mode: m for m in recorded().results if m.size == 1_000_000}
    busy = dataclasses.replace(found["eager"], noisy=True, noise_reasons=[f"{BUSY_REASON}: 2.0 of 2 cores loaded"])

    def lookup(chain: str, size: int, mode: str):
        return {"eager": busy, "compiled": found["compiled"]}.get(mode) if (chain, size) == (SEED, 10**6) else None

    caption = cap_compiled(lookup)
    assert "(unclear: machine busy, re-run)" in caption and "x)" not in caption
