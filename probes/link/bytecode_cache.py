"""A bytecode cache for the worker, where torch was installed without its bytecode.

Python compiles a module's source at every import unless it finds the module's bytecode. pip writes
torch's when it installs it; a torch installed some other way under ``PYTHONDONTWRITEBYTECODE=1``
(container images often do this) has none, and every worker compiles the thousands of modules it
imports again: torch and Dynamo then take more than twice as long to import.

There, the first worker, once its first request is done, starts a filler at the lowest CPU priority
(``fill_later``): it compiles every module the worker imported into a cache of the user's own, off
the path to the first rows. Later workers start with ``PYTHONPYCACHEPREFIX`` at that cache
(``with_bytecode_cache``), only once it is filled: with the prefix set, Python reads no bytecode
outside it, so an empty cache would make the start slower (the standard library and every other
package compiled too). The cache is in the user's private cache directory: one that anyone else
could write to would let them run code in the worker. Bytecode of a changed source is stale by
Python's own check, and rewritten there by the import that finds it so.

The app's own process has the same problem where Textual or kernel-tui's sources have no bytecode
beside them and Python cannot write it there (``PYTHONDONTWRITEBYTECODE``, a read-only install):
each launch compiles them again before its first frame. ``use_in_this_process`` points that
process's imports at the same cache before it imports them; the first launch writes the bytecode
there as it imports, the later ones read it.

A fast path (``probes.link.fast_paths``): without it, the app and the worker import as their
environment has it.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import subprocess
import sys
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType

from probes.link import fast_paths
from probes.link.state_files import user_cache_dir

BYTECODE_CACHE_ENV = "KERNEL_TUI_BYTECODE_CACHE"
"""``0`` leaves the worker's imports as the environment has them."""
FILL_ENV = "KERNEL_TUI_BYTECODE_FILL"
"""Set by the launcher for a worker whose cache is not filled yet: where that worker should fill it."""


def has_bytecode(package: str) -> bool | None:
    """Whether ``package``'s ``__init__`` has its bytecode beside it; None if it is not a source package.

    Finds the package without importing it (the app, which never imports torch, asks this)."""
    origin = _origin(package)
    return None if origin is None else _without_bytecode(package) is None


def _beside(source: str) -> str:
    """Where an interpreter without a pycache prefix keeps ``source``'s bytecode, whatever this
    process's prefix: the worker the app starts has none unless its environment names one."""
    folder, name = os.path.split(source)
    return os.path.join(folder, "__pycache__", f"{name.removesuffix('.py')}.{sys.implementation.cache_tag}.pyc")


def _without_bytecode(package: str) -> str | None:
    """``package``'s ``__init__`` source where it has no bytecode beside it; else None."""
    origin = _origin(package)
    return None if origin is None or os.path.exists(_beside(origin)) else origin


def cache_allowed(env: Mapping[str, str]) -> bool:
    """Whether ``env`` lets a process use the cache: the trick on, the cache not turned off."""
    return fast_paths.enabled("bytecode_cache", env) and env.get(BYTECODE_CACHE_ENV) != "0"


def _compiled(source: str) -> bool:
    """Whether ``source`` has its bytecode where this interpreter looks for it."""
    return os.path.exists(importlib.util.cache_from_source(source))


def _origin(package: str) -> str | None:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return spec.origin


def _filled_marker(cache: Path, torch_origin: str) -> Path:
    """Written once the modules a worker of this torch imports are all in the cache."""
    return cache / f"filled-{zlib.crc32(torch_origin.encode()):08x}"


def _cache_wanted(env: dict[str, str]) -> tuple[Path, str] | None:
    """The cache and torch's ``__init__``, where the worker should have a cache; else None."""
    if not cache_allowed(env) or env.get("PYTHONPYCACHEPREFIX"):
        return None
    origin = _without_bytecode("torch")
    if origin is None:
        return None
    try:
        return user_cache_dir() / "bytecode", origin
    except OSError:
        return None


def with_bytecode_cache(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a worker that runs this interpreter: pointed at the bytecode cache once it is
    filled, or asked to fill it; unchanged where torch has its own bytecode or the user chose a prefix."""
    env = {k: v for k, v in env.items() if k != FILL_ENV}
    wanted = _cache_wanted(env)
    if wanted is None:
        return env
    cache, origin = wanted
    if not _filled_marker(cache, origin).exists():
        return env | {FILL_ENV: str(cache)}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the user's sources stay untouched: bytecode goes to the cache only
    return env


def use_in_this_process(packages: Iterable[str]) -> bool:
    """Point this process's later imports at the cache where one of ``packages`` has no bytecode
    beside its source and Python cannot write it there; True if it did.

    With a prefix, Python reads no bytecode outside it: what this process imports later, the
    standard library included, is compiled into the cache by the first launch that imports it, and
    read from there by every launch after. Left as it is where the user chose a prefix, where the
    packages have their bytecode or Python writes it beside them, or where the cache is unusable."""
    if (
        not cache_allowed(os.environ)
        or sys.pycache_prefix is not None
        or not any(compiles_at_every_import(package) for package in packages)
    ):
        return False
    try:
        cache = user_cache_dir() / "bytecode"
        cache.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return False
    sys.pycache_prefix = str(cache)
    sys.dont_write_bytecode = False  # the user's sources stay untouched: bytecode goes to the cache only
    return True


def compiles_at_every_import(package: str) -> bool:
    """Whether each import of ``package`` compiles its source: no bytecode beside its ``__init__``,
    and Python cannot write it there."""
    origin = _without_bytecode(package)
    if origin is None:
        return False
    pycache = os.path.dirname(_beside(origin))
    writable = os.access(pycache if os.path.isdir(pycache) else os.path.dirname(origin), os.W_OK)
    return sys.dont_write_bytecode or not writable


def fill_later(modules: Iterable[ModuleType]) -> subprocess.Popen[bytes] | None:
    """In a worker asked to fill the cache (``FILL_ENV``): start the filler on ``modules``' sources.

    It runs in the worker's process group, so it dies with the worker when the app kills that."""
    cache = os.environ.get(FILL_ENV)
    if not fast_paths.enabled("bytecode_cache"):
        return None
    torch = sys.modules.get("torch")
    origin = getattr(torch, "__file__", None)
    if not cache or origin is None or sys.pycache_prefix is not None:
        return None
    files = {getattr(module, "__file__", None) for module in list(modules)}
    # Not every module's __file__ is a file of its own (torch's ``_ops.py``, ``_classes.py`` are names).
    sources = sorted(
        f for f in files if isinstance(f, str) and f.endswith(".py") and os.path.isabs(f) and os.path.isfile(f)
    )
    try:
        filler = subprocess.Popen(
            [sys.executable, "-X", f"pycache_prefix={cache}", "-m", "probes.link.bytecode_cache", origin],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:  # no process to spare: the worker goes on without its cache
        return None
    assert filler.stdin is not None
    with contextlib.suppress(BrokenPipeError):
        filler.stdin.write("\n".join(sources).encode())
        filler.stdin.close()
    return filler


def fill(cache: Path, torch_origin: str, sources: list[str]) -> None:
    """Compile ``sources`` into ``cache`` (this process's pycache prefix); mark it filled if all went in.

    One filler at a time: another that finds the lock taken leaves the work to it."""
    import py_compile  # the filler's alone: the app imports this module at its start

    cache.mkdir(mode=0o700, exist_ok=True)
    with open(cache / ".filling", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return
        failed = 0
        for source in sources:
            if not _compiled(source):
                try:
                    py_compile.compile(source, doraise=True)
                except (py_compile.PyCompileError, OSError):
                    failed += 1
        if not failed:
            _filled_marker(cache, torch_origin).touch()


def main() -> None:
    os.nice(19)  # below everything: the worker's measurements and the user's own work come first
    if sys.pycache_prefix is None:
        raise SystemExit("run with -X pycache_prefix=CACHE")
    fill(Path(sys.pycache_prefix), sys.argv[1], [line for line in sys.stdin.read().split("\n") if line])


if __name__ == "__main__":
    main()
