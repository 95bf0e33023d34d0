"""A stopped compile's compilers end, its Python helpers do not (probes.engine.child_processes)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probes.engine.child_processes import compiler_processes, kill_compilers

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")

PARENT = """
import json, subprocess, sys
shell = subprocess.Popen(["sh", "-c", "sleep 60 & exec sleep 61"])  # a driver and what it started
helper = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
print(json.dumps({"shell": shell.pid, "helper": helper.pid}), flush=True)
sys.stdin.read()
"""


def alive(pid: int) -> bool:
    """Running, not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_the_compilers_a_process_started_are_killed_and_its_python_helpers_left() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pids: dict[str, int] = {}
    try:
        assert parent.stdout is not None
        pids = json.loads(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while len(compiler_processes(parent.pid)) < 2:  # the shell's own sleep may not have started yet
            assert time.monotonic() < deadline, compiler_processes(parent.pid)
            time.sleep(0.01)
        found = compiler_processes(parent.pid)
        assert pids["shell"] in found and pids["helper"] not in found and os.getpid() not in found
        killed = kill_compilers(parent.pid)
        assert set(found) <= set(killed)
        while any(alive(pid) for pid in found):  # SIGKILL takes effect a moment later
            assert time.monotonic() < deadline, [pid for pid in found if alive(pid)]
            time.sleep(0.01)
        assert alive(pids["helper"]) and parent.poll() is None
        assert compiler_processes(parent.pid) == []
    finally:
        for pid in [*compiler_processes(parent.pid), *pids.values()]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait()
