"""Where kernel-tui keeps its files, and how it writes them: user-only, atomic, never via a symlink.

Shared by the worker (caches) and the UI (workspace, exports); no torch, no textual.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import platformdirs

APP_NAME = "kernel-tui"


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.is_symlink():
        raise OSError(f"refusing to use {path}: it is a symbolic link")
    os.chmod(path, 0o700)
    return path


def user_cache_dir() -> Path:
    override = os.environ.get("KERNEL_TUI_CACHE_DIR")
    return _private_dir(Path(override) if override else Path(platformdirs.user_cache_dir(APP_NAME)))


def user_state_dir() -> Path:
    override = os.environ.get("KERNEL_TUI_STATE_DIR")
    return _private_dir(Path(override) if override else Path(platformdirs.user_state_dir(APP_NAME)))


def write_private_file(path: Path, text: str) -> None:
    """Write ``text`` atomically (temp file + rename) with mode 0600.

    The rename replaces whatever is at ``path``, a planted symlink included, without following it,
    and a crash mid-write leaves the previous file intact.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

