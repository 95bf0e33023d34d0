"""Pilot tests of grad, the roofline view, the pinned baseline and static vs dynamic, against the
replay worker (H200 recordings without the new fields, CPU recordings with them) and, marked
slow, the real CPU worker."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from tui_helpers import focus_done, recorded, replay_command, settle, settled, shown, sweep_done, wait_for

from tui.screens.compare import CompareScreen
from tui.screens.kernel_detail import KernelDetail
from tui.screens.roofline import RooflineScreen
from tui.widgets.editor import ChainEditor
from tui.widgets.kernel_pane import KernelPane, KernelTable
from tui.widgets.roofline import RooflineChart
from tui.widgets.status_bar import StatusBar

MATMUL = "x: [N, 256]\nw: [256, 256]\nF.gelu(x @ w)"


def headline(app) -> str:
    return str(app.query_one("#headline").render())


def rendered(renderable) -> str:
    console = Console(width=140, file=io.StringIO())
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def table_text(table) -> tuple[list[str], list[list[str]]]:
    labels = [label.plain for label in table.labels]
    return labels, [[cell.plain for cell in table.row_cells(i)] for i in range(table.row_count)]


async def started(pilot, app) -> None:
    await wait_for(pilot, lambda: settled(app), what="first results")
    await pilot.press("escape")
    await pilot.pause()


async def test_with_grad_the_op_chain_shows_each_pass_under_its_label_with_its_own_kernels(make_app) -> None:
    """A matmul's training step: the forward mm and gelu above ``forward``, mapped to the forward
    kernels; the backward's gelu_backward and two mm below ``backward``, mapped to the backward's."""
    app = make_app(chain=MATMUL, worker_command=replay_command("cpu_matmul_grad"), focus_size=1000, grad=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="forward + backward rows")
        await pilot.press("escape")
        _, rows = table_text(app.query_one("#ops-table"))
        ops = [r[0] for r in rows]
        assert ops.index("forward") == 0 and ops.index("backward") > ops.index("gelu")
        forward, backward = rows[1 : ops.index("backward")], rows[ops.index("backward") + 1 :]
        assert [r[0] for r in forward] == ["mm", "gelu", "sum"]
        assert [r[0] for r in backward] == ["ones_like", "gelu_backward", "mm", "mm"]
        assert all("backward" not in r[-1] for r in forward)  # no backward kernel against a forward op
        assert "gelu_backward" in backward[1][-1].replace("…", "") or "backward_0" in backward[1][-1]
        info = str(app.query_one("#compile-info").render())
        assert "forward 3 ops → 2 kernels" in info and "backward 4 ops → 3 kernels" in info


async def test_a_device_time_above_the_wall_time_is_marked_and_the_detail_says_why(make_app) -> None:
    """(a + b).relu() with grad on the CPU: eager's kernel times add up to 1.8x its wall time (the
    profiler's own cost); compiled's do not."""
    eager, compiled = recorded("cpu_grad").results
    assert eager.device_time_us > 1.05 * eager.wall_time_us and compiled.device_time_us < compiled.wall_time_us
    app = make_app(worker_command=replay_command("cpu_grad"), focus_size=100_000, grad=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="forward + backward rows")
        await pilot.press("escape")
        eager_title = str(app.query_one("#mode-title-eager").render())
        assert "device 183.8 µs ±10%~ >wall" in eager_title and "wall 103.2 µs" in eager_title
        assert ">wall" not in str(app.query_one("#mode-title-compiled").render())
        app.query_one(KernelPane).focus_table()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the kernel detail")
        facts = " ".join(rendered(app.screen.query_one(".detail-facts").content).split())
        why = "the kernel times add up to 1.8x the call's wall time: the profiled reps ran slower than the timed ones"
        assert f"device >wall {why}" in facts
        assert facts.count(why) == 1  # not said again among the noise reasons


async def test_grad_toggle_measures_both_passes_and_persists(make_app, tmp_path) -> None:
    app = make_app(worker_command=replay_command("cpu_grad"), focus_size=100_000)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert shown(app, "eager") is None  # only the grad run is recorded at 1e5
        await pilot.press("b")
        await wait_for(pilot, lambda: focus_done(app), what="forward + backward rows")
        assert shown(app, "eager").grad and shown(app, "compiled").grad
        labels, rows = table_text(app.query_one("#table-eager", KernelTable))
        assert labels[1] == "pass" and {r[1] for r in rows} == {"fwd", "bwd"}
        assert [r[1] for r in rows] == sorted((r[1] for r in rows), key=["fwd", "bwd"].index)  # forward first
        head = headline(app)
        assert "forward 3 -> 1 kernel" in head and "backward 4 -> 4 kernels" in head
        busy = next(r for r in recorded("cpu_grad").results[0].noise_reasons if r.startswith("machine busy"))
        assert f"~ noisy (eager, compiled): {busy}" in head  # recorded on the shared 2-core machine
        assert "fwd 3 kernels" in str(app.query_one("#mode-title-eager").render())
        _, ops = table_text(app.query_one("#ops-table"))
        assert [r[0] for r in ops if r[0] in ("forward", "backward")] == ["forward", "backward"]
        assert "fused threshold_backward" in str(app.query_one("#compile-info").render())
        assert "fwd+bwd" in app.query_one(StatusBar).info.settings
        app.query_one(KernelPane).focus_table()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the kernel detail")
        facts = rendered(app.screen.query_one(".detail-facts").content)
        assert "forward" in facts and "(p25-p75)" in facts and "FLOPs unknown" not in facts
        assert "FLOPs/call" in facts and "machine busy" in facts  # why the call is noisy, in words
        await pilot.press("escape")
        app.save_workspace()
        assert json.loads(app.store.path.read_text())["settings"]["grad"] is True
        await pilot.press("b")
        assert app.main.status.said[-1][0] == "grad: forward only"
        await wait_for(pilot, lambda: settled(app), what="forward-only: not recorded")
        assert "no recording of this chain in eager" in str(app.query_one("#mode-note-eager").render())


async def test_roofline_of_results_without_flops_places_nothing_and_says_why(make_app) -> None:
    app = make_app()  # H200 recordings made before FLOPs were counted
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        screen = app.screen
        kernels = sum(len(m.kernels) for m in (shown(app, "eager"), shown(app, "compiled")))
        labels, rows = table_text(screen.query_one("#roofline-table"))
        flops = labels.index("FLOPs")
        assert len(rows) == kernels and all(r[flops] == "unknown" for r in rows)
        assert f"0 of {kernels} kernels placed" in str(screen.query_one("#roofline-note").render())
        chart = str(screen.query_one(RooflineChart).render())
        assert "●" not in chart and "◆" not in chart
        await pilot.press("escape")
        assert not isinstance(app.screen, RooflineScreen)


async def test_roofline_places_counted_kernels_and_the_cursor_picks_one(make_app) -> None:
    app = make_app(chain=MATMUL, worker_command=replay_command("cpu_matmul"), focus_size=1000)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        screen, chart = app.screen, app.screen.query_one(RooflineChart)
        assert screen.title_text.startswith("roofline · matmul_gelu · N="), (
            screen.title_text
        )  # its name, not a declaration
        placed = [e for e in screen.entries if e.placed]
        assert [e.row.short_name for e in placed] == ["aten::mm"]  # eager mm: FLOPs and bytes known
        assert chart.selected == 0 and "●" in str(chart.render())
        assert "fp32 peak" in str(chart.render()) and "GB/s" in str(chart.render())
        await pilot.press("down")
        assert chart.selected == 1
        _, rows = table_text(screen.query_one("#roofline-table"))
        assert any(r[-1] == "no bytes" for r in rows)  # the compiled mm: FLOPs, but no bytes
        app.main.settings.set_compile_mode("max-autotune")  # not recorded: the open view follows the new state
        await wait_for(pilot, lambda: settled(app), what="max-autotune: not recorded")
        assert [e.mode for e in screen.entries] == ["eager", "eager"]


async def roofline_table_at(make_app, size: tuple[int, int]) -> tuple[list[str], list[list[str]], int, int]:
    """The roofline table of a matmul training step at ``size``: labels, rows, its width and the
    width it has to show it."""
    app = make_app(chain=MATMUL, worker_command=replay_command("cpu_matmul_grad"), focus_size=1000, grad=True)
    async with app.run_test(size=size) as pilot:
        await started(pilot, app)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        await pilot.pause()
        table = app.screen.query_one("#roofline-table")
        labels, rows = table_text(table)
        return labels, rows, table.virtual_size.width, table.scrollable_content_region.width


async def test_roofline_table_fits_80_columns_with_every_figure_whole(make_app) -> None:
    """At 80x24 the table once ran past the view's edge, so "103%" read "1": now names are
    shortened and the FLOP/B column left out (the chart's x axis shows it) until it fits."""
    labels, rows, width, room = await roofline_table_at(make_app, (80, 24))
    assert "FLOP/B" not in labels and labels[-2:] == ["of roof", "bound"]
    assert width <= room
    placed = [r for r in rows if r[-1] in ("memory", "compute")]
    assert placed and all(r[-2].endswith("%") for r in placed)
    labels, _, width, room = await roofline_table_at(make_app, (160, 50))
    assert "FLOP/B" in labels and width <= room  # room for every column


async def test_pin_shows_deltas_persists_compares_and_unpins(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        await pilot.press("p")
        assert app.main.status.said[-1][0].startswith("pinned add_relu")
        assert "vs pin · eager: device no change" in headline(app)
        app.query_one(ChainEditor).load_text("c = a + b")
        await wait_for(pilot, lambda: app.session.text == "c = a + b" and focus_done(app), what="the edit's rows")
        head = headline(app)
        assert "kernels 2 -> 1" in head and "better" in head and "5N -> 3N" in head
        app.save_workspace()
        pins = json.loads(app.store.path.read_text())["pins"]
        assert app.workspace.chain.name == "add_relu"  # a chain keeps its name through an edit, and its pin
        assert [m["chain"] for m in pins["add_relu"]] == ["(a + b).relu()", "(a + b).relu()"]
        await pilot.press("escape", "w")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), what="compare with the pin")
        text = " ".join(app.screen.plain_text().split())  # labels wrap in their column
        assert "pin: (a + b).relu() · compiled" in text and "now: c = a + b · compiled" in text
        assert "triton_poi_fused_add_relu_0" in text and "1 gone, 1 new" in text
        await pilot.press("escape", "u")
        assert "vs pin" not in headline(app) and app.workspace.pins == {}


async def test_static_and_dynamic_compiles_side_by_side(make_app) -> None:
    sizes = [10_000, 100_000, 1_000_000]
    app = make_app(worker_command=replay_command("cpu_dynamic"), modes=("compiled", "dynamic"), sizes=sizes)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert app.query_one("#mode-compiled").display and app.query_one("#mode-dynamic").display
        assert "dynamic vs compiled: device " in headline(app)
        await pilot.press("s")
        await wait_for(pilot, lambda: sweep_done(app), what="the sweep")
        assert "N = 1e6: dynamic vs compiled" in str(app.query_one("#crossover").render())
        _, rows = table_text(app.query_one("#sweep-table"))
        dynamic = [r for r in rows if r[1] == "dynamic"]
        assert len(dynamic) == len(sizes) and all(r[-1] for r in dynamic)  # each has its ratio to static


@pytest.mark.slow
async def test_grad_flops_and_dynamic_with_the_real_cpu_worker(make_app) -> None:
    app = make_app(chain="x: [N, 64]\nw: [64, 64]\nF.gelu(x @ w)", worker_command=None, device="cpu", focus_size=1000)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: settled(app), timeout=240, what="first results")
        await pilot.press("escape", "b")
        await wait_for(pilot, lambda: focus_done(app), timeout=240, what="forward + backward")
        compiled = shown(app, "compiled")
        assert compiled.grad and {r.pass_ for r in compiled.kernels} == {"forward", "backward"}
        assert any(r.flops == 2 * 1000 * 64 * 64 for r in shown(app, "eager").kernels)  # [N,64] @ [64,64]
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        assert any(e.placed and e.row.pass_ == "backward" for e in app.screen.entries)
        await pilot.press("escape")
        app.main.settings.set_modes("static+dynamic")
        await wait_for(pilot, lambda: focus_done(app), timeout=240, what="static and dynamic")
        assert shown(app, "dynamic").ran_compiled and "dynamic vs compiled" in headline(app)


async def test_a_new_chain_shows_no_sweep_yet_and_its_pin_no_deltas_from_another_texts_sweep(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: sweep_done(app), what="the sweep")
        await pilot.press("p")
        await settle(pilot)
        assert "vs pin" in table_text(app.query_one("#sweep-table"))[0]
        app.query_one(ChainEditor).load_text("c = a + b")
        await wait_for(pilot, lambda: app.session.text == "c = a + b" and focus_done(app), what="the edit's rows")
        await settle(pilot)
        assert str(app.query_one("#crossover").render()).startswith("no sweep yet")
        assert not app.query_one("#sweep-table").display
        assert "kernels 2 -> 1" in headline(app)  # the edit itself is still set against the pin
        app.query_one(ChainEditor).load_text("")
        await wait_for(pilot, lambda: app.session.text == "", what="the empty editor")
        await settle(pilot)
        assert "the chain has an error" not in headline(app) and "empty" in headline(app)
