"""Outside text stays inert on screen, and chains read from a workspace file wait for the user."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from pathlib import Path

from tui_helpers import focus_done, recording, wait_for

from tui.widgets.editor import ChainEditor

HOSTILE = {
    "version": 1,
    "current": 0,
    "settings": {},
    "chains": [
        {"name": "evil\x1b]0;TITLE-FROM-NAME\x07", "text": "a + b\x1b]52;c;Y2xpcGJvYXJk\x07\x1bP+q544e\x1b\\"},
        {"name": "[bold]markup[/bold", "text": "(a + b).relu()"},
    ],
}


def test_a_hostile_workspace_writes_no_control_sequence_to_the_terminal(tmp_path: Path) -> None:
    """The real app in a pty, on a workspace whose chain name and text hold OSC and DCS sequences."""
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(HOSTILE))
    root = Path(__file__).resolve().parents[2]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app, as a user starts it
        os.chdir(root)
        os.execv(sys.executable, [sys.executable, "-m", "tui", "--replay", str(recording()), "--workspace", str(path)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = b""
    deadline = time.monotonic() + 60

    def shown() -> bytes:
        return re.sub(rb"\x1b\[[0-9;?<>]*[A-Za-z]", b"", out)  # what the terminal shows, without its cursor moves

    while time.monotonic() < deadline and b"runs it" not in shown():
        if select.select([fd], [], [], 0.2)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    os.write(fd, b"\x11")  # ctrl+q
    exited = False
    quit_deadline = time.monotonic() + 30
    while not exited and time.monotonic() < quit_deadline:  # keep reading: a full pty would block the app's last frames
        exited = os.waitpid(pid, os.WNOHANG)[0] == pid
        if not exited and select.select([fd], [], [], 0.05)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:  # the app closed the terminal; it is on its way out
                exited = os.waitpid(pid, 0)[0] == pid
    if not exited:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert exited, "ctrl+q did not end the app within 30 s"
    assert b"runs it" in shown(), out[-2000:]
    for sequence in (b"\x1b]0;", b"\x1b]52;", b"\x1bP", b"TITLE-FROM-NAME\x07"):
        assert sequence not in out, sequence
    assert b"\\x1b]52;c;" in out  # shown, as an escape


async def test_a_chain_from_the_workspace_file_waits_for_ctrl_r(tmp_path: Path, make_app) -> None:
    path = tmp_path / "ws.json"
    path.write_text(
        json.dumps({"version": 1, "current": 0, "settings": {}, "chains": [{"name": "x", "text": "a * b"}]})
    )
    sent: list[str] = []
    app = make_app(workspace_path=path, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        send = app.bridge.send
        app.bridge.send = lambda request, reply_to=None: (
            sent.append(getattr(request, "chain", "")),
            send(request, reply_to),
        )
        await wait_for(pilot, lambda: app.session.ready is not None, what="the worker")
        await wait_for(pilot, lambda: "ctrl+r runs it" in str(app.query_one("#headline").render()), what="the hold")
        assert [c for c in sent if c] == []
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "a * b" in sent, what="the confirmed run")
        await pilot.press("ctrl+q")
    again = make_app(workspace_path=path, chain=None)  # it ran here once: it runs by itself now
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: again.session.running() or again.session.book.failed, what="a run by itself")
        await pilot.press("ctrl+q")


async def test_opening_an_unconfirmed_chain_holds_it_and_an_edit_confirms_it(tmp_path: Path, make_app) -> None:
    path = tmp_path / "ws.json"
    chains = [{"name": "seed", "text": "(a + b).relu()"}, {"name": "other", "text": "a - b"}]
    path.write_text(json.dumps({"version": 1, "current": 0, "settings": {}, "chains": chains}))
    app = make_app(workspace_path=path, chain=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="the seed chain runs: it is the app's own")
        app.main.open_chain(1)
        await wait_for(pilot, lambda: app.session.text == "a - b", what="the other chain")
        assert app.session.held and not app.session.running()
        assert "ctrl+r runs it" in str(app.query_one("#headline").render())
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "space", "*", "space", "c")
        await wait_for(pilot, lambda: app.session.text == "a - b * c" and not app.session.held, what="confirmed")
