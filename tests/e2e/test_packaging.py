"""The project installs as users install command-line tools (``pipx install .``): a normal,
non-editable wheel, in a fresh virtual environment, gives a working ``kernel-tui``."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from terminal import Terminal

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "h200_add_relu_sweep.json"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; torch is reused from this environment (a .pth
    line), as the Makefile reuses a GPU box's torch, so no multi-GB download can happen."""
    work = tmp_path_factory.mktemp("packaging")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = (work / "dist").glob("kernel_tui-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    (purelib,) = venv.glob("lib/python*/site-packages")
    import torch

    torch_site = Path(torch.__file__).parents[1]
    (purelib / "reuse-torch.pth").write_text(f"{torch_site}\n")
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import probes, tui; print(probes.__file__, tui.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(Path(path).is_relative_to(purelib) for path in where), where
    return venv


def test_the_wheel_carries_every_module_and_the_stylesheet(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("kernel_tui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {str(p.relative_to(ROOT)) for package in ("probes", "tui") for p in (ROOT / package).rglob("*.py")}
    assert sources <= names, f"missing from the wheel: {sorted(sources - names)}"
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "tui").rglob("*.tcss")} <= names


def test_installed_profile_measures_a_chain(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            str(installed / "bin" / "kernel-tui"),
            "profile",
            "a + b",
            "--sizes",
            "1e3",
            "--modes",
            "eager",
            "--device",
            "cpu",
            "--json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert [r["mode"] for r in report["results"]] == ["eager"]
    assert report["results"][0]["kernels_per_call"] >= 1


def test_installed_app_starts_shows_results_and_quits(installed: Path, tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
    }
    with Terminal([str(installed / "bin" / "kernel-tui"), "--replay", str(RECORDING)], env=env, cwd=tmp_path) as term:
        term.wait_for("triton_poi_fused_add_relu_0", timeout=60, what="the replayed compiled kernel")
        term.press("C-q")
        term.wait_until_exited(timeout=10)
        assert term.exit_status() == 0
