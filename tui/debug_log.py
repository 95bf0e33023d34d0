"""Errors are logged, never swallowed: to Textual's log (``textual console``) and to ``debug.log`` in
the user's state directory, which the message on screen points to."""

from __future__ import annotations

import datetime
import os
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from probes.link.state_files import user_state_dir

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

DEBUG_FILE = "debug.log"
MAX_BYTES = 1_000_000
"""The file is started afresh past this size."""


def debug_path() -> Path:
    return user_state_dir() / DEBUG_FILE


def log_error(node: MessagePump | None, what: str, exc: BaseException | None = None) -> Path | None:
    """Log ``what`` (and the traceback of ``exc``); returns the debug file, or None if it cannot be written."""
    detail = "".join(traceback.format_exception(exc)) if exc is not None else ""
    if node is not None:
        node.log.error(what, detail)
    try:
        path = debug_path()
        mode = "w" if path.exists() and path.stat().st_size > MAX_BYTES else "a"
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if mode == "a" else os.O_TRUNC), 0o600
        )
        with os.fdopen(fd, mode, encoding="utf-8") as handle:
            stamp = datetime.datetime.now().isoformat(timespec="seconds")
            handle.write(f"{stamp} {what}\n{detail}")
    except OSError:
        return None
    return path
