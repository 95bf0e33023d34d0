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


def _make_missing_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents, each 0700; existing ones are left as they are.

    ``lexists``: a dangling symlink counts as there, so nothing is created at its destination.
    """
    missing = []
    while not os.path.lexists(path) and path.parent != path:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
            os.chmod(directory, 0o700)  # whatever the umask


def _private_dir(path: Path) -> Path:
    """``path`` as a directory only this user can use: created 0700, made 0700 if it exists, and
    refused if it is a symbolic link (opened with O_NOFOLLOW, so no swap can slip in between) or
    belongs to someone else."""
    _make_missing_dirs(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if path.is_symlink():
            raise OSError(f"refusing to use {path}: it is a symbolic link") from None
        raise OSError(f"cannot use {path} as a directory: {exc.strerror}") from None
    try:
        if os.fstat(fd).st_uid != os.geteuid():
            raise OSError(f"refusing to use {path}: it belongs to another user")
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
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
    _make_missing_dirs(path.parent)
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
