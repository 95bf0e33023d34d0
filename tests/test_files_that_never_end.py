"""Every file a user names is a regular file of bounded size, or one line and exit status 2: a FIFO
(reading it waits forever), ``/dev/zero`` (it never ends), a sparse 1 GB file and a socket, given
to each option that reads a file. Each runs as the real command under a 2 GiB address-space limit,
so that a read of the whole file fails loudly instead of passing, and a hang ends at the timeout."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPORT = str(DATA / "h200_add.json")
MEMORY_LIMIT = 2 << 30
REFUSED_WITHIN_S = 60
"""Far above what a refusal takes: only a command that blocks or reads without end reaches it."""


def fifo(folder: Path) -> str:
    path = folder / "pipe.json"
    os.mkfifo(path)
    return str(path)


def sparse_gigabyte(folder: Path) -> str:
    path = folder / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(1 << 30)
    return str(path)


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder with a short path: a socket's path must fit in 108 bytes."""
    with tempfile.TemporaryDirectory(prefix="kt-") as folder:
        yield Path(folder)


KINDS: dict[str, tuple[Callable[[Path], str], str]] = {
    "a FIFO": (fifo, "FIFO"),
    "/dev/zero": (lambda folder: "/dev/zero", "/dev/zero"),
    "a sparse 1 GB file": (sparse_gigabyte, "over the"),
    "a socket": (lambda folder: str(folder / "sock"), "socket"),
}
OPTIONS: dict[str, Callable[[str], list[str]]] = {
    "profile --from": lambda path: ["profile", "--from", path],
    "profile --baseline": lambda path: ["profile", "--from", REPORT, "--baseline", path],
    "--workspace": lambda path: ["--workspace", path, "--replay", REPORT],
    "--replay": lambda path: ["--replay", path],
    "demo --replay": lambda path: ["demo", "--replay", path],
}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_file_that_never_ends_is_refused_in_one_line(
    option: str, kind: str, short_folder: Path, tmp_path: Path
) -> None:
    make, named = KINDS[kind]
    path = make(short_folder)
    listener = None
    if kind == "a socket":
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tui", *OPTIONS[option](path)],
            capture_output=True,
            text=True,
            timeout=REFUSED_WITHIN_S,
            stdin=subprocess.DEVNULL,
            preexec_fn=_limited,
            env=os.environ | {"KERNEL_TUI_STATE_DIR": str(tmp_path / "state")},
        )
    finally:
        if listener is not None:
            listener.close()
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and named in lines[0], proc.stderr
    assert proc.stdout == ""
