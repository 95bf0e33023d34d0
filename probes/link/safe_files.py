"""Read a file the user named: a regular file of bounded size, or one plain line saying why not.

A path on the command line or in the app may name anything: a FIFO (reading it waits for a writer
forever), ``/dev/zero`` (it never ends), a socket, a directory, or a file of gigabytes. So the path
is checked with ``stat`` before it is opened (following symlinks, as a user expects); it is opened
with ``O_NONBLOCK``, so that a FIFO put there in between cannot block the open, and checked again on
the descriptor, which is what is read; and it is read with a bound of ``limit + 1`` bytes, so that
a file still growing is refused too. Nothing here blocks or reads past the limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from probes.link.safe_text import inert_line

MIB = 1 << 20
REPORT_LIMIT_BYTES = 16 * MIB
"""Largest report (``--from``, ``--baseline``, ``--replay``) read: a report of many sizes and modes
is a few hundred KiB."""
WORKSPACE_LIMIT_BYTES = 16 * MIB
"""Largest workspace read: a workspace of hundreds of chains is well under 1 MiB."""
_CHUNK = 1 * MIB
_NOT_REGULAR: tuple[tuple[int, str], ...] = (
    (stat.S_IFIFO, "a FIFO (named pipe)"),
    (stat.S_IFCHR, "a character device"),
    (stat.S_IFBLK, "a block device"),
    (stat.S_IFSOCK, "a socket"),
    (stat.S_IFDIR, "a directory"),
)


class UnreadableFile(OSError):
    """A user's file that is not read, with why in one plain line (``str()``). An OSError, so
    ``except OSError`` handles it; ``missing`` tells a file that is not there from the rest."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errno = code

    def __str__(self) -> str:
        return self.message

    @property
    def missing(self) -> bool:
        return self.errno == errno.ENOENT


def _size(count: int) -> str:
    if count >= MIB:
        return f"{count / MIB:,.1f} MiB"
    return f"{count:,} bytes"


def _check(mode: int, size: int, limit_bytes: int, named: str) -> None:
    """Refuse anything but a regular file of at most ``limit_bytes``."""
    if not stat.S_ISREG(mode):
        kind = next((what for file_type, what in _NOT_REGULAR if stat.S_IFMT(mode) == file_type), "not a file")
        raise UnreadableFile(f"{named} is {kind}, not a regular file")
    if size > limit_bytes:
        raise UnreadableFile(f"{named} is {_size(size)}: over the {_size(limit_bytes)} limit")


def _os_error(exc: OSError, named: str) -> UnreadableFile:
    if exc.errno == errno.ENOENT:
        return UnreadableFile(f"{named}: no such file", exc.errno)
    return UnreadableFile(f"{named} cannot be read: {exc.strerror or exc}", exc.errno)


def _read_at_most(fd: int, count: int, named: str) -> bytes:
    chunks: list[bytes] = []
    left = count
    try:
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise _os_error(exc, named) from None
    return b"".join(chunks)


def read_user_bytes(path: str | Path, limit_bytes: int, what: str) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``limit_bytes`` of
    them; UnreadableFile naming ``what`` (``"the report"``) and the path otherwise."""
    named = f"{what} {inert_line(str(path))}"
    try:
        found = os.stat(path)
    except OSError as exc:
        raise _os_error(exc, named) from None
    _check(found.st_mode, found.st_size, limit_bytes, named)  # a FIFO or a huge file is never opened
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _os_error(exc, named) from None
    try:
        opened = os.fstat(fd)
        _check(opened.st_mode, opened.st_size, limit_bytes, named)  # what was opened, if it changed
        data = _read_at_most(fd, limit_bytes + 1, named)
    finally:
        os.close(fd)
    if len(data) > limit_bytes:
        raise UnreadableFile(f"{named} grew past the {_size(limit_bytes)} limit while it was read")
    return data


def read_user_file(path: str | Path, limit_bytes: int, what: str) -> str:
    """The UTF-8 text of the regular file at ``path``: see read_user_bytes."""
    data = read_user_bytes(path, limit_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(
            f"{what} {inert_line(str(path))} is not UTF-8 text (at byte offset {exc.start:,})"
        ) from None
