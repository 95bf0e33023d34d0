"""Opening a workspace file so that nothing in it is ever destroyed.

- A path that cannot be saved to (a folder, a missing or read-only folder, a file that cannot be
  read, a FIFO, a device, a socket or a file over the size limit, a file given with ``--workspace``
  that is not a workspace) is refused before the app starts: ``WorkspaceRefused``, one line, and the
  command exits non-zero.
- A file the app cannot fully understand (written by a newer version, unknown fields, values it had
  to repair) is opened read-only when the user pointed at it; the app's own default file is copied
  aside first (the user is told where) and then used as usual. A corrupt default file is copied
  aside and replaced by the seed workspace. Nothing is ever renamed or moved.
- Where the app's own folder (the state directory) cannot be used, the app starts with the seed
  workspace, read-only, and says why: nothing is saved.
- A second app on the same file (a lock holding the first one's pid) opens it read-only and says so.
- A user-named file reached through a symbolic link is read and saved at the link's target; the
  link stays.

No torch, no textual.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from probes.link.safe_files import WORKSPACE_LIMIT_BYTES, UnreadableFile, read_user_file
from probes.link.safe_text import inert_line
from probes.link.state_files import UnusableDir
from tui import workspace as ws

LOCK_HOLDER_CHARS = 20
"""The lock file holds the holder's pid: no more of it is read."""


class WorkspaceRefused(Exception):
    """The path cannot be used as a workspace; the message says why in one line."""


@dataclass
class WorkspaceFile:
    """An opened workspace: where it lives, whether it may be written, and what the user should know."""

    workspace: ws.Workspace
    path: Path
    read_only: str | None = None
    """Why edits are not saved to ``path`` (None: they are)."""
    notices: list[str] = field(default_factory=list)
    _lock: IO[str] | None = None

    def save(self) -> None:
        """Write the workspace (atomically, 0600); never over a file opened read-only."""
        if self.read_only is None:
            ws.save(self.workspace, self.path)

    def save_copy(self) -> Path:
        """Write the workspace next to the file (or in the state dir), under a new name; its path."""
        name = f"{self.path.stem}.copy-{_stamp()}.json"
        for folder in (self.path.parent, ws.default_path().parent):
            target = folder / name
            with contextlib.suppress(OSError):
                ws.save(self.workspace, target)
                return target
        raise OSError(errno.EACCES, f"no folder to save a copy of {self.path} in")

    def release(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                self._lock.close()  # closing the file drops the lock
            self._lock = None


def _stamp() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _where(path: Path) -> str:
    return inert_line(str(path))


def _followed(path: Path) -> Path:
    """The file a user-named ``path`` leads to: saves replace the file atomically, so a symbolic link
    the user made (a workspace kept in a dotfiles checkout) is followed to its target, which then
    gets every save while the link stays a link."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of links
        raise WorkspaceRefused(f"the workspace {_where(path)} is a symbolic link that leads to no file") from None


def _check_saveable(path: Path) -> None:
    if path.is_dir():
        raise WorkspaceRefused(
            f"the workspace {_where(path)} is a folder: give a file, e.g. {_where(path / 'workspace.json')}"
        )
    folder = path.parent
    if not folder.is_dir():
        raise WorkspaceRefused(f"the folder of the workspace {_where(path)} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WorkspaceRefused(f"the workspace {_where(path)} cannot be saved: its folder is not writable")
    if path.exists() and not os.access(path, os.R_OK):
        raise WorkspaceRefused(f"the workspace {_where(path)} cannot be read (permission denied)")


def _lock(path: Path) -> tuple[IO[str] | None, str | None]:
    """Take the lock next to ``path``; (None, why) when another app holds it."""
    lock_path = path.with_name(f".{path.name}.lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return None, f"no lock could be taken ({exc.strerror})"
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO planted there would block the read below
        os.close(fd)
        return None, "no lock could be taken (its lock file is not a regular file)"
    handle = os.fdopen(fd, "r+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = handle.read(LOCK_HOLDER_CHARS).strip() or "another process"
        handle.close()
        return None, f"it is open in another kernel-tui (pid {inert_line(holder)[:LOCK_HOLDER_CHARS]})"
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle, None


def open_workspace(path: Path | None = None) -> WorkspaceFile:
    """Open the workspace at ``path`` (the default one when None); see the module doc."""
    own = path is None
    if path is None:
        try:
            path = ws.default_path()
        except UnusableDir as exc:
            return _without_state_dir(exc)
    else:
        path = _followed(path)
    _check_saveable(path)
    try:
        text: str | None = read_user_file(path, WORKSPACE_LIMIT_BYTES, "the workspace")
    except UnreadableFile as exc:
        if not exc.missing:
            raise WorkspaceRefused(str(exc)) from None
        text = None
    opened = WorkspaceFile(ws.Workspace.default(), path)
    if text is not None:
        try:
            opened.workspace, problems = ws.Workspace.from_data(json.loads(text))
        except (ValueError, TypeError, RecursionError) as exc:
            if not own:
                raise WorkspaceRefused(
                    f"{_where(path)} is not a kernel-tui workspace ({inert_line(str(exc))[:80]})"
                ) from None
            problems = ["it was not a workspace"]
            opened.workspace = ws.Workspace.default()
        if problems:
            _keep(opened, own, "; ".join(problems))
    handle, busy = _lock(path)
    opened._lock = handle
    if busy is not None and opened.read_only is None:
        opened.read_only = busy
        opened.notices.append(f"the workspace {_where(path)} is opened read-only: {busy}; edits here are not saved")
    return opened


def _without_state_dir(exc: UnusableDir) -> WorkspaceFile:
    """The seed workspace, read-only: the state directory it would be saved in cannot be used."""
    why = str(exc)
    notice = f"{why}: the app runs read-only, nothing is saved"
    return WorkspaceFile(ws.Workspace.default(), exc.path / ws.WORKSPACE_FILE, read_only=why, notices=[notice])


def _keep(opened: WorkspaceFile, own: bool, why: str) -> None:
    """Keep what the app could not take as it is: a copy aside of its own file, else read-only."""
    path = opened.path
    if own:
        backup = path.with_name(f"{path.name}.{_stamp()}.bak")
        try:
            shutil.copy2(path, backup)
            os.chmod(backup, 0o600)
        except OSError as exc:
            opened.read_only = f"{why}, and no copy could be kept ({exc.strerror})"
        else:
            opened.notices.append(
                f"the workspace {_where(path)} had to be changed ({inert_line(why)}): "
                f"the original is kept as {_where(backup)}"
            )
            return
    else:
        opened.read_only = why
    opened.notices.append(
        f"the workspace {_where(path)} is opened read-only ({inert_line(why)}): "
        "edits here are not saved; quitting offers to save a copy"
    )
