"""The worker's process: how it is started, and starting it before there is an event loop.

The app starts its worker as the very first thing it does, before it imports Textual (a second or
more on a slow host): torch imports in the worker while the app imports and paints. There is no
event loop yet then, so ``EarlyWorker`` starts the process with ``subprocess``, and
``WorkerClient.start`` later adopts it (``EarlyWorker.adopt``) as if it had started it itself.
This module imports asyncio only once there is a loop to adopt it on: everything the app imports
before it starts its workers delays their torch import as much.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

from probes.link.bytecode_cache import with_bytecode_cache

if TYPE_CHECKING:
    import asyncio

COMPILE_WORKER_ENV = "KERNEL_TUI_COMPILE_WORKER"
GPU_DRIVER_FILES = ("/dev/nvidiactl", "/dev/kfd")

STREAM_LIMIT = 64 * 1024 * 1024
"""The longest line read from the worker (a result with generated kernel sources is long)."""


def python_module(module: str, *args: str) -> list[str]:
    """``python -P -m module args``: this interpreter, run with a safe import path (``-P``), so
    that nothing of the folder it starts in is imported: a project's own ``numpy.py`` or
    ``probes.py`` never shadows what the worker or torch imports, and never runs."""
    return [sys.executable, "-P", "-m", module, *args]


def worker_command(command: list[str] | str | None) -> list[str]:
    """The command line: a list as given, a string split as a shell would, or the local worker."""
    return shlex.split(command) if isinstance(command, str) else (command or python_module("probes.engine.worker"))


def worker_environment(command: list[str], extra: dict[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: the app's, with ``extra``; a worker that runs this interpreter
    also gets a bytecode cache where torch has no bytecode (probes.link.bytecode_cache)."""
    env = {**os.environ, **(extra or {})}
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return with_bytecode_cache(env) if command[:1] == [sys.executable] else env


def compile_worker_wanted(command: list[str] | str | None) -> bool:
    """Whether a compile worker pays here: for the local worker on a machine with a GPU driver
    (told without importing torch). On the CPU a compile and a measurement share the cores the
    measurement times, so they take turns anyway. ``KERNEL_TUI_COMPILE_WORKER=1`` or ``0`` decides
    instead; a worker command of the user's own (``--worker-cmd``, ``--replay``) gets none unless asked."""
    wanted = os.environ.get(COMPILE_WORKER_ENV, "").strip()
    if wanted in ("0", "1"):
        return wanted == "1"
    return command is None and any(os.path.exists(path) for path in GPU_DRIVER_FILES)


class PipedProcess:
    """What ``RunningWorker`` uses of ``asyncio.subprocess.Process``, for a process started by
    ``subprocess.Popen`` before the event loop existed."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        import asyncio  # see the module's docstring

        while (code := self._popen.poll()) is None:
            await asyncio.sleep(0.01)
        return code

    def kill(self) -> None:
        self._popen.kill()


class EarlyWorker:
    """A worker process started before the event loop; adopted once by ``WorkerClient.start``."""

    def __init__(self, command: list[str] | str | None, env: dict[str, str] | None = None) -> None:
        argv = worker_command(command)
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=worker_environment(argv, env),
            start_new_session=True,  # its own process group: killed with its children, never by the terminal's ^C
        )

    async def adopt(self) -> PipedProcess:
        """Its pipes as asyncio streams, on the running loop."""
        import asyncio  # see the module's docstring

        loop = asyncio.get_running_loop()
        popen = self.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        readers = []
        for pipe in (popen.stdout, popen.stderr):
            reader = asyncio.StreamReader(limit=STREAM_LIMIT)
            await loop.connect_read_pipe(functools.partial(asyncio.StreamReaderProtocol, reader), pipe)
            readers.append(reader)
        # asyncio has no public way to make a StreamWriter for a pipe: this is what its
        # create_subprocess_exec builds for a child's stdin.
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, popen.stdin)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return PipedProcess(popen, writer, readers[0], readers[1])

    def kill(self) -> None:
        """End it (and its children) when the app that started it does not start after all."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
