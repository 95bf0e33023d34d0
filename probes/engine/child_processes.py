"""The compiler processes a process started, directly or not (from ``/proc``, on Linux; elsewhere
none).

A compile runs compilers as processes of their own (g++, which runs cc1plus and as; Triton's
ptxas). Killing the one a stopped compile waits for leaves the ones it started running: they must
all end, or they take the cores the next measurement times. Python processes among them (the
worker's bytecode filler, Inductor's compile pool when a user enables one) are left alone; their
compilers are not.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _processes() -> dict[int, tuple[int, str]]:
    """Every running process's parent and name, by pid (ended ones, zombies too, left out)."""
    found = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
        if state != "Z":
            found[int(entry.name)] = (int(parent), stat[stat.index("(") + 1 : stat.rindex(")")])
    return found


def compiler_processes(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs, that are not Python (named as ``pid`` is, or
    ``python*``), parents first."""
    processes = _processes()
    own_name = processes.get(pid, (0, "python"))[1]
    children: dict[int, list[int]] = {}
    for child, (parent, _) in processes.items():
        children.setdefault(parent, []).append(child)
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop(0)
        name = processes[child][1]
        if name != own_name and not name.startswith("python"):
            found.append(child)
        todo.extend(children.get(child, []))
    return found


def kill_compilers(pid: int, rounds: int = 5) -> list[int]:
    """SIGKILL what ``compiler_processes`` finds, the last started first, until it finds none (a
    compiler may start one between the look and the kill); the pids killed."""
    killed: list[int] = []
    for _ in range(rounds):
        found = compiler_processes(pid)
        if not found:
            break
        for child in reversed(found):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                continue
            killed.append(child)
    return killed
