"""A new user's first five minutes, in a real terminal on the CPU: start, press the keys the README
names (``p``, ``s``, ``enter`` on a row, ``b``, ``f``), quit. Each step shows what README.md's Keys
section says it does, and nothing else surprises: no key does something its footer does not say.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_terminal import (
    SCREEN_S,
    STARTUP_S,
    AppTerminal,
    editor_lines,
    footer,
    measured_ops,
    pane_text,
    status_text,
    words,
)

pytestmark = pytest.mark.slow  # the CPU worker compiles the chain at two sizes, then with grad

SEED = "(a + b).relu()"
COMPILE_S = 3 * STARTUP_S
"""The CPU worker compiles at each size: tens of seconds on loaded cores."""


def grad_rows_done(screen: str) -> bool:
    """The forward and backward rows are in (the op chain opens with its forward group) and the
    kernel pane is current; the sweep, measured without grad, may stay STALE."""
    kernels = pane_text(screen, "kernels")
    ops = measured_ops(screen)
    return (
        ops[:3] == ["forward", "add", "relu"]
        and "backward" in ops
        and " bwd " in kernels
        and "fwd+bwd" in status_text(screen)
        and "done" in status_text(screen)
        and "STALE" not in kernels
    )


def done_measuring(screen: str) -> bool:
    """The kernel rows are in and nothing runs (the status bar's last message says done)."""
    return measured_ops(screen)[:2] == ["add", "relu"] and "done" in status_text(screen) and "STALE" not in screen


def test_a_new_users_first_five_minutes_show_what_the_readme_says(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, ["--device", "cpu", "--sizes", "1e3,1e4"], width=160, height=50) as app:
        # Start: the editor has the focus, says so, and the live size is the first of --sizes.
        screen = app.wait_for(done_measuring, timeout=COMPILE_S, what="the seed chain's rows")
        assert editor_lines(screen) == [SEED] and app.settled_focus() == "chain"
        assert "esc: letter keys" in screen and "N=1e3" in status_text(screen)
        assert "sweep · N=1e3,1e4" in screen

        # p in the editor types p (README: a letter you type goes into the chain); backspace undoes it.
        app.press("p")
        app.wait_for(lambda s: editor_lines(s) == [SEED + "p"], timeout=SCREEN_S, what="p typed into the chain")
        app.press("BSpace")
        app.wait_for(done_measuring, timeout=SCREEN_S, what="the chain as it was, its rows cached")

        # esc: the kernel table has the focus and the footer offers its keys, enter Detail first.
        app.press("Escape")
        app.wait_for_focus("kernels")
        screen = app.wait_for(lambda s: "Detail" in footer(s), timeout=SCREEN_S, what="enter Detail")
        assert "Sweep" in footer(screen) and "esc: letter keys" not in screen

        # p pins the result on screen: the kernel pane's headline compares with it from now on.
        app.press("p")
        app.wait_for(lambda s: "vs pin" in pane_text(s, "kernels"), timeout=SCREEN_S, what="the pin's deltas")

        # s sweeps the sizes in the sweep pane's title; one count of the steps done.
        app.press("s")
        screen = app.wait_for(
            lambda s: "sweep done" in status_text(s), timeout=2 * COMPILE_S, what="the sweep of 1e3 and 1e4"
        )
        sweep = words(pane_text(screen, "sweep"))
        assert "1e3" in sweep and "1e4" in sweep and "incomplete" not in sweep

        # enter on a row: the kernel's detail, with its own footer.
        app.press("Enter")
        screen = app.wait_for(lambda s: footer(s).split() == ["esc", "Close"], timeout=SCREEN_S, what="the detail")
        assert "Sweep" not in footer(screen)
        app.press("Escape")
        app.wait_for(lambda s: "Detail" in footer(s), timeout=SCREEN_S, what="back on the kernel table")

        # b: forward + backward, measured again (README: b forward + backward).
        app.press("b")
        app.wait_for(grad_rows_done, timeout=COMPILE_S, what="grad rows")

        # f: the roofline, with its own footer; esc back.
        app.press("f")
        app.wait_for(
            lambda s: "roofline ·" in s and footer(s).split() == ["esc", "Close"],
            timeout=SCREEN_S,
            what="the roofline with its own footer",
        )
        app.press("Escape")
        app.wait_for(lambda s: "Detail" in footer(s), timeout=SCREEN_S, what="back on the kernel table")

        # q quits, with the workspace saved.
        app.press("q")
        app.wait_until_exited(timeout=SCREEN_S)
        assert app.exit_status() == 0
        assert (app.state_dir / "workspace.json").is_file()
