"""End to end with the real worker on the CPU: type, see kernels; break it, see the error; fix it.

Compiles with torch.compile (tens of seconds on a small machine): marked slow.
"""

from __future__ import annotations

import re

import pytest
from tui_helpers import focus_done, shown, wait_for

from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.kernel_pane import KernelTable
from tui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.slow

STEP_TIMEOUT = 240.0


def rows(app, mode: str) -> list[str]:
    table = app.query_one(f"#table-{mode}", KernelTable)
    return [table.row_cells(i)[0].plain for i in range(table.row_count)]


def headline(app) -> str:
    return str(app.query_one("#headline").render())


async def type_text(pilot, text: str) -> None:
    for ch in text:
        await pilot.press(ch if ch != " " else "space")


async def test_type_break_and_fix_a_chain_with_the_real_worker(make_app) -> None:
    app = make_app(chain="", worker_command=None, device="cpu")
    async with app.run_test(size=(160, 50)) as pilot:
        # The screen is up at once; the worker is still importing torch.
        assert app.query_one(StatusBar).info.worker_state in ("starting", "ready")
        editor = app.query_one(ChainEditor)
        editor.focus()
        await type_text(pilot, "(a + b).relu()")
        await wait_for(
            pilot,
            lambda: app.session.text == "(a + b).relu()" and focus_done(app),
            timeout=STEP_TIMEOUT,
            what="eager and compiled results",
        )
        assert shown(app, "eager").device == "cpu"
        assert len(rows(app, "eager")) == 2  # aten::add and aten::clamp_min
        compiled = rows(app, "compiled")
        assert len(compiled) == 1 and "cpp_fused_add_relu" in compiled[0]
        peak = r"[\d.]+ [kMG]?B peak"
        assert re.search(rf"eager 2 kernels / 5N / {peak} -> compiled 1 kernel / 3N / {peak}", headline(app))
        good = shown(app, "eager")

        # Break it: inline error with where, the last good rows kept and marked stale.
        await type_text(pilot, " *")
        await wait_for(pilot, lambda: app.query_one(ChainErrorLine).has_class("-shown"), what="the error line")
        error = str(app.query_one(ChainErrorLine).render())
        assert "line 1, col" in error and "Traceback" not in error
        assert "STALE" in headline(app)
        assert shown(app, "eager") is good and len(rows(app, "eager")) == 2

        # Fix it: fresh rows for the new chain (three eager kernels, still one compiled kernel).
        await type_text(pilot, " c")
        await wait_for(
            pilot,
            lambda: app.session.text.endswith(" * c") and focus_done(app),
            timeout=STEP_TIMEOUT,
            what="fresh results",
        )
        assert "STALE" not in headline(app)
        assert not app.query_one(ChainErrorLine).has_class("-shown")
        assert len(rows(app, "eager")) == 3
        compiled = rows(app, "compiled")
        assert len(compiled) == 1 and "cpp_fused" in compiled[0]
        assert "eager 3 kernels" in headline(app) and "compiled 1 kernel" in headline(app)
        await pilot.press("ctrl+q")


async def test_compiles_in_a_worker_of_their_own_and_its_death_is_said_and_survived(make_app) -> None:
    """With a compile worker (the default where a GPU driver is), compiled rows come from it, the eager
    rows from the other; a compile worker killed while idle is said, replaced, and compiles again."""
    app = make_app(chain="(a + b).relu()", worker_command=None, device="cpu", focus_size=1000, compile_worker=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), timeout=STEP_TIMEOUT, what="eager and compiled rows")
        pair = app.bridge.workers
        assert app.session.compiles_apart and pair.compiler.pid not in (None, pair.primary.pid)
        assert len(rows(app, "compiled")) == 1 and "cpp_fused_add_relu" in rows(app, "compiled")[0]
        assert len(rows(app, "eager")) == 2
        await wait_for(
            pilot,
            lambda: app.session.warmed and app.session.warmup is None and pair.compiler.state == "ready",
            timeout=STEP_TIMEOUT,
            what="the compile worker idle after its warm-up",
        )
        pid = pair.compiler.pid
        await pair.compiler.kill_worker()
        await wait_for(
            pilot,
            lambda: pair.compiler.state == "ready" and pair.compiler.pid not in (None, pid),
            timeout=STEP_TIMEOUT,
            what="a new compile worker",
        )
        # A CUDA build of torch on a machine without a GPU adds the profiler's complaint as last words.
        assert any(
            m.startswith("the compile worker was killed by signal 9") and m.endswith("; a new one is starting")
            for m, _ in app.main.status.said
        )
        editor = app.query_one(ChainEditor)
        editor.focus()
        await type_text(pilot, " * 2")
        await wait_for(
            pilot,
            lambda: app.session.text.endswith(" * 2") and focus_done(app),
            timeout=STEP_TIMEOUT,
            what="fresh rows from the new compile worker",
        )
        assert "STALE" not in headline(app) and "compiled 1 kernel" in headline(app)
        await pilot.press("ctrl+q")
