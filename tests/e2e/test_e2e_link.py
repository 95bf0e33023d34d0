"""When the link to the worker fails, the status bar says what happened and what to do: one line
of state (with the next try's countdown and ctrl+r), one line of why from the current attempt
only, the settings kept, and the rows back once the link is, without restarting the app.

The link commands stand in for ``--worker-cmd 'ssh gpu-box python -m probes.engine.worker'``: one
that fails as ssh does when the host refuses (exit 255), one that runs the real worker until the
test takes the link down, and one whose process the test stops (SIGSTOP), as a frozen ssh client.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path

from app_terminal import SCREEN_S, STARTUP_S, AppTerminal, cpu_args, measured_ops, status_text
from terminal import Terminal

from probes.link.client import DEFAULT_SILENCE_S

REFUSED = "ssh: connect to host x port 22: Connection refused"
CLOSED = "Connection to x closed by remote host."
FAILING = f"sh -c 'echo {REFUSED} >&2; exit 255'"
SETTINGS = "eager · fp32 · N=1e3 · reps auto"
"""The settings line of ``cpu_args()``."""
RETRIES_S = 60.0
"""Long enough for a few failed starts at 1, 2 and 4 s apart, on a loaded machine."""


def status_lines(screen: str) -> list[str]:
    """The status bar's lines: from the worker's dot to the footer."""
    lines = screen.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(" ● ")]
    return [line.rstrip() for line in lines[starts[-1] : -1]] if starts else []


def link_script(tmp_path: Path, body: str) -> str:
    """A ``--worker-cmd`` running ``body`` (sh), with $PY the interpreter of the tests."""
    script = tmp_path / "link.sh"
    script.write_text(f"#!/bin/sh\nPY={shlex.quote(sys.executable)}\n{body}")
    return f"sh {shlex.quote(str(script))}"


def worker_pid(app: Terminal) -> int:
    """The worker process (the interpreter running ``probes.engine.worker``) below the app."""
    for pid in app.descendants():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"probes.engine.worker" in command and command.startswith(sys.executable.encode()):
            return pid
    raise AssertionError(f"no worker process below the app; the screen:\n{app.screen()}")


def link_down_said_once(screen: str, attempt: int) -> bool:
    """The state line counts down to the next start after ``attempt`` failed, and the why line
    says the attempt's reason."""
    lines = status_lines(screen)
    return len(lines) == 2 and "retry in" in lines[0] and f"start {attempt} failed" in lines[1]


def test_a_link_that_fails_every_time_says_why_once_and_tries_again(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, cpu_args("--worker-cmd", FAILING)) as app:
        screen = app.wait_for(lambda s: link_down_said_once(s, 3), timeout=RETRIES_S, what="three failed starts")
        state, why = status_lines(screen)
        assert state.startswith(" ● no worker · retry in") and "ctrl+r: now" in state
        assert SETTINGS in state  # the settings keep their place
        assert why == f" ✗ start 3 failed: the connection failed (ssh exit 255): {REFUSED}"
        assert screen.count("Connection refused") == 1  # said once: not piled up, not in the panes
        assert "importing torch" not in screen  # no start runs now, and none is claimed
        app.press("C-r")  # tries at once, whatever the countdown says
        screen = app.wait_for(lambda s: link_down_said_once(s, 4), timeout=RETRIES_S, what="a fourth start")
        assert screen.count("Connection refused") == 1 and SETTINGS in status_lines(screen)[0]


def test_a_link_that_drops_then_refuses_says_the_current_attempt_and_comes_back(tmp_path: Path) -> None:
    """The link works, drops (ssh's last words, exit 255), then refuses while the user edits;
    once it is back, the edited chain's rows come without restarting the app."""
    down = tmp_path / "down"
    command = link_script(
        tmp_path,
        f'if [ -e {shlex.quote(str(down))} ]; then echo "{REFUSED}" >&2; exit 255; fi\n'
        '"$PY" -m probes.engine.worker\n'
        f'echo "{CLOSED}" >&2\n'
        "exit 255\n",
    )
    with AppTerminal(tmp_path, cpu_args("--worker-cmd", command)) as app:
        app.wait_for(lambda s: "profile done" in status_text(s), timeout=STARTUP_S, what="the first rows")
        app_pid = app.pid
        down.touch()
        os.kill(worker_pid(app), signal.SIGKILL)  # the link drops: ssh says its last words
        screen = app.wait_for(lambda s: link_down_said_once(s, 2), timeout=RETRIES_S, what="two failed starts")
        state, why = status_lines(screen)
        assert why == f" ✗ start 2 failed: the connection failed (ssh exit 255): {REFUSED}"
        assert CLOSED not in screen  # an earlier process's last words are not this attempt's
        assert "replaced by a new worker" not in screen and "restarted" not in screen  # no restart worked
        assert SETTINGS in state and screen.count("Connection refused") == 1
        app.press("End")
        app.type(" * 2")  # the user keeps editing while the link is down
        app.wait_for(lambda s: "relu()" in s and "* 2" in s, timeout=SCREEN_S, what="the edit on screen")
        down.unlink()  # the link is back: the next start works
        screen = app.wait_for(
            lambda s: "mul" in measured_ops(s) and "profile done" in status_text(s),
            timeout=STARTUP_S,
            what="the edited chain's rows",
        )
        assert status_lines(screen)[0].startswith(" ● ready") and len(status_lines(screen)) == 1
        assert app.pid == app_pid and not app.exited()


def test_a_frozen_link_is_named_as_the_link_not_the_chain_and_replaced(tmp_path: Path) -> None:
    command = link_script(tmp_path, 'exec "$PY" -m probes.engine.worker\n')
    with AppTerminal(tmp_path, cpu_args("--worker-cmd", command)) as app:
        app.wait_for(lambda s: "profile done" in status_text(s), timeout=STARTUP_S, what="the first rows")
        frozen = worker_pid(app)
        os.killpg(os.getpgid(frozen), signal.SIGSTOP)  # the ssh client stops: nothing comes through
        app.press("End")
        app.type(" * 2")
        screen = app.wait_for(
            lambda s: "stopped (SIGSTOP)" in s, timeout=DEFAULT_SILENCE_S + SCREEN_S * 3, what="the frozen link said"
        )
        lines = status_lines(screen)
        assert (
            lines[1]
            == f" ✗ lost: the link to the worker was stopped (SIGSTOP) and sent nothing for {DEFAULT_SILENCE_S:.0f} s"
        )
        assert "stuck in one long operation" not in screen  # the chain is not blamed for the link
        assert lines[0].startswith(" ● restarting worker") and SETTINGS in lines[0]
        screen = app.wait_for(
            lambda s: "mul" in measured_ops(s) and "profile done" in status_text(s),
            timeout=STARTUP_S,
            what="the edited chain's rows from a new worker",
        )
        assert status_lines(screen)[0].startswith(" ● ready") and worker_pid(app) != frozen
