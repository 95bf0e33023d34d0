"""The client side of the worker protocol (asyncio): start, talk to, and restart a probe worker.

The UI uses this; so do the fault tests. It never imports torch. The worker sends a heartbeat
every second while it runs a request, from a thread that needs the GIL; the client restarts a
worker that

- crashes or exits (after a CUDA error that poisoned its context, say),
- sends nothing for ``silence_s`` (stuck in one long C call, such as arithmetic on a huge Python
  integer; a compile, even max-autotune, releases the GIL and keeps beating), or
- does not end a cancelled request within ``cancel_ack_s``,

and the request it was serving ends with one plain line that names the cause, never the restart
that follows (the states say whether it worked). A silence is the chain's ("stuck") only where it
can be: the local worker, in a profile request, not stopped; otherwise it is the link's (a
``--worker-cmd`` such as ssh, a stopped process, a request with no chain to be stuck in). An idle
worker that ends (the kernel's OOM killer, a kill from outside, a dropped ssh link) is replaced at
once (state "lost", then a restart), so the next edit does not wait for a start.

States, as ``on_state`` hears them: "starting", "ready", "busy", "lost" (why; a restart follows),
"restarting", "failed" (this start failed, why: a later ``start()`` may work) and "stopped" (given
up, why; or closed, no why). A request while the last start failed fails at once: the caller
decides when to try again (the app backs off). The failure text is the attempt's own: each
process has its own last words. ``close()`` kills the worker and its children at once: a worker
has nothing to finish, and a quit must not wait for it.
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
from pathlib import Path
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

WorkerState = Literal["stopped", "starting", "ready", "busy", "restarting", "lost", "failed"]
Request = ProfileRequest | InfoRequest | WarmupRequest

REFUSED_LINE_CHARS = 500
"""The most of a refused line kept for the worker's last words."""
DEFAULT_SILENCE_S = 15.0
"""Longest a running request may go without any message (heartbeats come every second)."""
CANCEL_ACK_S = 3.0
"""Longest a cancelled request may take to end before its worker is restarted."""
STARTUP_TIMEOUT_S = 120.0
MAX_REPLACEMENTS = 3
"""Idle workers replaced in a row, with no request served in between, before the client gives up
(a worker that dies as soon as it is ready would otherwise be restarted forever)."""
STDERR_LINES = 40
SSH_FAILED = 255
"""ssh's own exit status when the connection failed (the remote command's status otherwise)."""
NOT_RUNNABLE = (126, 127)
"""A shell's (and ssh's remote shell's) exit status for a command it could not run or find."""
LAST_WORDS_WAIT_S = 1.0
"""How long the reason for a death waits for the dead process's last lines on stderr."""


class StartFailed(RuntimeError):
    """A start that did not give a ready worker; ``permanent``: trying again cannot help."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


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
        """One inert line (they may quote anything), a line said again in a row said once."""
        unique = [line for i, line in enumerate(self.lines) if i == 0 or line != self.lines[i - 1]]
        return inert_line(" | ".join(unique[-lines:]))


SSH_WORDS = ("ssh:", "closed by remote host", "client_loop:", "kex_exchange_identification")
"""What ssh says when its connection fails or drops."""


def _connection_failed(returncode: int | None, command: list[str], last_words: str) -> bool:
    """ssh's "the connection failed": its exit status 255, from ssh (by name, or by its words)."""
    ssh = any(Path(word).name == "ssh" for word in command) or any(words in last_words for words in SSH_WORDS)
    return returncode == SSH_FAILED and ssh


def _exit_cause(returncode: int | None, command: list[str], last_words: str, *, serving: bool = True) -> str:
    """Why a worker's process ended, from its exit status, in words (``serving``: it had started,
    so the worker's own exit statuses mean what the worker says they mean)."""
    if _connection_failed(returncode, command, last_words):
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


def _death_message(returncode: int | None, command: list[str], last_words: str) -> str:
    cause = _exit_cause(returncode, command, last_words)
    return cause + (f" (last words: {last_words[:200]})" if last_words else "")


def _process_stopped(pid: int) -> bool:
    """The process is stopped (SIGSTOP, a debugger): it runs nothing until continued. Linux's
    /proc says so; elsewhere this is never known, and False."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in ("T", "t")


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
        self.local = command is None
        """The local Python worker (not a ``--worker-cmd`` of the user's, such as ssh)."""
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
        self._last_words = _LastWords()  # this process's own: never an earlier one's
        early = self._early
        if early is not None:
            self._process = await early.adopt()
            self._early = None  # only now: a kill_now() meanwhile still finds it
        else:
            try:
                self._process = await asyncio.create_subprocess_exec(
                    *self.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    env=worker_environment(self.command, self.env),
                    limit=STREAM_LIMIT,
                    # its own process group: killed with its children, never by the terminal's ^C
                    start_new_session=True,
                )
            except OSError as exc:
                self._process = None
                raise self._start_failed(
                    f"the worker command could not be run: {inert_line(str(exc))}", permanent=True
                ) from None
        self._last_heard = time.monotonic()
        self._reader = asyncio.create_task(self._read_stdout(self._process))
        assert self._process.stderr is not None
        self._stderr_task = asyncio.create_task(self._last_words.read(self._process.stderr))
        try:
            await asyncio.wait_for(self._ready_event.wait(), self.startup_timeout_s)
        except TimeoutError:
            await self._kill()
            raise self._start_failed(f"the worker did not start within {self.startup_timeout_s:.0f} s") from None
        if self.ready is None:
            await self._last_words_read()
            words = self._last_words.tail()
            returncode = self._process.returncode
            cause = _exit_cause(returncode, self.command, words, serving=False)
            raise self._start_failed(f"{cause}: {words or 'no output'}", permanent=returncode in NOT_RUNNABLE)
        if self.ready.protocol != PROTOCOL_VERSION:
            theirs = self.ready.protocol
            await self._kill()
            self.ready = None
            raise self._start_failed(
                f"the worker speaks protocol {theirs}, this app {PROTOCOL_VERSION}: "
                "install the same kernel-tui version where the worker runs",
                permanent=True,
            )
        self._set_state("ready")
        if self._reader.done():  # it ended before it was marked ready: the reader passed it by
            self._replace_if_idle(self._process)
        return self.ready

    def _start_failed(self, message: str, *, permanent: bool = False) -> StartFailed:
        """Say that this start failed ("failed", or "stopped" when trying again cannot help), and
        the exception that says it to the caller."""
        self._set_state("stopped" if permanent else "failed", message)
        return StartFailed(message, permanent=permanent)

    async def _last_words_read(self) -> None:
        """Wait (briefly) for the ended process's last lines on stderr, which may come after its end."""
        task = self._stderr_task
        if task is not None and not task.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), LAST_WORDS_WAIT_S)

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
            text = line.decode("utf-8", "replace")
            try:
                event = decode(text)
            except ProtocolError as exc:
                self._refused(text, exc)
                continue
            if not isinstance(event, Event):  # a worker sends events only: anything else is noise
                self._last_words.lines.append(text.rstrip())
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

    def _refused(self, text: str, exc: ProtocolError) -> None:
        """A line that is not a valid event: kept for the worker's last words; one meant as a
        message (a JSON object: a number out of bounds, a field of the wrong type) also fails the
        request in flight, in one line, and the link goes on."""
        self._last_words.lines.append(text[:REFUSED_LINE_CHARS].rstrip())
        request_id = self._in_flight.id if self._in_flight is not None else ""
        queue = self._queues.get(request_id)
        if queue is not None and text.lstrip().startswith("{"):
            why = f"a line from the worker was refused: {inert_line(str(exc))}"
            queue.put_nowait(RequestFailed(request_id, ChainErrorInfo("worker", why)))

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
        """A ready worker with nothing in flight, or only a request nobody reads any more, ended:
        replace it (a worker still starting is ``start()``'s to judge, a busy one the request's)."""
        idle = self._in_flight is None or self._in_flight.id not in self._queues
        if self.state == "ready" and idle and not self._closing and process is self._process:
            self._replacement = asyncio.create_task(self._replace(process))

    async def _replace(self, process: asyncio.subprocess.Process | PipedProcess) -> None:
        """An idle worker ended: start the next one now (a request that comes meanwhile waits for it)."""
        async with self._lock:
            if self._closing or process is not self._process:
                return  # closed, or a request has restarted it already
            returncode = process.returncode
            await self._last_words_read()
            death = _death_message(returncode, self.command, self._last_words.tail(1))
            if self._replacements >= MAX_REPLACEMENTS:
                self._set_state("stopped", f"{death}; it ends each time it is started, so it is left stopped")
                return
            self._replacements += 1
            await self._restart_quietly(death, lost=death)

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
                kind, message = self._silence(in_flight)
                silent = time.monotonic() >= self._last_heard + self.silence_s and kind == "link"
                await self._restart_quietly(
                    f"it did not stop within {self.cancel_ack_s:.0f} s of a cancel", lost=message if silent else ""
                )
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
            if self.state in ("failed", "stopped") and self._state_detail:
                # The last start failed (or was given up): the caller decides when to try again.
                message = f"the worker is not running: {self._state_detail}"
                yield RequestFailed(request.id, ChainErrorInfo("link", message))
                yield RequestDone(request.id)
                return
            if self._process is None or self._process.returncode is not None:
                try:
                    await (self.restart("the worker had stopped") if self._process else self.start())
                except StartFailed as exc:
                    yield RequestFailed(request.id, ChainErrorInfo("link", str(exc)))
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
                        kind, message = self._silence(request)
                        if kind == "link":
                            self._set_state("lost", message)
                        yield RequestFailed(request.id, ChainErrorInfo(kind, message))
                        yield RequestDone(request.id)
                        await self._restart_quietly("it went silent")
                        return
                    if isinstance(event, _Died):
                        await self._last_words_read()
                        words = self._last_words.tail(1)
                        message = _death_message(event.returncode, self.command, words)
                        link = _connection_failed(event.returncode, self.command, words)
                        if link and not self._closing:
                            self._set_state("lost", message)
                        if not (stuck_reported and event.returncode == EXIT_STUCK) and not self._closing:
                            yield RequestFailed(request.id, ChainErrorInfo("link" if link else "worker", message))
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
                message = f"lost the link to the worker: {inert_line(str(exc))}"
                self._set_state("lost", message)
                yield RequestFailed(request.id, ChainErrorInfo("link", message))
                yield RequestDone(request.id)
                await self._restart_quietly("its pipe broke")
            finally:
                self._queues.pop(request.id, None)
                if self.state == "busy":
                    self._set_state("ready")

    def _silence(self, request: Request) -> tuple[Literal["link", "stuck"], str]:
        """Why a request got nothing for ``silence_s``, in words: the chain's ("stuck") only
        where it can be, the link's otherwise."""
        quiet = f"nothing for {self.silence_s:.0f} s"
        process = self._process
        if process is not None and _process_stopped(process.pid):
            what = "the worker" if self.local else "the link to the worker"
            return "link", f"{what} was stopped (SIGSTOP) and sent {quiet}"
        if not self.local:
            return "link", f"the link to the worker stopped answering ({quiet})"
        if not isinstance(request, ProfileRequest):
            return "link", f"the worker stopped answering ({quiet})"
        return "stuck", (
            f"the worker sent nothing for {self.silence_s:.0f} s (stuck in one long operation, "
            "such as arithmetic on a huge Python integer): stopped"
        )

    async def _restart_quietly(self, reason: str, *, lost: str = "") -> None:
        """Start a new worker in place of one that is gone (``lost``: why, said first); a start that
        fails says so itself ("failed" or "stopped")."""
        if self._closing:
            return
        if lost:
            self._set_state("lost", lost)
        with contextlib.suppress(StartFailed):
            await self.restart(reason)

    async def info(self) -> WorkerReady | None:
        """The worker's devices with fresh free memory and measured peak bandwidth."""
        found = None
        async for event in self.request(InfoRequest(self.new_id())):
            if isinstance(event, WorkerReady):
                found = event
        if found is not None:
            self.ready = found
        return found
