"""Where kernel-tui keeps its files, and how it writes them: user-only, atomic, never through a planted symlink.

Shared by the worker (caches) and the UI (workspace, exports); no torch, no textual.

A directory of its own (the cache, the state) is the user's and no one else's: one the tool creates
is 0700, one that is there already is made 0700. A symbolic link in its place (a dotfile manager's)
is followed when the link is the user's and leads to a directory the user owns that no one else can
write to; that directory keeps its mode. Anything else is ``UnusableDir``: one line naming the
directory and the variable that chose it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

import platformdirs

from probes.link.safe_text import inert_line

APP_NAME = "kernel-tui"
_DIRS = {
    "cache": ("KERNEL_TUI_CACHE_DIR", "XDG_CACHE_HOME", platformdirs.user_cache_dir),
    "state": ("KERNEL_TUI_STATE_DIR", "XDG_STATE_HOME", platformdirs.user_state_dir),
}
"""Each directory: the variable that names it, the XDG variable its default lies under, the default."""


class UnusableDir(OSError):
    """A directory kernel-tui cannot keep its files in; ``str()`` is one inert line saying which,
    chosen by what, and why. ``path`` is where it was looked for."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class _Refused(OSError):
    """Why a directory that is there is not used, in plain words (an OSError, as what the system
    refuses is)."""


def _make_missing_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents, each 0700; existing ones are left as they are.

    ``lexists``: a dangling symlink counts as there, so nothing is created at its destination.
    """
    missing = []
    while not os.path.lexists(path) and path.parent != path:
        missing.append(path)
        path = path.parent
    if missing and not path.is_dir():
        raise _Refused(f"{path} is not a directory")
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
            os.chmod(directory, 0o700)  # whatever the umask


def _link_target(path: Path) -> Path | None:
    """The directory the symbolic link at ``path`` leads to, when the link is the user's; None
    when ``path`` is no symbolic link."""
    link = os.lstat(path)
    if not stat.S_ISLNK(link.st_mode):
        return None
    if link.st_uid != os.geteuid():
        raise _Refused("it is a symbolic link that belongs to another user")
    try:
        return Path(os.path.realpath(path, strict=True))
    except OSError:
        raise _Refused("it is a symbolic link that leads to no directory") from None


def _private_dir(path: Path) -> None:
    """Make ``path`` a directory only this user can use (see the module doc); OSError if it
    cannot be. The directory is opened with O_NOFOLLOW and checked on its
    descriptor, so nothing swapped in between is used."""
    _make_missing_dirs(path)
    target = _link_target(path)
    fd = os.open(target or path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        found = os.fstat(fd)
        if found.st_uid != os.geteuid():
            raise _Refused(f"{target or path} belongs to another user")
        if target is None:
            os.fchmod(fd, 0o700)
        elif found.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise _Refused(f"{target} can be written by other users (chmod go-w makes it private)")
        elif not os.access(target, os.W_OK | os.X_OK):
            raise _Refused(f"{target} is not writable")
    finally:
        os.close(fd)


def _user_dir(kind: str) -> Path:
    """kernel-tui's ``kind`` directory, private (see the module doc); UnusableDir otherwise."""
    variable, xdg, default = _DIRS[kind]
    if os.environ.get(variable):
        path, chosen = Path(os.environ[variable]), f"{variable}={os.environ[variable]}"
    else:
        path = Path(default(APP_NAME))
        chosen = f"{xdg}={os.environ[xdg]}" if os.environ.get(xdg, "").strip() else ""
    named = f"the {kind} directory {path}" + (f" (from {chosen})" if chosen else "")
    try:
        _private_dir(path)
    except OSError as exc:
        why = str(exc) if exc.strerror is None else f"{exc.strerror} ({exc.filename or path})"
        raise UnusableDir(inert_line(f"cannot use {named}: {why}"), path) from None
    return path


def user_cache_dir() -> Path:
    return _user_dir("cache")


def user_state_dir() -> Path:
    return _user_dir("state")


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
