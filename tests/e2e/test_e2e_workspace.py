"""The workspace is never destroyed, through the real program: a file of a newer version opens
read-only (it says so, and the file is never written); a corrupt autosaved file is kept aside before
the seed workspace replaces it; a file that cannot be read, a corrupt file given with
``--workspace`` and a folder are refused at start in one line with exit status 2; a second app on
the same workspace opens it read-only and names the first one's pid."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from app_terminal import REPLAY_S, ROOT, SCREEN_S, AppTerminal, editor_lines, replay_args, status_text, toast_text

from tui import workspace as ws

SEED = "(a + b).relu()"


def told(screen: str) -> str:
    """What the app tells the user: its toasts and its status bar, wrapping undone."""
    return f"{toast_text(screen)} {status_text(screen)}"


def said(*phrases: str):  # a wait_for condition
    """A toast or the status bar says every one of ``phrases``."""
    return lambda screen: all(p in told(screen) for p in phrases)


def workspace_data(**changes: object) -> dict:
    data = json.loads(ws.Workspace.default().to_json())
    data.update(changes)
    return data


def quit_without_saving(app: AppTerminal) -> int | None:
    """ctrl+q; the app asks about the edits it cannot save; q quits without saving."""
    app.press("C-q")
    app.wait_for("Your edits cannot be saved", timeout=SCREEN_S, what="the question about the unsaved edits")
    app.press("q")
    app.wait_until_exited(timeout=SCREEN_S)
    return app.exit_status()


def test_a_workspace_of_a_newer_version_opens_read_only_and_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "team.json"
    path.write_text(json.dumps(workspace_data(version=99, shared_with=["ops"]), indent=1))
    before = path.read_bytes()
    with AppTerminal(tmp_path, [*replay_args(), "--workspace", str(path)]) as app:
        app.wait_for(said("read-only", "newer kernel-tui"), timeout=REPLAY_S, what="the read-only notice")
        app.wait_for(lambda s: editor_lines(s) == [SEED], timeout=SCREEN_S, what="the file's chain")
        app.type(" * 2")
        app.wait_for(lambda s: editor_lines(s) == [f"{SEED} * 2"], timeout=SCREEN_S, what="the edit")
        assert quit_without_saving(app) == 0
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("team.copy-*"))  # q: no copy either


def test_a_corrupt_autosaved_workspace_is_kept_aside_before_the_seed_replaces_it(tmp_path: Path) -> None:
    broken = b'{"version": 1, "chains": [{"name": "mine", "text": "a * b"'  # cut off mid-write
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / ws.WORKSPACE_FILE).write_bytes(broken)
    with AppTerminal(tmp_path, replay_args()) as app:
        app.wait_for(said("the original is kept as"), timeout=REPLAY_S, what="where the original is kept")
        app.wait_for(lambda s: editor_lines(s) == [SEED], timeout=SCREEN_S, what="the seed chain")
    (kept,) = state.glob(f"{ws.WORKSPACE_FILE}.*.bak")
    assert kept.read_bytes() == broken
    assert json.loads((state / ws.WORKSPACE_FILE).read_text())["version"] == ws.VERSION  # the seed, saved


def refused(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "tui", *replay_args(), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("case", "content", "says"),
    [
        ("unreadable (not UTF-8)", b'{"version": 1, "chains": [{"name": "\xff\xfe"}]}', "is not UTF-8 text"),
        ("corrupt", b'{"version": 1, "chains": [', "is not a kernel-tui workspace"),
        ("a folder", None, "is a folder"),
    ],
)
def test_a_workspace_that_cannot_be_used_is_refused_at_start_in_one_line(
    tmp_path: Path, case: str, content: bytes | None, says: str
) -> None:
    path = tmp_path / "given"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    done = refused(tmp_path, "--workspace", str(path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""  # the app never started: no screen drawn
    if content is not None:
        assert path.read_bytes() == content


def test_an_unreadable_autosaved_workspace_is_refused_not_replaced(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    content = b'{"version": 1, "chains": [{"name": "caf\xe9", "text": "a + b"}]}'  # Latin-1, not UTF-8
    (state / ws.WORKSPACE_FILE).write_bytes(content)
    done = refused(tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "is not UTF-8 text" in done.stderr, done.stderr
    assert (state / ws.WORKSPACE_FILE).read_bytes() == content


def test_a_second_app_on_the_same_workspace_opens_it_read_only_and_names_the_first(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(workspace_data()))
    with AppTerminal(tmp_path / "first", [*replay_args(), "--workspace", str(path)]) as first:
        first.wait_for(lambda s: "profile done" in status_text(s), timeout=REPLAY_S, what="the first app's rows")
        app_pids = first.app_pids()
        with AppTerminal(tmp_path / "second", [*replay_args(), "--workspace", str(path)]) as second:
            screen = second.wait_for(
                said("read-only", "another kernel-tui"), timeout=REPLAY_S, what="the second app's read-only notice"
            )
            named = re.search(r"another kernel-tui \(pid (\d+)\)", told(screen))
            assert named is not None and [int(named.group(1))] == app_pids, (told(screen), app_pids)
            second.type(" * 3")
            second.wait_for(lambda s: editor_lines(s) == [f"{SEED} * 3"], timeout=SCREEN_S, what="the second's edit")
            assert quit_without_saving(second) == 0
        first.type(" * 2")
        first.wait_for(lambda s: editor_lines(s) == [f"{SEED} * 2"], timeout=SCREEN_S, what="the first's edit")
        first.press("C-q")
        first.wait_until_exited(timeout=SCREEN_S)
        assert first.exit_status() == 0
    texts = [chain["text"] for chain in json.loads(path.read_text())["chains"]]
    assert f"{SEED} * 2" in texts and f"{SEED} * 3" not in texts
