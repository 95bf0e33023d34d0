"""kernel-tui started inside the user's project folder imports nothing from it: modules named as the
tool's own (``probes``, ``tui``) or as those torch imports (``sympy``, ``numpy``,
``typing_extensions``) never run, in the client, the worker or the compiler; a ``FILE.py:NAME``
adds its own folder after the installed packages, and each measurement says which of its
neighbours were passed over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KERNEL_TUI = Path(sys.executable).with_name("kernel-tui")
PLANTED = ("probes.py", "sympy.py", "numpy.py", "typing_extensions.py", "tui/__init__.py")


def plant(folder: Path, marker: Path) -> None:
    """Files that, if imported, each write their name into ``marker``'s folder."""
    for name in PLANTED:
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"open({str(marker.with_suffix('.' + name.replace('/', '_')))!r}, 'w').close()\n")


def profile(folder: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(KERNEL_TUI), "profile", *args, "--device", "cpu", "--sizes", "1e3", "--reps", "3", "--json"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.slow
def test_a_folder_of_planted_modules_runs_none_of_them_and_measures_two_kernels_then_one(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "ran"
    plant(project, marker)
    done = profile(project, tmp_path, "(a + b).relu()", "--modes", "eager,compiled")
    assert done.returncode == 0, done.stderr
    kernels = {m["mode"]: m["kernels_per_call"] for m in json.loads(done.stdout)["results"]}
    assert kernels == {"eager": 2, "compiled": 1}
    assert sorted(p.name for p in tmp_path.glob("ran.*")) == []


@pytest.mark.slow
def test_a_files_folder_comes_after_the_installed_packages_and_the_measurement_says_so(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "ran"
    plant(project, marker)
    (project / "helper.py").write_text("def double(x):\n    return x * 2\n")
    (project / "model.py").write_text("from helper import double\n\n\ndef block(x):\n    return double(x).relu()\n")
    done = profile(project, tmp_path, "model.py:block", "--input", "x: [N]", "--modes", "eager")
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert result["kernels_per_call"] == 2  # mul, relu: its sibling helper.py was imported
    assert sorted(p.name for p in tmp_path.glob("ran.*")) == []
    (note,) = [d for d in result["diagnostics"] if "beside model.py" in d]
    passed_over = set(note.split(" beside ")[0].split(", "))
    assert passed_over - {"numpy"} == {"probes", "sympy", "tui", "typing_extensions"}  # numpy where installed
    assert "helper" not in passed_over
