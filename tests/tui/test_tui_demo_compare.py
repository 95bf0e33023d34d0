"""The demo (a guided walk, one live step per key) and the compare screen, against the replay worker."""

from __future__ import annotations

from tui_helpers import SEED_CHAIN, focus_done, recorded, replay_command, settle, wait_for

from probes.link.summary import comparisons, crossover, format_size, format_time_us, format_transfers
from tui.demo import DemoApp
from tui.demo_steps import STEPS
from tui.screens.compare import CompareScreen, diff_rows


def step_done(app: DemoApp) -> bool:
    return app.step_done()


def find(name: str, chain: str, size: int, mode: str):
    return next(m for m in recorded(name).results if m.chain == chain and m.size == size and m.mode == mode)


async def test_demo_walks_every_step_back_and_quits() -> None:
    app = DemoApp(worker_command=replay_command(), frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        captions = []
        for i in range(len(STEPS)):
            await wait_for(pilot, lambda app=app: step_done(app), what=f"step {i + 1}")
            assert app.index == i
            caption = str(app.query_one("#demo-caption").render())
            assert app.caption().strip() and app.caption() in caption.replace("\n", " ")
            captions.append(app.caption())
            await pilot.press("space" if i % 2 == 0 else "right")
        assert app.index == len(STEPS) - 1  # no step past the last
        add8 = find("add", "c = a + b", 8, "eager")
        assert "1 kernel" in captions[0] and add8.kernels[0].short_name in captions[0]
        assert format_time_us(add8.device_time_us) in captions[0]
        assert "1 kernel" in captions[1] and "N=1e6" in captions[1]
        eager = app.lookup(SEED_CHAIN, 1_000_000, "eager")
        compiled = app.lookup(SEED_CHAIN, 1_000_000, "compiled")
        assert "2 kernels" in captions[2] and "5N" in captions[2] and format_transfers(eager) == "5N"
        assert all(k.short_name in captions[2] for k in eager.kernels)
        assert "one fused kernel" in captions[3] and "triton_poi_fused_add_relu_0" in captions[3]
        assert "3N" in captions[3] and format_time_us(compiled.device_time_us) in captions[3]
        where = crossover(comparisons(recorded("sweep").results))
        assert where is not None and f"faster per call from N = {format_size(where)}" in captions[4]
        source = find("cpu_source", STEPS[5].chain, 1_000_000, "compiled")
        assert "compiled 1 kernel" in captions[5] and source.kernels[0].short_name in captions[5]
        await pilot.press("left", "left")
        assert app.index == len(STEPS) - 3
        await wait_for(pilot, lambda: step_done(app), what="back")
        assert "triton_poi_fused_add_relu_0" in str(app.query_one("#demo-caption").render())
        await pilot.press("q")
    assert app.return_value == 0


async def test_every_demo_step_shows_its_title_caption_rows_and_status_on_one_screen() -> None:
    """The demo is shown to a room: each step's title and caption stay on screen above the rows,
    every kernel row is inside the pane, and the status sits above the footer. (The kernel pane
    once took the whole height, the caption scrolled off the top, and the status hid under the
    footer.)"""
    for size in ((100, 30), (80, 24)):
        app = DemoApp(worker_command=replay_command(), frozen=True)
        async with app.run_test(size=size) as pilot:
            for i in range(len(STEPS)):
                await wait_for(pilot, lambda app=app: step_done(app), what=f"step {i + 1}")
                await pilot.pause()
                screen = app.screen.region
                regions = {
                    name: app.query_one(name).region
                    for name in ("#demo-step", "#demo-caption", "#demo-status", "Footer")
                }
                assert all(screen.contains_region(r) and r.height for r in regions.values()), (size, i, regions)
                assert regions["#demo-step"].y == 0 and regions["#demo-caption"].y == regions["#demo-step"].bottom
                assert regions["#demo-status"].bottom == regions["Footer"].y
                pane = app.query_one("#kernels") if not STEPS[i].sweep else app.query_one("#sweep")
                assert (
                    pane.region.y >= regions["#demo-caption"].bottom and pane.region.bottom <= regions["#demo-status"].y
                )
                for table in pane.query("KernelTable"):
                    if table.display:
                        assert table.region.bottom < pane.region.bottom and table.region.height == table.row_count + 1
                await pilot.press("space")


def test_demo_subcommand_parses() -> None:
    from tui.__main__ import build_demo

    app = build_demo(["--device", "cpu", "--replay", str(recorded.__globals__["recording"]("add"))])
    assert isinstance(app, DemoApp) and app.device == "cpu"


async def test_compare_eager_vs_compiled(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "o")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.left.measurement and screen.right.measurement, what="both sides")
        text = screen.plain_text()
        assert "2 -> 1 kernel" in text and "5N -> 3N" in text
        assert screen.title_text == "compare · add_relu: eager vs compiled"
        assert (screen.left.label, screen.right.label) == ("eager", "compiled")  # the chain once, in the title
        e, c = screen.left.measurement, screen.right.measurement
        device_row = next(line for line in text.splitlines() if line.strip().startswith("device time"))
        assert format_time_us(e.device_time_us) in device_row and format_time_us(c.device_time_us) in device_row
        rows = {r.what: r for r in diff_rows(e, c)}
        assert rows["kernels/call"].style == "green" and rows["bytes/call"].style == "green"
        assert "triton_poi_fused_add_relu_0" in rows["only here"].right
        assert "vectorized_elementwise_kernel<clamp_scalar>" in rows["only here"].left
        for width in (76, 100):  # a long name is cut in its middle to fit, never folded inside its op
            names = screen.plain_text(width).split("only here", 1)[1]
            assert "<clamp_scalar>" in names and "<add>" in names and "add_relu_0" in names, names
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_compare_two_chains_fetches_the_other(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        seed = app.workspace.current
        index = app.workspace.add("c = a + b", "add")
        app.main.open_chain(seed)  # back on the seed chain
        screen = app.main.comparisons.compare_chains(index)
        await wait_for(pilot, lambda: screen.right.measurement is not None, what="the other chain, fetched")
        text = screen.plain_text()
        assert "(a + b).relu()" in text and "c = a + b" in text
        assert "1 -> 1 kernel" in text and "3N -> 3N" in text
        assert "triton_poi_fused_add_0" in text


def test_demo_compiled_step_snapshot(snap_compare) -> None:
    app = DemoApp(worker_command=replay_command(), frozen=True)

    async def run_before(pilot) -> None:
        for _ in range(3):
            await wait_for(pilot, lambda: step_done(app), what="step")
            await pilot.press("space")
        await wait_for(pilot, lambda: step_done(app), what="compiled step")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_compare_screen_snapshot(snap_compare, make_app) -> None:
    app = make_app()

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "o")
        await wait_for(
            pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.right.measurement is not None
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
