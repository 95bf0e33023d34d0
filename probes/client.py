"""The client side of the worker protocol (asyncio): start, talk to, and restart a probe worker.

The UI uses this; so do the fault tests. It never imports torch. A worker that crashes, hangs
past its deadline, or exits after a CUDA error is restarted, and the request it was serving
ends with a ``RequestFailed(kind="worker")`` that says what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shlex
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Literal

from probes.protocol import (
    EXIT_DEVICE_POISONED,
    EXIT_STUCK,
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    Event,
    InfoRequest,
    ProfileRequest,
    ProtocolError,
    RequestDone,
    RequestFailed,
    ShutdownRequest,
    WorkerReady,
    decode,
    encode,
)

WorkerState = Literal["stopped", "starting", "ready", "busy", "restarting"]

DEFAULT_DEADLINE_S = 900.0
"""Longest a request may go without any message from the worker (a max-autotune compile is slow)."""
STARTUP_TIMEOUT_S = 120.0
STDERR_LINES = 40


def default_worker_command() -> list[str]:
    return [sys.executable, "-m", "probes.worker"]


class _Died:
    """Sentinel put on a request's queue when the worker process ends."""

    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode


class WorkerClient:
    """One worker process, restarted on demand; requests are served one at a time."""

    def __init__(
        self,
        command: list[str] | str | None = None,
        *,
        deadline_s: float = DEFAULT_DEADLINE_S,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        env: dict[str, str] | None = None,
        on_state: Callable[[WorkerState, str], None] | None = None,
    ) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else (command or default_worker_command())
        self.deadline_s = deadline_s
        self.startup_timeout_s = startup_timeout_s
        self.env = env
        self.on_state = on_state
        self.ready: WorkerReady | None = None
        self.state: WorkerState = "stopped"
        self.restarts = 0
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._queues: dict[str, asyncio.Queue[Event | _Died]] = {}
        self._ready_event = asyncio.Event()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)

    # -- lifecycle ---------------------------------------------------------------------------

    def _set_state(self, state: WorkerState, detail: str = "") -> None:
        self.state = state
        if self.on_state:
            self.on_state(state, detail)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def new_id(self) -> str:
        return f"r{next(self._ids)}"

    async def start(self) -> WorkerReady:
        """Start the worker and wait until it has imported torch and listed its devices."""
        self._set_state("starting", "importing torch")
        self._ready_event = asyncio.Event()
        self.ready = None
        env = {**os.environ, **(self.env or {})}
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=64 * 1024 * 1024,
        )
        self._reader = asyncio.create_task(self._read_stdout(self._process))
        self._stderr_task = asyncio.create_task(self._read_stderr(self._process))
        try:
            await asyncio.wait_for(self._ready_event.wait(), self.startup_timeout_s)
        except TimeoutError:
            await self._kill()
            raise RuntimeError(f"the worker did not start within {self.startup_timeout_s:.0f} s") from None
        if self.ready is None:
            detail = self.stderr_tail() or "no output"
            raise RuntimeError(f"the worker exited while starting: {detail}")
        if self.ready.protocol != PROTOCOL_VERSION:
            theirs = self.ready.protocol
            await self._kill()
            self.ready = None
            raise RuntimeError(
                f"the worker speaks protocol {theirs}, this app {PROTOCOL_VERSION}: "
                "install the same kernel-tui version where the worker runs"
            )
        self._set_state("ready")
        return self.ready

    async def _read_stdout(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while True:
            try:
                line = await process.stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue
            if not line:
                break
            try:
                event = decode(line.decode("utf-8", "replace"))
            except ProtocolError:
                self._stderr.append(line.decode("utf-8", "replace").rstrip())
                continue
            if isinstance(event, WorkerReady) and event.id is None:
                self.ready = event
                self._ready_event.set()
                continue
            queue = self._queues.get(getattr(event, "id", "") or "")
            if queue is not None:
                queue.put_nowait(event)
        returncode = await process.wait()
        self._ready_event.set()
        for queue in self._queues.values():
            queue.put_nowait(_Died(returncode))

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            if text and not text.startswith("USDT:"):
                self._stderr.append(text)

    def stderr_tail(self, lines: int = 3) -> str:
        return " | ".join(list(self._stderr)[-lines:])

    async def _kill(self) -> None:
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 10)
        for task in (self._reader, self._stderr_task):
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 5)

    async def restart(self, reason: str) -> WorkerReady:
        self._set_state("restarting", reason)
        await self._kill()
        self.restarts += 1
        return await self.start()

    async def close(self) -> None:
        """Ask the worker to shut down; kill it if it does not within a few seconds."""
        process = self._process
        if process is None:
            return
        if process.returncode is None and process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.write((encode(ShutdownRequest()) + "\n").encode())
                await process.stdin.drain()
                process.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 3)
        await self._kill()
        self._process = None
        self._set_state("stopped")

    # -- requests ----------------------------------------------------------------------------

    async def _send(self, message: object) -> None:
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            raise ConnectionError("the worker is not running")
        process.stdin.write((encode(message) + "\n").encode())
        await process.stdin.drain()

    async def cancel(self, request_id: str) -> None:
        """Ask the worker to stop ``request_id`` at its next safe point (no-op if it is gone)."""
        with contextlib.suppress(ConnectionError, OSError):
            await self._send(CancelRequest(request_id))

    async def kill_worker(self) -> None:
        """Kill the worker process outright (a request that will not stop; also used by tests)."""
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    async def request(self, request: ProfileRequest | InfoRequest) -> AsyncIterator[Event]:
        """Send ``request`` and yield its events; the last one is always a RequestDone.

        Requests queue behind each other. If the worker dies or goes silent past the deadline,
        this yields a RequestFailed(kind="worker") and a RequestDone, and restarts the worker.
        """
        async with self._lock:
            if self._process is None or self._process.returncode is not None:
                try:
                    await (self.restart("the worker had stopped") if self._process else self.start())
                except RuntimeError as exc:
                    yield RequestFailed(request.id, ChainErrorInfo("worker", str(exc)))
                    yield RequestDone(request.id)
                    return
            queue: asyncio.Queue[Event | _Died] = asyncio.Queue()
            self._queues[request.id] = queue
            self._set_state("busy", getattr(request, "chain", ""))
            try:
                await self._send(request)
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), self.deadline_s)
                    except TimeoutError:
                        message = f"the worker did not answer within {self.deadline_s:.0f} s and was restarted"
                        yield RequestFailed(request.id, ChainErrorInfo("worker", message))
                        yield RequestDone(request.id)
                        await self._restart_quietly("it hung")
                        return
                    if isinstance(event, _Died):
                        yield RequestFailed(request.id, ChainErrorInfo("worker", self._death_message(event.returncode)))
                        yield RequestDone(request.id)
                        await self._restart_quietly("it exited")
                        return
                    yield event
                    if isinstance(event, RequestDone):
                        return
            except (ConnectionError, OSError) as exc:
                yield RequestFailed(request.id, ChainErrorInfo("worker", f"lost the worker: {exc}; restarted"))
                yield RequestDone(request.id)
                await self._restart_quietly("its pipe broke")
            finally:
                self._queues.pop(request.id, None)
                if self.state == "busy":
                    self._set_state("ready")

    def _death_message(self, returncode: int | None) -> str:
        if returncode == EXIT_DEVICE_POISONED:
            what = "the GPU context was poisoned by a CUDA error"
        elif returncode == EXIT_STUCK:
            what = "the chain was stuck in plain Python and was stopped"
        elif returncode is not None and returncode < 0:
            what = f"the worker was killed by signal {-returncode}"
        else:
            what = f"the worker exited (code {returncode})"
        tail = self.stderr_tail(1)
        return f"{what}; it was restarted" + (f" (last words: {tail[:200]})" if tail else "")

    async def _restart_quietly(self, reason: str) -> None:
        try:
            await self.restart(reason)
        except RuntimeError as exc:
            self._set_state("stopped", str(exc))

    async def info(self) -> WorkerReady | None:
        """The worker's devices with fresh free memory and measured peak bandwidth."""
        found = None
        async for event in self.request(InfoRequest(self.new_id())):
            if isinstance(event, WorkerReady):
                found = event
        if found is not None:
            self.ready = found
        return found
