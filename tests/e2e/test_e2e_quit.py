"""ctrl+q quits in every state, and leaves no worker behind: idle, mid-compile, mid-sweep. A closed
terminal (no key at all) must end the worker too.

The app saves the workspace, kills the worker, waits at most 0.25 s for it to be gone, and restores
the terminal: a quit takes a fraction of a second. ``QUIT_BOUND_S`` only catches a quit that hangs
or waits for the work in hand; the quit-time target is measured by ``benchmarks/tui_latency.py``
(``--only quit``), where a loaded machine's scheduler cannot fail a test.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from app_terminal import STARTUP_S, AppTerminal, alive, cpu_args, pane_text, status_text

QUIT_BOUND_S = 5.0


def quit_now(app: AppTerminal) -> float:
    """ctrl+q; seconds until the program is gone. Every process it had is gone too."""
    processes = app.remember_processes()
    assert processes, "the worker should be running"
    sent = time.monotonic()
    app.press("C-q")
    app.wait_until_exited(timeout=10)
    took = time.monotonic() - sent
    left = [pid for pid in processes if alive(pid)]
    assert not left, f"processes left after quitting: {left}"
    assert app.exit_status() == 0
    print(f"quit in {took:.3f} s")  # the timings go in the report: pytest -s
    return took


def test_quit_when_idle(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, ["--device", "cpu", "--modes", "eager", "--n", "1e3"]) as app:
        app.wait_for(lambda s: "profile done" in status_text(s), timeout=STARTUP_S, what="the first rows")
        assert quit_now(app) < QUIT_BOUND_S


def test_quit_mid_compile(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, ["--device", "cpu", "--modes", "compiled", "--n", "1e3"]) as app:
        app.wait_for(lambda s: "compiling and measuring" in status_text(s), timeout=STARTUP_S, what="a compile")
        assert quit_now(app) < QUIT_BOUND_S


def sweep_steps_done(screen: str) -> int:
    """The steps the status bar says the sweep has done ("... · 3/7 done"), 0 if none."""
    found = re.search(r"(\d+)/\d+ done", status_text(screen))
    return int(found.group(1)) if found else 0


def test_quit_mid_sweep(tmp_path: Path) -> None:
    sizes = "1e3,1e4,1e5,1e6,1e7,2e7,3e7"  # the last sizes take seconds on the CPU
    with AppTerminal(tmp_path, ["--device", "cpu", "--modes", "eager", "--n", "1e3", "--sizes", sizes]) as app:
        app.wait_for(lambda s: "profile done" in status_text(s), timeout=STARTUP_S, what="the first rows")
        app.press("Escape", "s")
        app.wait_for(
            lambda s: "measuring" in pane_text(s, "sweep") and sweep_steps_done(s) >= 1,
            timeout=STARTUP_S,
            what="the sweep past its first size",
        )
        assert quit_now(app) < QUIT_BOUND_S


def assert_all_end(processes: list[int]) -> None:
    """Every one of ``processes`` ends within QUIT_BOUND_S of the terminal closing."""
    deadline = time.monotonic() + QUIT_BOUND_S
    while (left := [pid for pid in processes if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not left, f"processes left {QUIT_BOUND_S} s after the terminal closed: {left}"


def test_a_closed_terminal_mid_compile_leaves_no_worker_behind(tmp_path: Path) -> None:
    """A terminal window closed, or an SSH link dropped, kills the app without a word: its worker
    must end with it, not finish a compile (seconds, saying nothing that would fail) for nobody."""
    with AppTerminal(tmp_path, ["--device", "cpu", "--modes", "compiled", "--n", "1e3"]) as app:
        app.wait_for(lambda s: "compiling and measuring" in status_text(s), timeout=STARTUP_S, what="a compile")
        processes = app.remember_processes()
        app.hang_up()
        assert_all_end(processes)


def test_a_closed_terminal_while_the_users_code_holds_the_gil_leaves_no_worker_behind(tmp_path: Path) -> None:
    """The user's file inside one C call that holds the GIL (a regular expression backtracking for
    hours): the worker cannot run a line of Python, yet it ends with the closed terminal."""
    marker = tmp_path / "importing"
    model = tmp_path / "model.py"
    model.write_text(
        f"import re\nopen({str(marker)!r}, 'w').close()\n"
        're.match(r"(a+)+$", "a" * 40 + "b")\n\n\ndef block(x):\n    return x\n'
    )
    with AppTerminal(tmp_path, [f"{model}:block", "--input", "x: [N]", *cpu_args()]) as app:
        deadline = time.monotonic() + STARTUP_S
        while not marker.exists():
            assert time.monotonic() < deadline, f"the file was never imported; the screen:\n{app.screen()}"
            time.sleep(0.05)
        processes = app.remember_processes()
        app.hang_up()
        assert_all_end(processes)
