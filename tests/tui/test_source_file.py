"""The user's file as the app sees it: text, parsed, never run (tui.source_file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from probes.link.protocol import SourceRef
from tui.source_file import ON_WORKER, FileWatch, local_imports, source_view

MODEL = """\
import torch
import helpers
from layers import Block
from . import util
import numpy


@torch.no_grad()
def block(x):
    return helpers.bump(x)


class Mlp(torch.nn.Module):
    pass
"""


def project(tmp_path: Path) -> Path:
    for name in ("helpers.py", "layers.py", "util.py", "unused.py"):
        (tmp_path / name).write_text("x = 1\n")
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    return model


def test_the_editor_shows_the_named_block_with_its_decorators_and_first_line(tmp_path: Path) -> None:
    model = project(tmp_path)
    view = source_view(SourceRef(str(model), "block"))
    assert view.text == "@torch.no_grad()\ndef block(x):\n    return helpers.bump(x)"
    assert view.first_line == 8 and view.problem is None
    assert source_view(SourceRef(str(model), "Mlp")).text.startswith("class Mlp(")


def test_a_file_only_on_the_worker_machine_is_said_so(tmp_path: Path) -> None:
    view = source_view(SourceRef(str(tmp_path / "elsewhere.py"), "block"))
    assert view.problem == ON_WORKER and ON_WORKER in view.text


def test_a_syntax_error_or_a_missing_name_is_one_line_and_nothing_runs(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    model = tmp_path / "model.py"
    model.write_text(f"open({str(sentinel)!r}, 'w')\n\ndef block(x):\n    return x +\n")
    assert source_view(SourceRef(str(model), "block")).problem == "model.py:4: SyntaxError: invalid syntax"
    model.write_text(f"open({str(sentinel)!r}, 'w')\n")
    assert "no def or class named 'block'" in (source_view(SourceRef(str(model), "block")).problem or "")
    assert not sentinel.exists()


def test_the_watched_files_are_the_file_and_what_it_imports_from_its_folder(tmp_path: Path) -> None:
    model = project(tmp_path)
    found = local_imports(model, model.read_text())
    assert found == [tmp_path / "helpers.py", tmp_path / "layers.py", tmp_path / "util.py"]


def test_a_poll_sees_a_save_of_the_file_or_a_sibling_but_not_a_touch(tmp_path: Path) -> None:
    model = project(tmp_path)
    watch = FileWatch(model)
    first = watch.version
    assert not watch.poll()
    os.utime(model, ns=(1, 1))  # touched: same text
    assert not watch.poll() and watch.version == first
    (tmp_path / "helpers.py").write_text("x = 2\n")
    assert watch.poll() and watch.version != first
    second = watch.version
    model.write_text(MODEL.replace("import numpy", "import unused"))
    assert watch.poll() and watch.version != second
    assert tmp_path / "unused.py" in watch.files


def test_a_path_that_is_not_on_this_machine_is_the_worker_machines_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from tui.__main__ import _source

    remote = _source(argparse.Namespace(chain="/srv/models/model.py:block", input=["x: [N]"]))
    assert remote == SourceRef("/srv/models/model.py", "block", ["x: [N]"])
    model = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    local = _source(argparse.Namespace(chain="model.py:block", input=[]))
    assert local is not None and local.path == str(model.resolve())
    assert _source(argparse.Namespace(chain="(a + b).relu()", input=[])) is None
