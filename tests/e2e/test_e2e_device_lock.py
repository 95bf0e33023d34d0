"""A device another kernel-tui measures on: the app says who holds it and since when in its
status bar, keeps taking keys while it waits, and measures as soon as the holder is gone (killed:
a dead holder holds nothing)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from app_terminal import SCREEN_S, STARTUP_S, AppTerminal, cpu_args, editor_lines, measured_ops, status_text

HOLDER = """\
import time
from probes.engine.device_lock import device_lock
with device_lock("cpu").measuring():
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_held_device_is_said_in_the_status_bar_and_typing_goes_on(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        env={**os.environ, "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with AppTerminal(tmp_path, ["(a + b).relu()", *cpu_args()]) as app:
            said = rf"waiting for cpu: \S+ \(pid {os.getpid()}\) measures there since \d\d:\d\d:\d\d"
            app.wait_for(lambda s: re.search(said, status_text(s)) is not None, timeout=STARTUP_S, what="the wait")
            app.type(" * 2")
            app.wait_for(lambda s: editor_lines(s) == ["(a + b).relu() * 2"], timeout=SCREEN_S, what="the keys")
            holder.kill()
            app.wait_for(lambda s: measured_ops(s) == ["add", "relu", "mul"], timeout=STARTUP_S, what="the rows")
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
