"""A worker on a torch installed without bytecode, and an app whose sources have none, have their
imports compiled once, into a private cache.

Each test runs in subprocesses whose ``torch`` is a small stand-in package on PYTHONPATH, so that
what the launcher finds (bytecode or none) is the test's to choose, whatever torch this machine has.
"""

from __future__ import annotations

import json
import os
import py_compile
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WORKER = """
import sys, torch
from probes.link.bytecode_cache import fill_later
filler = fill_later(sys.modules.values())  # as the worker does once its first request is done
print(filler.wait() if filler else "none")
"""

LAUNCH = """
import json, subprocess, sys
from probes.link.worker_process import worker_environment
command = json.loads(sys.argv[1]) or [sys.executable, "-m", "probes.engine.worker"]
env = worker_environment(command)
worker = subprocess.run([sys.executable, "-c", sys.argv[2]], env=env, capture_output=True, text=True, check=True)
seen = {k: env.get(k) for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
print(json.dumps(seen | {"worker": worker.stdout.strip()}))
"""


def fake_torch(root: Path, *, compiled: bool) -> Path:
    package = root / "site" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from torch import ops\n")
    (package / "ops.py").write_text("ADD = 'add'\n")
    if compiled:
        for module in package.glob("*.py"):
            py_compile.compile(str(module), doraise=True)
    return root / "site"


def environment(tmp_path: Path, site: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", "KERNEL_TUI_BYTECODE_CACHE")}
    return env | {
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
        **extra,
    }


def launch(
    tmp_path: Path, site: Path, command: list[str] | None = None, worker: str = WORKER, **extra: str
) -> dict[str, str | None]:
    """The environment the app gives a worker with ``command`` (None: the local worker), and what
    ``worker`` printed, run with it."""
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, json.dumps(command), worker],
        env=environment(tmp_path, site, **extra),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def cached_bytecode(cache: Path) -> set[str]:
    return {p.name.split(".")[0] for p in cache.rglob("torch/*.pyc")}


def test_a_torch_without_bytecode_gets_a_cache_filled_after_the_first_worker_and_used_by_the_next(
    tmp_path: Path,
) -> None:
    site = fake_torch(tmp_path, compiled=False)
    cache = tmp_path / "cache" / "bytecode"
    first = launch(tmp_path, site)
    assert first == {
        "PYTHONPYCACHEPREFIX": None,
        "PYTHONDONTWRITEBYTECODE": "1",
        "worker": "0",
    }  # not filled: not used yet
    assert cached_bytecode(cache) == {"__init__", "ops"}
    second = launch(tmp_path, site)
    assert second == {
        "PYTHONPYCACHEPREFIX": str(cache),
        "PYTHONDONTWRITEBYTECODE": None,
        "worker": "none",
    }  # nothing left to fill
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700  # nobody else can plant bytecode there
    assert not (site / "torch" / "__pycache__").exists()  # the user's tree stays as it was


def test_a_module_added_to_torch_later_is_compiled_into_the_cache_by_its_import(tmp_path: Path) -> None:
    site = fake_torch(tmp_path, compiled=False)
    launch(tmp_path, site)
    (site / "torch" / "extra.py").write_text("X = 1\n")
    launch(tmp_path, site, worker="import torch.extra")
    assert "extra" in cached_bytecode(tmp_path / "cache" / "bytecode")


def test_a_torch_with_its_bytecode_is_left_alone(tmp_path: Path) -> None:
    site = fake_torch(tmp_path, compiled=True)
    assert launch(tmp_path, site) == {"PYTHONPYCACHEPREFIX": None, "PYTHONDONTWRITEBYTECODE": "1", "worker": "none"}
    assert not (tmp_path / "cache" / "bytecode").exists()


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (None, {"KERNEL_TUI_BYTECODE_CACHE": "0"}),
        (None, {"PYTHONPYCACHEPREFIX": str(Path("/nonexistent/their-own"))}),
        (["/usr/bin/python3", "-m", "probes.engine.worker"], {}),
    ],
    ids=["turned-off", "the-users-own-prefix", "another-interpreter"],
)
def test_the_cache_stays_out_where_it_is_not_ours_to_add(
    tmp_path: Path, command: list[str] | None, extra: dict[str, str]
) -> None:
    site = fake_torch(tmp_path, compiled=False)
    for _ in range(2):
        env = launch(tmp_path, site, command, **extra)
        assert env["PYTHONPYCACHEPREFIX"] == extra.get("PYTHONPYCACHEPREFIX")
        assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert not (tmp_path / "cache" / "bytecode").exists()


APP = """
import sys
from probes.link.bytecode_cache import use_in_this_process
used = use_in_this_process(["app_pkg"])
import app_pkg
print(used, app_pkg.VALUE, sys.pycache_prefix)
"""


def app_package(root: Path) -> Path:
    """A stand-in for Textual or kernel-tui's own package, without bytecode; its site folder."""
    package = root / "site" / "app_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("VALUE = 1\n")
    return root / "site"


def start_app(tmp_path: Path, site: Path, **extra: str) -> list[str]:
    """What ``APP`` printed: whether it used the cache, the package's value, its pycache prefix."""
    env = environment(tmp_path, site, **extra)
    env = {k: v for k, v in env.items() if v}  # an empty value stands for a variable the user has not set
    done = subprocess.run(
        [sys.executable, "-c", APP], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.split()


def test_an_app_whose_sources_have_no_bytecode_reads_it_from_the_cache_from_its_second_launch(
    tmp_path: Path,
) -> None:
    site = app_package(tmp_path)
    cache = tmp_path / "cache" / "bytecode"
    assert start_app(tmp_path, site) == ["True", "1", str(cache)]
    assert [p.name.split(".")[0] for p in cache.rglob("app_pkg/*.pyc")] == ["__init__"]
    # A source of the same size and time: only a launch that reads the bytecode still sees VALUE = 1.
    source = site / "app_pkg" / "__init__.py"
    before = source.stat()
    source.write_text("VALUE = 2\n")
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert start_app(tmp_path, site) == ["True", "1", str(cache)]
    assert not (site / "app_pkg" / "__pycache__").exists()  # the user's tree stays as it was


def test_an_app_whose_python_writes_bytecode_beside_its_sources_imports_as_usual(tmp_path: Path) -> None:
    site = app_package(tmp_path)
    assert start_app(tmp_path, site, PYTHONDONTWRITEBYTECODE="") == ["False", "1", "None"]
    assert (site / "app_pkg" / "__pycache__").is_dir()
    assert start_app(tmp_path, site) == ["False", "1", "None"]  # now it has its bytecode beside it
    assert not (tmp_path / "cache" / "bytecode").exists()


@pytest.mark.parametrize(
    "extra",
    [{"KERNEL_TUI_BYTECODE_CACHE": "0"}, {"KERNEL_TUI_FAST_PATHS": "-bytecode_cache"}],
    ids=["turned-off", "trick-off"],
)
def test_an_app_told_not_to_use_the_cache_compiles_as_its_environment_says(
    tmp_path: Path, extra: dict[str, str]
) -> None:
    site = app_package(tmp_path)
    assert start_app(tmp_path, site, **extra) == ["False", "1", "None"]
    assert not (tmp_path / "cache" / "bytecode").exists()


def test_an_app_reading_its_own_cache_still_sees_the_bytecode_beside_torch(tmp_path: Path) -> None:
    """The app's prefix changes where this process looks, not what its workers find: a torch with
    its bytecode gets no cache of its own."""
    site = fake_torch(tmp_path, compiled=True)
    app_package(tmp_path)
    worker = "print('none')"
    prefixed = LAUNCH.replace(
        "env = worker_environment",
        "from probes.link.bytecode_cache import use_in_this_process\n"
        "assert use_in_this_process(['app_pkg'])\nenv = worker_environment",
    ).replace('"PYTHONDONTWRITEBYTECODE")', '"PYTHONDONTWRITEBYTECODE", "KERNEL_TUI_BYTECODE_FILL")')
    done = subprocess.run(
        [sys.executable, "-c", prefixed, json.dumps(None), worker],
        env=environment(tmp_path, site),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == {
        "PYTHONPYCACHEPREFIX": None,
        "PYTHONDONTWRITEBYTECODE": "1",
        "KERNEL_TUI_BYTECODE_FILL": None,
        "worker": "none",
    }


@pytest.mark.parametrize(
    ("argv", "packages"),
    [([], ("probes", "tui", "textual")), (["profile", "a + b"], ("probes",)), (["worker"], None)],
    ids=["the-app", "profile", "worker"],
)
def test_the_command_points_its_imports_at_the_cache_before_anything_else(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], packages: tuple[str, ...] | None
) -> None:
    """Done by ``kernel-tui`` itself (``run``), first, for the packages that command imports; never
    by ``main()``, which a test or a notebook calls in a process of its own."""
    import tui.__main__ as command
    from probes.link import bytecode_cache

    done: list[object] = []
    monkeypatch.setattr(bytecode_cache, "use_in_this_process", lambda names: done.append(tuple(names)))
    monkeypatch.setattr(command, "main", lambda: done.append("main") or 0)
    monkeypatch.setattr(os, "_exit", done.append)
    monkeypatch.setattr(sys, "argv", ["kernel-tui", *argv])
    command.run()
    assert done == [*([packages] if packages else []), "main", 0]
