"""The first frame is a start screen drawn from the workspace alone (``tui.screens.start``); the
main screen follows, and no key typed meanwhile is lost or reordered."""

from __future__ import annotations

from pathlib import Path

from test_tui_keys import burst, typed
from textual.widgets import Static
from tui_helpers import SEED_CHAIN, wait_for

from tui.screens.main import MainScreen
from tui.screens.start import StartScreen
from tui.widgets.editor import ChainEditor


async def main_screen(app, pilot) -> MainScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), what="the main screen")
    return app.screen


async def test_the_start_screen_shows_the_chain_in_the_main_screens_grid(make_app) -> None:
    app = make_app(start_screen=True)
    async with app.run_test(size=(120, 40)) as pilot:
        start = app.screen_stack[0]
        assert isinstance(start, StartScreen)
        assert str(start.query_one("#editor", Static).render()).strip() == f"1  {SEED_CHAIN}"
        titles = {pane.id: pane.border_title for pane in start.query("#main > Static, #editor")}
        assert titles == {
            "chains": f"chains ({len(app.workspace.chains)})",
            "editor": f"chain · {app.workspace.chain.name}",
            "ops": "op chain",
            "kernels": "kernels",
            "sweep": "sweep",
        }
        main = await main_screen(app, pilot)
        for pane in ("chains", "editor", "ops", "kernels", "sweep"):  # the same place on both screens
            assert start.query_one(f"#{pane}").region == main.query_one(f"#{pane}").region, pane


async def test_keys_typed_over_the_start_screen_reach_the_editor_in_order(make_app) -> None:
    app = make_app(start_screen=True)
    async with app.run_test(size=(120, 40)) as pilot:
        burst(app, typed(" * 2"))
        main = await main_screen(app, pilot)
        editor = main.query_one(ChainEditor)
        await wait_for(pilot, lambda: editor.text == f"{SEED_CHAIN} * 2", what=f"every key (got {editor.text!r})")
        assert app.focused is editor


async def test_keys_read_while_the_main_screen_is_built_follow_those_before(make_app) -> None:
    app = make_app(start_screen=True)
    build = app._build_main

    def build_while_typing() -> MainScreen:
        burst(app, typed("+ 1"))  # read while the app builds: they wait in its queue
        return build()

    app._build_main = build_while_typing
    async with app.run_test(size=(120, 40)) as pilot:
        burst(app, typed(" * 2 "))
        main = await main_screen(app, pilot)
        editor = main.query_one(ChainEditor)
        await wait_for(pilot, lambda: editor.text == f"{SEED_CHAIN} * 2 + 1", what=f"every key (got {editor.text!r})")


class FakeWorker:
    def __init__(self) -> None:
        self.killed = False

    def kill(self) -> None:
        self.killed = True


async def test_quitting_on_the_start_screen_kills_the_workers_started_at_launch_and_builds_nothing(make_app) -> None:
    workers = [FakeWorker(), FakeWorker()]
    app = make_app(start_screen=True, early_worker=workers[0], early_compiler=workers[1])
    app.begin_shutdown()
    assert all(worker.killed for worker in workers)
    assert await app._open_main() is None and not app.built


def test_the_first_frame_imports_neither_the_session_nor_the_panes_nor_the_worker_link() -> None:
    """What the start screen draws with is all the app imports before its first frame."""
    import subprocess
    import sys

    later = ["probes.link.protocol", "tui.session", "tui.screens.main", "tui.fleet", "tui.widgets.workbench"]
    code = f"import sys, tui.__main__, tui.app; print([m for m in {later!r} if m in sys.modules])"
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"
