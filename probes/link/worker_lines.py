"""The worker's stdout as messages: one JSON line each, decoded and validated by the protocol
(``probes.link.protocol.decode``); a line that is no valid event goes to the worker's last words,
and the time of the last line heard is kept, from which a silence counts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from probes.link.protocol import Event, ProtocolError, decode
from probes.link.safe_text import inert_line
from probes.link.worker_exit import LastWords

REFUSED_LINE_CHARS = 500
"""The most of a refused line kept for the worker's last words."""


class WorkerLines:
    """Reads a worker's stdout line by line; each valid event goes to ``on_event``."""

    def __init__(self, on_event: Callable[[Event], None], on_refused: Callable[[str], None]) -> None:
        """``on_refused``: why a line meant as a message (a JSON object: a number out of bounds, a
        field of the wrong type) was refused, in one line; the link goes on."""
        self._on_event = on_event
        self._on_refused = on_refused
        self.last_heard = 0.0
        """When the worker last sent a line, or when a silence starts to count (``heard``)."""

    def heard(self) -> None:
        """Count a silence from now (a start, a request sent: an idle worker says nothing)."""
        self.last_heard = time.monotonic()

    async def read(self, stdout: asyncio.StreamReader, last_words: LastWords) -> None:
        """Read until the worker's stdout ends; a line over the stream's limit is skipped."""
        while True:
            try:
                line = await stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue
            if not line:
                return
            self.heard()
            text = line.decode("utf-8", "replace")
            try:
                event = decode(text)
            except ProtocolError as exc:
                last_words.lines.append(text[:REFUSED_LINE_CHARS].rstrip())
                if text.lstrip().startswith("{"):
                    self._on_refused(f"a line from the worker was refused: {inert_line(str(exc))}")
                continue
            if not isinstance(event, Event):  # a worker sends events only: anything else is noise
                last_words.lines.append(text.rstrip())
                continue
            self._on_event(event)
