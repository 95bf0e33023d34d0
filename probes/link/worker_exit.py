"""Why a worker's process ended, in words: its exit status read as the worker, a shell or ssh
means it, and its last lines on stderr."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from probes.link.protocol import EXIT_DEVICE_POISONED, EXIT_STUCK
from probes.link.safe_text import inert_line

if TYPE_CHECKING:
    import asyncio

STDERR_LINES = 40
SSH_FAILED = 255
"""ssh's own exit status when the connection failed (the remote command's status otherwise)."""
NOT_RUNNABLE = (126, 127)
"""A shell's (and ssh's remote shell's) exit status for a command it could not run or find."""
SSH_WORDS = ("ssh:", "closed by remote host", "client_loop:", "kex_exchange_identification")
"""What ssh says when its connection fails or drops."""


class LastWords:
    """The worker's last lines on stderr, to say why it died."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=STDERR_LINES)

    async def read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip()
            if text and not text.startswith("USDT:"):
                self.lines.append(text)

    def tail(self, lines: int = 3) -> str:
        """One inert line (they may quote anything), a line said again in a row said once."""
        unique = [line for i, line in enumerate(self.lines) if i == 0 or line != self.lines[i - 1]]
        return inert_line(" | ".join(unique[-lines:]))


def connection_failed(returncode: int | None, command: list[str], last_words: str) -> bool:
    """ssh's "the connection failed": its exit status 255, from ssh (by name, or by its words)."""
    ssh = any(Path(word).name == "ssh" for word in command) or any(words in last_words for words in SSH_WORDS)
    return returncode == SSH_FAILED and ssh


def exit_cause(returncode: int | None, command: list[str], last_words: str, *, serving: bool = True) -> str:
    """Why a worker's process ended, from its exit status, in words (``serving``: it had started,
    so the worker's own exit statuses mean what the worker says they mean)."""
    if connection_failed(returncode, command, last_words):
        return f"the connection failed (ssh exit {SSH_FAILED})"
    if serving and returncode == EXIT_DEVICE_POISONED:
        return "the GPU context was poisoned by a CUDA error"
    if serving and returncode == EXIT_STUCK:
        return "the chain was stuck in plain Python and was stopped"
    if returncode in NOT_RUNNABLE:
        return f"the worker command could not be run (exit {returncode})"
    if returncode is not None and returncode < 0:
        return f"the worker was killed by signal {-returncode}"
    return f"the worker exited (code {returncode})"


def death_message(returncode: int | None, command: list[str], last_words: str) -> str:
    cause = exit_cause(returncode, command, last_words)
    return cause + (f" (last words: {last_words[:200]})" if last_words else "")
