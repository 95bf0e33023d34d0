"""The real app in a pseudo-terminal, fed hostile text: a workspace file whose chain names and texts
carry escape sequences, a workspace file whose very name does, and a chain whose error quotes one.
The bytes the app writes to the terminal must contain none of those sequences raw (OSC 52 writes the
clipboard, OSC 0 the window title, OSC 8 makes links, DCS talks to the terminal): the app's own
drawing sequences are fine, the input's are shown as text. Quitting leaves no worker behind.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

ROOT = Path(__file__).parents[1]
RECORDING = ROOT / "tests" / "data" / "h200_add_relu_sweep.json"
MARK = "KTUI-PWNED"
ESC = "\x1b"
OSC52 = f"{ESC}]52;c;S1RVSS1QV05FRA==\x07"
OSC0 = f"{ESC}]0;{MARK}-TITLE\x07"
OSC8 = f"{ESC}]8;;https://example.invalid/{MARK}{ESC}\\"
DCS = f"{ESC}P+q{MARK}{ESC}\\"
C1 = f"\x9d0;{MARK}\x9c"
BIDI = f"\u202e{MARK}"
RAW = [OSC52[:12], f"{ESC}]0;{MARK}", f"{ESC}]8;;https://example.invalid", f"{ESC}P+q{MARK}", "\x9d0;", BIDI]
"""Prefixes of the hostile sequences that must never reach the terminal as they are."""
START_S = 60
HANG_LIMIT_S = 45
QUIT_S = 10


_CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]")


def visible(out: bytes | bytearray) -> bytes:
    """The text the app drew, without its cursor moves and colours (CSI sequences)."""
    return _CSI.sub(b"", bytes(out))


def run_app(argv: list[str], tmp_path: Path, shown: str, then: list[tuple[bytes, str]] = ()) -> tuple[bytes, int]:  # type: ignore[assignment]
    """Start ``python -m tui ARGV`` in a 120x40 pty, wait until ``shown`` is on screen, then type
    each of ``then``'s keys and wait for its text, press ctrl+q, and return every byte the app
    wrote and its exit status."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    out = bytearray()
    closed = False

    def read_until(done: object, seconds: float) -> bool:
        nonlocal closed
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if done():  # type: ignore[operator]
                return True
            if closed:  # the app let go of the terminal: nothing more to read, only to wait for
                time.sleep(0.02)
                continue
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    out.extend(os.read(master, 1 << 16))
                except OSError:
                    closed = True
        return bool(done())  # type: ignore[operator]

    try:
        assert read_until(lambda: shown.encode() in visible(out), START_S), f"{shown!r} never shown"
        for keys, after in then:
            start = len(out)
            os.write(master, keys)
            assert read_until(lambda after=after, start=start: after.encode() in visible(out[start:]), START_S), (
                f"{after!r} never shown after {keys!r}: {visible(out[start:]).decode('utf-8', 'replace')[-3000:]}"
            )
        os.write(master, b"\x11")  # ctrl+q
        assert read_until(lambda: process.poll() is not None, QUIT_S), "ctrl+q did not end the app"
        read_until(lambda: False, 0.2)  # what it wrote while restoring the terminal
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
        os.close(master)
    return bytes(out), process.returncode


def assert_nothing_raw(out: bytes) -> None:
    text = out.decode("utf-8", "replace")
    leaked = [sequence for sequence in RAW if sequence in text]
    assert not leaked, f"raw sequences from the input reached the terminal: {leaked}"


def workers_of(tmp_path: Path) -> list[int]:
    """Live processes started from this test's state dir (the app's worker, if it outlived it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(tmp_path / "state") in (entry / "environ").read_bytes().decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_hostile_workspace_is_shown_inert(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace.json"
    workspace.write_text(
        json.dumps(
            {
                "chains": [
                    {"name": f"{MARK}{OSC0}", "text": f"(a + b).relu()  # {OSC52} {OSC8}"},
                    {"name": f"{BIDI}{C1}", "text": f"x: [N{DCS}]\nx"},
                ],
                "current": 0,
            }
        )
    )
    out, status = run_app(["--workspace", str(workspace), "--replay", str(RECORDING)], tmp_path, MARK)
    assert status == 0
    assert_nothing_raw(out)
    assert not workers_of(tmp_path)


def test_an_error_quoting_hostile_text_is_shown_inert(tmp_path: Path) -> None:
    chain = f"x: [N{DCS}]\nx"
    out, status = run_app([chain, "--replay", str(RECORDING)], tmp_path, "input 'x'")  # the inline error
    assert status == 0
    assert_nothing_raw(out)


def test_a_workspace_file_with_a_hostile_name_is_refused_inert_and_left_alone(tmp_path: Path) -> None:
    """A file that is not a workspace is refused at start (one line, exit 2), its name shown inert,
    the file itself neither changed nor moved."""
    workspace = tmp_path / f"notes{OSC0}.txt"
    workspace.write_text("not a workspace")
    out, status = run_app(["--workspace", str(workspace), "--replay", str(RECORDING)], tmp_path, "notes")
    assert status == 2
    assert_nothing_raw(out)
    assert workspace.read_text() == "not a workspace", "the user's file was changed or moved"


def test_a_chain_that_would_hang_ends_in_one_line_and_the_next_chain_works(tmp_path: Path) -> None:
    """A shape repeated a billion times, in the app with the real CPU worker: one plain line well
    within HANG_LIMIT_S; then the line is replaced (ctrl+a, ctrl+k) and the chain typed is measured."""
    begin = time.monotonic()
    out, status = run_app(
        ["a * len(a.shape * 10 ** 9)", "--device", "cpu", "--n", "1e3", "--modes", "eager"],
        tmp_path,
        "over 4,096 items",
        then=[(b"\x01\x0b", "empty"), (b"(a + b).relu()", "2 kernels")],
    )
    assert status == 0 and time.monotonic() - begin < START_S + HANG_LIMIT_S
    assert not workers_of(tmp_path)


@pytest.mark.parametrize("mark", ["\u200e", "\u200f", "\u061c", "\u202e", "\u2067", "\x9b", "\x7f"])
def test_bidirectional_marks_and_c1_controls_are_shown_as_escapes(mark: str) -> None:
    from probes.link.safe_text import inert, inert_line

    assert mark not in inert(f"a{mark}b") and mark not in inert_line(f"a{mark}b")
    assert f"\\u{ord(mark):04x}" in inert(f"a{mark}b") or f"\\x{ord(mark):02x}" in inert(f"a{mark}b")
