"""The project installs as users install it: ``pip install .`` into a fresh virtual environment
that already holds a torch leaves that torch as it was (no multi-GB download, no changed
environment), and the installed ``kernel-tui`` measures and draws."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from terminal import Terminal

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "h200_add_relu_sweep.json"

pytestmark = pytest.mark.slow

TORCH_OF = "import torch, pathlib; print(torch.__version__, pathlib.Path(torch.__file__).resolve().parents[1])"


def quiet_pip_env() -> dict[str, str]:
    """This environment without the machine's pip settings (a constraint file can cap torch) and
    without an index: pip may use only what the venv holds, so an attempt to replace torch fails
    here instead of downloading one."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a source distribution holds, copied: a build in the checkout would leave build/ there,
    and files a former build left in it could pass for modules the packaging forgot."""
    copy = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    for package in ("probes", "tui"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, source: Path) -> tuple[Path, str]:
    """A fresh venv holding this environment's torch (through a .pth line, as ``make`` reuses a
    GPU box's torch), then ``pip install .``; the venv and the torch it was given."""
    work = tmp_path_factory.mktemp("packaging")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    (purelib,) = venv.glob("lib/python*/site-packages")
    import torch

    (purelib / "reuse-torch.pth").write_text(f"{Path(torch.__file__).resolve().parents[1]}\n")
    # The venv's own setuptools (Python < 3.12 bundles one) is older than the build needs; the
    # build then uses the one beside torch, as no index is at hand.
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], check=True, env=quiet_pip_env())
    given = subprocess.run([python, "-c", TORCH_OF], capture_output=True, text=True, check=True).stdout
    done = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-build-isolation", str(source)],
        capture_output=True,
        text=True,
        env=quiet_pip_env(),
        cwd=work,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    where = subprocess.run(
        [python, "-c", "import probes, tui; print(probes.__file__, tui.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(Path(path).is_relative_to(purelib) for path in where), where
    return venv, given


def test_the_wheel_carries_every_module_the_stylesheet_and_the_typing_marker(source: Path, tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), source],
        check=True,
        capture_output=True,
        env=quiet_pip_env(),
    )
    (wheel,) = tmp_path.glob("kernel_tui-*.whl")
    packaged = {name for name in zipfile.ZipFile(wheel).namelist() if name.startswith(("probes/", "tui/"))}
    files = {str(p.relative_to(ROOT)) for package in ("probes", "tui") for p in (ROOT / package).rglob("*.py")}
    files |= {str(p.relative_to(ROOT)) for p in (ROOT / "tui").rglob("*.tcss")}
    files |= {"probes/py.typed", "tui/py.typed"}
    assert packaged == files


def test_pip_install_leaves_the_venvs_torch_in_place(installed: tuple[Path, str]) -> None:
    venv, given = installed
    after = subprocess.run(
        [str(venv / "bin" / "python"), "-c", TORCH_OF], capture_output=True, text=True, check=True
    ).stdout
    assert after == given, "pip install . changed the torch the venv held"
    (purelib,) = venv.glob("lib/python*/site-packages")
    assert not (purelib / "torch").exists(), "pip installed a second torch into the venv"


def test_installed_profile_shows_the_fusion(installed: tuple[Path, str], tmp_path: Path) -> None:
    """The README's headless example, from the installed command: two eager kernels become one
    compiled kernel at every size of the default sweep."""
    venv, _ = installed
    done = subprocess.run(
        [str(venv / "bin" / "kernel-tui"), "profile", "(a + b).relu()", "--device", "cpu", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert not report["failures"], report["failures"]
    counts = {(r["mode"], r["size"]): r["kernels_per_call"] for r in report["results"]}
    sizes = sorted({size for _, size in counts})
    assert len(sizes) > 1, counts
    assert counts == {**{("eager", n): 2 for n in sizes}, **{("compiled", n): 1 for n in sizes}}
    assert all(r["ran_compiled"] for r in report["results"] if r["mode"] == "compiled")


def test_installed_app_starts_shows_results_and_quits(installed: tuple[Path, str], tmp_path: Path) -> None:
    venv, _ = installed
    env = {
        "HOME": str(tmp_path),
        "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
    }
    with Terminal([str(venv / "bin" / "kernel-tui"), "--replay", str(RECORDING)], env=env, cwd=tmp_path) as term:
        term.wait_for("triton_poi_fused_add_relu_0", timeout=60, what="the replayed compiled kernel")
        term.press("C-q")
        term.wait_until_exited(timeout=10)
        assert term.exit_status() == 0
