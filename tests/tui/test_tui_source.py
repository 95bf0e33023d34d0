"""The app on a function of the user's own file (``kernel-tui model.py:f``), with the real worker on
the CPU: a save is measured without a key press, an error is one line at its line with the last
rows kept stale, the code runs only in the worker, and a file the workspace remembers runs only
once the user confirms its path."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tui_helpers import focus_done, shown, wait_for

from probes.link.protocol import SourceRef
from tui.screens.dialogs import RunFileDialog
from tui.widgets.editor import ChainEditor
from tui.widgets.status_bar import StatusBar

STEP_TIMEOUT = 120.0
HELPERS = """\
import os
import pathlib

pathlib.Path(__file__).with_name("imported_by").write_text(str(os.getpid()))


def bump(x):
    return x + 1
"""


def kernels(app) -> list[str]:
    m = shown(app, "eager")
    return [k.short_name for k in m.kernels] if m is not None else []


def status_text(app) -> str:
    return str(app.query_one(StatusBar).render())


def headline(app) -> str:
    return str(app.query_one("#headline").render())


def modules_from(folder: Path) -> list[str]:
    """The modules of ``folder`` this (the app's) process imported."""
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and Path(file).resolve().parent == folder.resolve():
            found.append(name)
    return found


def source_app(make_app, **kwargs: object):
    return make_app(chain=None, worker_command=None, device="cpu", modes=("eager",), focus_size=1000, **kwargs)


async def test_a_saved_file_is_measured_again_without_a_key_press_and_its_error_is_one_line(
    make_app, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "helpers.py").write_text(HELPERS)
    model = folder / "model.py"
    model.write_text("from helpers import bump\n\n\ndef f(x):\n    return bump(x)\n")
    app = source_app(make_app, source=SourceRef(str(model), "f", ["x: [N]"]))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app) and kernels(app) == ["aten::add"], STEP_TIMEOUT, "first rows")
        editor = app.query_one(ChainEditor)
        assert editor.read_only and editor.text.startswith("def f(x):") and "from helpers" not in editor.text
        assert editor.line_number_start == 4  # the file's own line numbers, as its errors give them
        title = str(editor.border_title)
        assert title.endswith("model.py:f · read-only") and len(title) + 4 <= editor.outer_size.width  # not cut
        app.screen.set_focus(editor)
        await pilot.press("x")
        assert app.main.status.said[-1][0] == "read-only: edit model.py in your own editor; each save is measured here"
        assert editor.text.startswith("def f(x):")
        assert folder / "helpers.py" in app.main.source.watch.files

        relu = "from helpers import bump\n\n\ndef f(x):\n    return bump(x).relu()\n"
        model.write_text(relu)
        await wait_for(
            pilot,
            lambda: focus_done(app) and kernels(app) == ["aten::add", "aten::clamp_min"],
            STEP_TIMEOUT,
            "the saved version's rows",
        )
        assert "relu()" in editor.text
        good = shown(app, "eager")

        model.write_text("from helpers import bump\n\n\ndef f(x):\n    y = bump(x)\n    raise ValueError('boom')\n")
        await wait_for(
            pilot,
            lambda: any("model.py:6: ValueError: boom" in text for text, _ in app.main.status.said),
            STEP_TIMEOUT,
            "the error line",
        )
        await wait_for(pilot, lambda: "STALE" in headline(app), what="the last rows marked stale")
        assert "model.py:6: ValueError: boom" in status_text(app)
        assert editor.line_number_start + editor.text.splitlines().index("    raise ValueError('boom')") == 6
        assert shown(app, "eager") is good
        assert not any("Traceback" in text for text, _ in app.main.status.said)

        model.write_text(relu)  # the error undone: a version measured before, its rows cached
        await wait_for(pilot, lambda: focus_done(app) and shown(app, "eager") is good, STEP_TIMEOUT, "undone")
        assert "boom" not in status_text(app)  # the error went with its cause

        (folder / "helpers.py").write_text(HELPERS.replace("x + 1", "x * 3"))  # a sibling saved
        model.write_text("from helpers import bump\n\n\ndef f(x):\n    return bump(x)\n")
        await wait_for(pilot, lambda: focus_done(app) and kernels(app) == ["aten::mul"], STEP_TIMEOUT, "fixed")

        # The user's code (and what it imports) ran in the worker only, never in the app.
        assert modules_from(folder) == []
        assert int((folder / "imported_by").read_text()) != os.getpid()
        await pilot.press("ctrl+q")


def remembering(tmp_path: Path, model: Path) -> Path:
    workspace = tmp_path / "workspace.json"
    entry = {"path": str(model), "name": "f", "inputs": ["x: [N]"]}
    workspace.write_text(json.dumps({"version": 1, "chains": [{"name": "add", "text": "a + b"}], "source": entry}))
    return workspace


async def test_a_workspace_holding_a_file_never_runs_it_without_confirmation(make_app, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "helpers.py").write_text(HELPERS)
    model = folder / "model.py"
    model.write_text("from helpers import bump\n\n\ndef f(x):\n    return bump(x)\n")
    app = source_app(make_app, workspace_path=remembering(tmp_path, model))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunFileDialog), what="the confirmation")
        question = str(app.screen.question)
        assert str(model) in question  # the path in full
        await pilot.press("n")
        # The workspace's chain is measured meanwhile: the worker was there, the file never sent.
        await wait_for(pilot, lambda: focus_done(app) and kernels(app) == ["aten::add"], STEP_TIMEOUT, "chain rows")
        assert app.session.source is None
        assert not (folder / "imported_by").exists()
        assert any("not run" in text for text, _ in app.main.status.said)

        app.main.action_open_workspace_source()
        await wait_for(pilot, lambda: isinstance(app.screen, RunFileDialog), what="the confirmation again")
        await pilot.press("y")
        await wait_for(pilot, lambda: (folder / "imported_by").exists(), STEP_TIMEOUT, "the file run once confirmed")
        await wait_for(pilot, lambda: focus_done(app) and app.session.source is not None, STEP_TIMEOUT, "its rows")
        assert int((folder / "imported_by").read_text()) != os.getpid()
        assert modules_from(folder) == []
        await pilot.press("ctrl+q")
