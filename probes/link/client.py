"""The client side of the worker protocol (asyncio): start, talk to, and restart a probe worker.

The UI uses this; so do the fault tests. It never imports torch. The worker sends a heartbeat
every second while it runs a request, from a thread that needs the GIL; the client restarts a
worker that

- crashes or exits (after a CUDA error that poisoned its context, say),
- sends nothing for ``silence_s`` (stuck in one long C call, such as arithmetic on a huge Python
  integer; a compile, even max-autotune, releases the GIL and keeps beating), or
- does not end a cancelled request within ``cancel_ack_s``,

and the request it was serving ends with one plain line. An idle worker that ends (the kernel's
OOM killer, a kill from outside) is replaced at once (state "lost", then a restart), so the next
edit does not wait for a start. ``close()`` kills the worker and its
children at once: a worker has nothing to finish, and a quit must not wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable
from typing import Literal

from probes.link.protocol import (
    EXIT_DEVICE_POISONED,
    EXIT_STUCK,
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    Event,
    Heartbeat,
    InfoRequest,
    ProfileRequest,
    Progress,
    ProtocolError,
    RequestDone,
    RequestFailed,
    ShutdownRequest,
    WarmupRequest,
    WorkerReady,
    decode,
    encode,
)
from probes.link.safe_text import inert_line
from probes.link.worker_process import STREAM_LIMIT, EarlyWorker, PipedProcess, worker_command, worker_environment

WorkerState = Literal["stopped", "starting", "ready", "busy", "restarting", "lost"]
Request = ProfileRequest | InfoRequest | WarmupRequest

DEFAULT_SILENCE_S = 15.0
"""Longest a running request may go without any message (heartbeats come every second)."""
CANCEL_ACK_S = 3.0
"""Longest a cancelled request may take to end before its worker is restarted."""
STARTUP_TIMEOUT_S = 120.0
MAX_REPLACEMENTS = 3
"""Idle workers replaced in a row, with no request served in between, before the client gives up
(a worker that dies as soon as it is ready would otherwise be restarted forever)."""
STDERR_LINES = 40


class _Died:
    """Sentinel put on a request's queue when the worker process ends."""

    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode


class _LastWords:
    """The worker's last lines on stderr, to say why it died."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=STDERR_LINES)

    async def read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip()
            if text and not text.startswith("USDT:"):
                self.lines.append(text)

    def tail(self, lines: int = 3) -> str:
        """One inert line (they may quote anything)."""
        return inert_line(" | ".join(list(self.lines)[-lines:]))


def _death_message(returncode: int | None, last_words: str, *, restarting: bool = True) -> str:
    if returncode == EXIT_DEVICE_POISONED:
        what = "the GPU context was poisoned by a CUDA error"
    elif returncode == EXIT_STUCK:
        what = "the chain was stuck in plain Python and was stopped"
    elif returncode is not None and returncode < 0:
        what = f"the worker was killed by signal {-returncode}"
    else:
        what = f"the worker exited (code {returncode})"
    return (
        what
        + ("; it was restarted" if restarting else "")
        + (f" (last words: {last_words[:200]})" if last_words else "")
    )


class WorkerClient:
    """One worker process, restarted on demand; requests are served one at a time."""

    def __init__(
        self,
        command: list[str] | str | None = None,
        *,
        silence_s: float = DEFAULT_SILENCE_S,
        cancel_ack_s: float = CANCEL_ACK_S,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        env: dict[str, str] | None = None,
        on_state: Callable[[WorkerState, str], None] | None = None,
        early: EarlyWorker | None = None,
    ) -> None:
        """``early``: a worker process already started with this command (``EarlyWorker``); the
        first ``start()`` adopts it instead of starting one."""
        self.command = worker_command(command)
        self.silence_s = silence_s
        self.cancel_ack_s = cancel_ack_s
        self.startup_timeout_s = startup_timeout_s
        self.env = env
        self.on_state = on_state
        self.ready: WorkerReady | None = None
        self.state: WorkerState = "stopped"
        self._state_detail = ""
        self.restarts = 0
        self._process: asyncio.subprocess.Process | PipedProcess | None = None
        self._early = early
        self._reader: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._queues: dict[str, asyncio.Queue[Event | _Died]] = {}
        self._ready_event = asyncio.Event()
        self._last_words = _LastWords()
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._closing = False
        self._last_heard = 0.0
        self._in_flight: Request | None = None
        """Sent to the worker, its RequestDone not seen yet (its consumer may have gone)."""
        self._idle = asyncio.Event()
        self._cancel_deadline: float | None = None
        self._importing = False
        """The request in flight is importing the compiler: a cancel waits for the import's end."""
        self._cancelled_unsent: set[str] = set()
        self._replacement: asyncio.Task[None] | None = None
        """The replacement of an idle worker that died, while it runs (held: the loop keeps only a
        weak reference to a task)."""
        self._replacements = 0
        """Idle workers replaced since the last request was sent."""

    # -- lifecycle ---------------------------------------------------------------------------

    def _set_state(self, state: WorkerState, detail: str = "") -> None:
        self.state = state
        self._state_detail = detail
        self.announce_state()

    def announce_state(self) -> None:
        """Tell ``on_state`` the worker's state (again: a callback given a worker of another role)."""
        if self.on_state:
            self.on_state(self.state, self._state_detail)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def new_id(self) -> str:
        return f"r{next(self._ids)}"

    async def start(self) -> WorkerReady:
        """Start the worker and wait until it has imported torch and listed its devices."""
        self._closing = False
        self._set_state("starting", "importing torch")
        self._ready_event = asyncio.Event()
        self.ready = None
        self._in_flight = None
        self._idle.set()
        early = self._early
        if early is not None:
            self._process = await early.adopt()
            self._early = None  # only now: a kill_now() meanwhile still finds it
        else:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=worker_environment(self.command, self.env),
                limit=STREAM_LIMIT,
                start_new_session=True,  # its own process group: killed with its children, never by the terminal's ^C
            )
        self._last_heard = time.monotonic()
        self._reader = asyncio.create_task(self._read_stdout(self._process))
        assert self._process.stderr is not None
        self._stderr_task = asyncio.create_task(self._last_words.read(self._process.stderr))
        try:
            await asyncio.wait_for(self._ready_event.wait(), self.startup_timeout_s)
        except TimeoutError:
            await self._kill()
            raise RuntimeError(f"the worker did not start within {self.startup_timeout_s:.0f} s") from None
        if self.ready is None:
            detail = self._last_words.tail() or "no output"
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
        if self._reader.done():  # it ended before it was marked ready: the reader passed it by
            self._replace_if_idle(self._process)
        return self.ready

    async def _read_stdout(self, process: asyncio.subprocess.Process | PipedProcess) -> None:
        assert process.stdout is not None
        while True:
            try:
                line = await process.stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue
            if not line:
                break
            self._last_heard = time.monotonic()
            try:
                event = decode(line.decode("utf-8", "replace"))
            except ProtocolError:
                event = None
            if not isinstance(event, Event):  # a worker sends events only: anything else is noise
                self._last_words.lines.append(line.decode("utf-8", "replace").rstrip())
                continue
            if isinstance(event, WorkerReady) and event.id is None:
                self.ready = event
                self._ready_event.set()
                continue
            request_id = getattr(event, "id", "") or ""
            if self._in_flight is not None and request_id == self._in_flight.id:
                self._track_import(event)
            if isinstance(event, RequestDone) and self._in_flight is not None and request_id == self._in_flight.id:
                self._in_flight = None
                self._idle.set()
            queue = self._queues.get(request_id)
            if queue is not None:
                queue.put_nowait(event)
        returncode = await process.wait()
        self._ready_event.set()
        self._idle.set()
        for queue in self._queues.values():
            queue.put_nowait(_Died(returncode))
        self._replace_if_idle(process)

    def _track_import(self, event: Event) -> None:
        """While the worker imports the compiler, which it cannot stop halfway and stops right
        after, a cancel's deadline does not run; it runs again from the import's end."""
        if isinstance(event, Heartbeat):
            return
        importing = isinstance(event, Progress) and event.stage == "importing"
        if self._importing and not importing and self._cancel_deadline is not None:
            self._cancel_deadline = max(self._cancel_deadline, time.monotonic() + self.cancel_ack_s)
        self._importing = importing

    def _cancel_at(self) -> float:
        """When the request in flight, if cancelled, is overdue."""
        return float("inf") if self._importing or self._cancel_deadline is None else self._cancel_deadline

    def _replace_if_idle(self, process: asyncio.subprocess.Process | PipedProcess) -> None:
        """A ready worker with nothing in flight ended: replace it (a worker still starting is
        ``start()``'s to judge, a busy one the request's)."""
        if self.state == "ready" and self._in_flight is None and not self._closing and process is self._process:
            self._replacement = asyncio.create_task(self._replace(process))

    async def _replace(self, process: asyncio.subprocess.Process | PipedProcess) -> None:
        """An idle worker ended: start the next one now (a request that comes meanwhile waits for it)."""
        async with self._lock:
            if self._closing or process is not self._process:
                return  # closed, or a request has restarted it already
            returncode = process.returncode
            death = _death_message(returncode, self._last_words.tail(1), restarting=False)
            if self._replacements >= MAX_REPLACEMENTS:
                self._set_state("stopped", f"{death}; it ends each time it is started, so it is left stopped")
                return
            self._replacements += 1
            self._set_state("lost", death)
            await self._restart_quietly(death)

    async def _kill(self) -> None:
        """Kill the worker and every process it started; wait only briefly."""
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 5)
        for task in (self._reader, self._stderr_task):
            if task is not None and not task.done():
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(task, 1)

    async def restart(self, reason: str) -> WorkerReady:
        self._set_state("restarting", reason)
        await self._kill()
        self.restarts += 1
        return await self.start()

    def kill_now(self) -> None:
        """Kill the worker and its children now, without waiting for them to end; a remote one
        (``--worker-cmd 'ssh ...'``) is told to shut down first, in case its link outlives the
        local process. Nothing restarts it after this."""
        self._closing = True
        if self._early is not None:  # not adopted yet (or being adopted)
            self._early.kill()
        process = self._process
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.write((encode(ShutdownRequest()) + "\n").encode())
                process.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()

    async def close(self) -> None:
        """Kill the worker and its children now (``kill_now``), and wait for them to end."""
        self.kill_now()
        self._early = None
        process = self._process
        if process is None:
            return
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
        """Stop ``request_id``: the worker ends it at its next safe point, or it is stopped; a
        worker that has not ended it within ``cancel_ack_s`` is restarted (not for a warm-up,
        which may be importing). A request not sent yet is answered as cancelled without being sent."""
        in_flight = self._in_flight
        if in_flight is None or in_flight.id != request_id:
            self._cancelled_unsent.add(request_id)
            return
        if not isinstance(in_flight, WarmupRequest) and self._cancel_deadline is None:
            self._cancel_deadline = time.monotonic() + self.cancel_ack_s
        with contextlib.suppress(ConnectionError, OSError):
            await self._send(CancelRequest(request_id))

    async def kill_worker(self) -> None:
        """Kill the worker process outright, whatever it is doing; the next request starts another."""
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    async def warm_up(self, device: str | None = None) -> None:
        """Have the worker import and warm up Inductor; any other request pre-empts it."""
        async for _ in self.request(WarmupRequest(self.new_id(), device)):
            pass

    async def _settle(self) -> None:
        """Before a new request: one still running (its consumer went away) is cancelled, and its
        worker restarted if it does not end within cancel_ack_s (a warm-up: while it beats)."""
        in_flight = self._in_flight
        if in_flight is None:
            return
        await self.cancel(in_flight.id)
        while not self._idle.is_set():
            limit = min(self._last_heard + self.silence_s, self._cancel_at())
            if time.monotonic() >= limit:
                await self._restart_quietly(f"it did not stop within {self.cancel_ack_s:.0f} s of a cancel")
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), limit - time.monotonic())

    async def _next(self, queue: asyncio.Queue[Event | _Died]) -> Event | _Died | str:
        """The next event for a request, or why there is none: "silent" or "cancel" (overdue)."""
        while True:
            now = time.monotonic()
            silent_at = self._last_heard + self.silence_s
            cancel_at = self._cancel_at()
            if now >= cancel_at:
                return "cancel"
            if now >= silent_at:
                return "silent"
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns an event that came
            # with a cancel of its caller, and the cancel is lost.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(silent_at, cancel_at) - now):
                    return await queue.get()

    async def request(self, request: Request) -> AsyncGenerator[Event]:
        """Send ``request`` and yield its events (not heartbeats); the last one is always a RequestDone.

        Requests queue behind each other; a warm-up in flight gives way at once. If the worker
        dies, goes silent, or does not stop after a cancel, this yields a one-line RequestFailed
        (none after a cancel) and a RequestDone, and restarts the worker.
        """
        if isinstance(self._in_flight, WarmupRequest) and not isinstance(request, WarmupRequest):
            await self.cancel(self._in_flight.id)
        async with self._lock:
            if request.id in self._cancelled_unsent:
                self._cancelled_unsent.discard(request.id)
                yield RequestDone(request.id, cancelled=True)
                return
            if self._process is None or self._process.returncode is not None:
                try:
                    await (self.restart("the worker had stopped") if self._process else self.start())
                except RuntimeError as exc:
                    yield RequestFailed(request.id, ChainErrorInfo("worker", str(exc)))
                    yield RequestDone(request.id)
                    return
            await self._settle()
            self._replacements = 0
            queue: asyncio.Queue[Event | _Died] = asyncio.Queue()
            self._queues[request.id] = queue
            self._in_flight, self._cancel_deadline, self._importing = request, None, False
            self._idle.clear()
            self._set_state("busy", getattr(request, "chain", ""))
            stuck_reported = False
            try:
                await self._send(request)
                self._last_heard = time.monotonic()  # silence counts from here: an idle worker says nothing
                while True:
                    event = await self._next(queue)
                    if event == "cancel":
                        yield RequestDone(request.id, cancelled=True)
                        await self._restart_quietly(f"it did not stop within {self.cancel_ack_s:.0f} s of a cancel")
                        return
                    if isinstance(event, str):  # "silent"
                        message = (
                            f"the worker sent nothing for {self.silence_s:.0f} s (stuck in one long operation, "
                            "such as arithmetic on a huge Python integer): stopped, and the worker restarted"
                        )
                        yield RequestFailed(request.id, ChainErrorInfo("stuck", message))
                        yield RequestDone(request.id)
                        await self._restart_quietly("it went silent")
                        return
                    if isinstance(event, _Died):
                        if not (stuck_reported and event.returncode == EXIT_STUCK) and not self._closing:
                            message = _death_message(event.returncode, self._last_words.tail(1))
                            yield RequestFailed(request.id, ChainErrorInfo("worker", message))
                        yield RequestDone(request.id, cancelled=self._cancel_deadline is not None)
                        await self._restart_quietly("it exited")
                        return
                    if isinstance(event, Heartbeat):
                        continue
                    stuck_reported |= isinstance(event, RequestFailed) and event.error.kind == "stuck"
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

    async def _restart_quietly(self, reason: str) -> None:
        if self._closing:
            return
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
