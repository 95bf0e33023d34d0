"""A worker on a torch installed without bytecode has its imports compiled once, into a private cache.

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
