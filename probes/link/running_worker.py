"""One running worker process: started in its own process group (or adopted, already started, from
an ``EarlyWorker``), written to, its stderr kept as its last words, and killed with every process
it started; and why it ended, in words."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from probes.link.protocol import ShutdownRequest, encode
from probes.link.worker_exit import NOT_RUNNABLE, LastWords, connection_failed, death_message, exit_cause
from probes.link.worker_process import STREAM_LIMIT, PipedProcess, worker_environment

LAST_WORDS_WAIT_S = 1.0
"""How long the reason for a death waits for the dead process's last lines on stderr."""
NOT_RUNNING = "the worker is not running"


class RunningWorker:
    """A worker's process and its pipes; its stderr is read from the start, into ``last_words``."""

    def __init__(self, process: asyncio.subprocess.Process | PipedProcess, command: list[str]) -> None:
        self.process = process
        self.command = command
        self.last_words = LastWords()
        """This process's own: never an earlier one's (each process has its own last words)."""
        assert process.stderr is not None
        self._stderr_task = asyncio.create_task(self.last_words.read(process.stderr))

    @classmethod
    async def spawn(cls, command: list[str], env: dict[str, str] | None) -> RunningWorker:
        """Start ``command`` with the worker's environment; OSError when it cannot be run."""
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=worker_environment(command, env),
            limit=STREAM_LIMIT,
            # its own process group: killed with its children, never by the terminal's ^C
            start_new_session=True,
        )
        return cls(process, command)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    async def wait(self) -> int:
        return await self.process.wait()

    async def send(self, message: object) -> None:
        """One message, one line; ConnectionError when the process has ended."""
        stdin = self.process.stdin
        if stdin is None or self.process.returncode is not None:
            raise ConnectionError(NOT_RUNNING)
        stdin.write((encode(message) + "\n").encode())
        await stdin.drain()

    async def last_words_read(self) -> None:
        """Wait (briefly) for the ended process's last lines on stderr, which may come after its end."""
        task = self._stderr_task
        if not task.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), LAST_WORDS_WAIT_S)

    async def death(self, returncode: int | None) -> tuple[str, bool]:
        """Why it ended (``returncode``), in one line with its last words, and whether that was its
        connection failing (ssh)."""
        await self.last_words_read()
        words = self.last_words.tail(1)
        return death_message(returncode, self.command, words), connection_failed(returncode, self.command, words)

    async def start_failure(self) -> tuple[str, bool]:
        """Why it ended before it was ready, in words, and whether trying again cannot help."""
        await self.last_words_read()
        words = self.last_words.tail()
        returncode = self.returncode
        cause = exit_cause(returncode, self.command, words, serving=False)
        return f"{cause}: {words or 'no output'}", returncode in NOT_RUNNABLE

    def stopped(self) -> bool:
        """The process is stopped (SIGSTOP, a debugger): it runs nothing until continued. Linux's
        /proc says so; elsewhere this is never known, and False."""
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state in ("T", "t")

    def kill(self) -> None:
        """Kill the worker process alone, whatever it is doing."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    def kill_now(self) -> None:
        """Kill the worker and its children now, without waiting for them to end; a remote one
        (``--worker-cmd 'ssh ...'``) is told to shut down first, in case its link outlives the
        local process."""
        process = self.process
        if process.returncode is not None:
            return
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.write((encode(ShutdownRequest()) + "\n").encode())
                process.stdin.close()
        self._kill_group()

    async def end(self, stdout_reader: asyncio.Task[None] | None) -> None:
        """Kill the worker and every process it started, and wait (only briefly) for it and for the
        readers of its pipes (``stdout_reader``, and its stderr's) to end."""
        process = self.process
        if process.returncode is None:
            self._kill_group()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 5)
        for task in (stdout_reader, self._stderr_task):
            if task is not None and not task.done():
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(task, 1)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
