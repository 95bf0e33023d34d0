"""A worker ends with its client however the client ends (``kill -9``, SIGHUP, SIGTERM), within
seconds, with the processes it started, even while the user's code holds the GIL in one long C call
(a regular expression that backtracks for hours): its lifeline (probes/engine/lifeline.py) needs no
GIL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

KERNEL_TUI = Path(sys.executable).with_name("kernel-tui")
STARTUP_S = 120.0
GONE_S = 5.0

HOLDS_THE_GIL = """\
import os, re, subprocess
compiler = subprocess.Popen(["sleep", "600"])  # stands for a compiler the worker started
with open({marker!r} + ".tmp", "w") as out:
    out.write(f"{{os.getpid()}} {{compiler.pid}}")
os.rename({marker!r} + ".tmp", {marker!r})
re.match(r"(a+)+$", "a" * 40 + "b")  # hours inside one C call that holds the GIL


def block(x):
    return x
"""


def stuck_file(folder: Path) -> tuple[Path, Path]:
    """A user's file whose import holds the GIL for hours, once it has written down its pid and
    its child's into the marker it names; the file and the marker."""
    marker = folder / "worker-pids"
    model = folder / "model.py"
    model.write_text(HOLDS_THE_GIL.format(marker=str(marker)))
    return model, marker


def wait_for_pids(marker: Path, timeout: float = STARTUP_S) -> tuple[int, int]:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert time.monotonic() < deadline, "the worker never imported the file"
        time.sleep(0.05)
    worker, compiler = (int(pid) for pid in marker.read_text().split())
    return worker, compiler


def group(pgid: int) -> list[int]:
    """The live processes (zombies left out) of process group ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                state, _, group_id = stat[stat.rindex(")") + 2 :].split()[:3]
                if int(group_id) == pgid and state != "Z":
                    found.append(int(entry.name))
    return found


def wait_gone(pgid: int, timeout: float = GONE_S) -> list[int]:
    """Wait for process group ``pgid`` to end; what of it is left after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (left := group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@contextlib.contextmanager
def ending_group(pgid_box: list[int]) -> Iterator[None]:
    """Kill whatever of the worker's group a failed test leaves behind."""
    try:
        yield
    finally:
        for pgid in pgid_box:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def hang_ups_end_children() -> Iterator[None]:
    """Children started in it end at a hang-up, as a terminal's programs do, even where these tests
    run under ``nohup`` (an ignored signal stays ignored in every child)."""
    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, before)


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP, signal.SIGTERM], ids=lambda s: s.name)
def test_the_worker_and_its_children_end_with_the_headless_client_even_holding_the_gil(
    tmp_path: Path, how: signal.Signals
) -> None:
    model, marker = stuck_file(tmp_path)
    env = {**os.environ, "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"), "KERNEL_TUI_CACHE_DIR": str(tmp_path)}
    argv = [str(KERNEL_TUI), "profile", f"{model}:block", "--input", "x: [N]", "--device", "cpu", "--modes", "eager"]
    started: list[int] = []
    with hang_ups_end_children():
        client = subprocess.Popen(
            [*argv, "--call-budget", "600"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    with ending_group(started), client:
        worker, compiler = wait_for_pids(marker)
        started.append(worker)
        assert {worker, compiler} <= set(group(worker))
        client.send_signal(how)
        client.wait(10)
        assert wait_gone(worker) == []
