"""The workspace is never destroyed: read-only or copied aside when not understood, refused when it
cannot be saved, locked against a second app, and quitting with edits that cannot be saved asks."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import pytest
from tui_helpers import SEED_CHAIN, focus_done, wait_for

from tui import workspace as ws
from tui.screens.dialogs import ChoiceDialog
from tui.widgets.editor import ChainEditor
from tui.widgets.status_bar import StatusBar
from tui.workspace_file import WorkspaceRefused, open_workspace

NEWER = {
    "version": 99,
    "chains": [{"name": "mine", "text": "a * b", "colour": "red"}],
    "current": 0,
    "settings": {"dtype": "fp32", "future": True},
    "layout": {"x": 1},
}


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from tui.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code, capsys.readouterr().err


def test_a_folder_is_refused_at_start_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["--workspace", str(tmp_path)], capsys)
    assert code == 2 and err.count("\n") == 1 and "is a folder" in err


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: p.write_text("my notes, not JSON"), "is not a kernel-tui workspace"),
        (lambda p: p.write_text("[1, 2]"), "is not a kernel-tui workspace"),
        (lambda p: None, "folder of the workspace"),
    ],
)
def test_a_file_that_is_not_a_workspace_is_refused_and_left_alone(
    tmp_path: Path, setup, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.txt"
    setup(path)
    if not path.exists():
        path = tmp_path / "missing" / "ws.json"
    before = path.read_bytes() if path.exists() else None
    code, err = run_main(["--workspace", str(path)], capsys)
    assert code == 2 and message in err and "Traceback" not in err
    assert (path.read_bytes() if path.exists() else None) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ([path.name] if before is not None else [])  # nothing made


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ws.json"
    path.write_text("{}")
    path.chmod(0)
    with pytest.raises(WorkspaceRefused, match="cannot be read"):
        open_workspace(path)


def test_a_corrupt_default_workspace_is_copied_aside(_isolated_state: Path) -> None:
    path = ws.default_path()
    path.write_text("{not json")
    opened = open_workspace()
    assert opened.read_only is None and [c.text for c in opened.workspace.chains][0] == SEED_CHAIN
    [backup] = [p for p in path.parent.iterdir() if p.name.endswith(".bak")]
    assert backup.read_text() == "{not json" and str(backup) in opened.notices[0]
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    opened.save()
    assert json.loads(path.read_text())["chains"] and backup.read_text() == "{not json"


async def test_a_newer_file_opens_read_only_and_is_never_written(tmp_path: Path, make_app) -> None:
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(NEWER))
    before = path.read_bytes()
    app = make_app(workspace_path=path, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any("read-only" in text for text, _ in app.main.status.said), what="the notice")
        notice = next(text for text, _ in app.main.status.said if "read-only" in text)
        assert "newer kernel-tui (version 99" in notice and "layout" in notice
        assert "read-only" in app.query_one(StatusBar).info.settings
        assert app.query_one(ChainEditor).text == "a * b"
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "space", "+", "space", "c")
        await wait_for(pilot, lambda: app.workspace.chain.text == "a * b + c", what="the edit")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="asked before losing the edits")
        await pilot.press("c")  # save a copy, then quit
    assert path.read_bytes() == before
    [copy] = [p for p in tmp_path.iterdir() if ".copy-" in p.name]
    assert json.loads(copy.read_text())["chains"][0]["text"] == "a * b + c"
    assert any(str(copy) in text for text, _ in app.main.status.said)


async def test_quitting_unsaved_edits_can_stay_or_quit(tmp_path: Path, make_app) -> None:
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(NEWER))
    app = make_app(workspace_path=path, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "x")
        await wait_for(pilot, lambda: app.unsaved, what="an edit")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="asked")
        await pilot.press("escape")  # stay
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceDialog), what="stayed")
        assert app.is_running
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="asked again")
        await pilot.press("q")  # quit without saving
    assert not app.is_running
    assert not [p for p in tmp_path.iterdir() if ".copy-" in p.name]


async def test_a_second_app_on_the_same_workspace_opens_it_read_only(tmp_path: Path, make_app) -> None:
    path = tmp_path / "ws.json"
    first = make_app(workspace_path=path)
    async with first.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(first), what="the first app")
        second = open_workspace(path)
        assert second.read_only is not None and f"pid {os.getpid()}" in second.read_only
        assert "read-only" in second.notices[0]
        second.release()
        await pilot.press("ctrl+q")
    third = open_workspace(path)  # the first one quit: the lock is free again
    assert third.read_only is None
    third.release()


def test_a_workspace_the_app_understands_opens_read_write(tmp_path: Path) -> None:
    path = tmp_path / "ws.json"
    ws.save(ws.Workspace.default(), path)
    opened = open_workspace(path)
    assert opened.read_only is None and opened.notices == []
    opened.release()


REPAIRED = {
    "chains": [
        {"name": "n" * 63, "text": "a * b"},
        {"name": 12345, "text": "a + b", "named": "yes"},
    ]
}


async def test_a_repaired_workspace_opens_read_only_and_is_never_written(tmp_path: Path, make_app) -> None:
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(REPAIRED, indent=2))
    before = path.read_bytes()
    app = make_app(workspace_path=path, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any("read-only" in text for text, _ in app.main.status.said), what="the notice")
        notice = next(text for text, _ in app.main.status.said if "read-only" in text)
        assert "chains[0].name" in notice and "chains[1].named" in notice
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "space", "+", "space", "c")
        await wait_for(pilot, lambda: app.workspace.chain.text == "a * b + c", what="the edit")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="asked before losing the edits")
        await pilot.press("q")
    assert path.read_bytes() == before


async def test_a_symlinked_workspace_saves_to_its_target_and_stays_a_link(tmp_path: Path, make_app) -> None:
    target = tmp_path / "dotfiles" / "ws.json"
    target.parent.mkdir()
    ws.save(ws.Workspace(chains=[ws.Chain("mine", "a * b")]), target)
    link = tmp_path / "ws.json"
    link.symlink_to(target)
    app = make_app(workspace_path=link, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "space", "+", "space", "c")
        await wait_for(pilot, lambda: app.workspace.chain.text == "a * b + c", what="the edit")
        await pilot.press("ctrl+q")
    assert link.is_symlink() and link.readlink() == target
    assert json.loads(target.read_text())["chains"][0]["text"] == "a * b + c"


def test_a_workspace_the_app_wrote_is_understood_fully(tmp_path: Path) -> None:
    path = tmp_path / "ws.json"
    workspace = ws.Workspace.default()
    workspace.settings = dataclasses.replace(workspace.settings, reps=7, modes=("max-autotune", "dynamic"))
    workspace.compile_mode = "max-autotune"
    workspace.pins = {workspace.chain.name: [1.5, float("nan"), {"kernels": 3}]}
    ws.save(workspace, path)
    assert ws.Workspace.from_data(json.loads(path.read_text()))[1] == []


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"current": 9}, "current"),
        ({"settings": {"device": "CUDA"}}, "settings.device"),
        ({"settings": {"sizes": [100.0]}}, "settings.sizes"),
        ({"chains": [{"name": "", "text": "a"}]}, "chains[0].name"),
    ],
)
def test_a_coerced_value_is_named_as_a_reason_for_read_only(tmp_path: Path, change: dict, where: str) -> None:
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(change))
    opened = open_workspace(path)
    assert opened.read_only is not None and where in opened.read_only
    opened.release()


async def test_a_symlinked_state_dir_is_followed_and_the_workspace_lands_in_its_target(
    tmp_path: Path, make_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "dotfiles" / "kernel-tui"
    real.mkdir(parents=True, mode=0o700)
    link = tmp_path / "state-link"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("KERNEL_TUI_STATE_DIR", str(link))
    app = make_app(workspace_path=None, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "space", "+", "space", "c")
        await wait_for(pilot, lambda: (real / "workspace.json").exists(), what="the autosave in the link's target")
        await pilot.press("ctrl+q")
    assert link.is_symlink() and app.store.read_only is None
    assert json.loads((real / "workspace.json").read_text())["chains"][0]["text"].endswith(" + c")


async def test_a_state_dir_under_a_regular_file_starts_the_app_read_only_and_says_why(
    tmp_path: Path, make_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    regular = tmp_path / "file"
    regular.write_text("")
    monkeypatch.delenv("KERNEL_TUI_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", f"{regular}/sub\x1b]0;owned\x07")
    app = make_app(workspace_path=None, chain=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any("read-only" in text for text, _ in app.main.status.said), what="the notice")
        [notice] = [text for text, _ in app.main.status.said if "read-only" in text]
        assert f"(from XDG_STATE_HOME={regular}/sub\\x1b]0;owned\\x07)" in notice and "\x1b" not in notice
        assert notice.endswith("the app runs read-only, nothing is saved")
        assert "read-only" in app.query_one(StatusBar).info.settings
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "x")
        await wait_for(pilot, lambda: app.unsaved, what="an edit")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="asked before losing the edits")
        await pilot.press("q")
    assert regular.is_file() and regular.read_text() == ""
