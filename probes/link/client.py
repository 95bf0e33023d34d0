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
import time
from collections.abc import AsyncGenerator, Callable
from typing import Literal

from probes.link.protocol import (
    EXIT_STUCK,
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    Event,
    Heartbeat,
    InfoRequest,
    ProfileRequest,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
)
from probes.link.request_tracker import Request, RequestTracker, WorkerEnded
from probes.link.running_worker import NOT_RUNNING, RunningWorker
from probes.link.safe_text import inert_line
from probes.link.worker_lines import WorkerLines
from probes.link.worker_process import EarlyWorker, worker_command

WorkerState = Literal["stopped", "starting", "ready", "busy", "restarting", "lost", "failed"]

DEFAULT_SILENCE_S = 15.0
"""Longest a running request may go without any message (heartbeats come every second)."""
CANCEL_ACK_S = 3.0
"""Longest a cancelled request may take to end before its worker is restarted."""
CANCEL_OVERDUE = "it did not stop within {:.0f} s of a cancel"
"""Why a worker is restarted whose request outlived its cancel's grace (``cancel_ack_s``)."""
STARTUP_TIMEOUT_S = 120.0
MAX_REPLACEMENTS = 3
"""Idle workers replaced in a row, with no request served in between, before the client gives up
(a worker that dies as soon as it is ready would otherwise be restarted forever)."""


class StartFailed(RuntimeError):
    """A start that did not give a ready worker; ``permanent``: trying again cannot help."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


def _silence_cause(
    request: Request, worker: RunningWorker | None, local: bool, silence_s: float
) -> tuple[Literal["link", "stuck"], str]:
    """Why a request got nothing for ``silence_s``, in words: the chain's ("stuck") only
    where it can be, the link's otherwise."""
    quiet = f"nothing for {silence_s:.0f} s"
    if worker is not None and worker.stopped():
        what = "the worker" if local else "the link to the worker"
        return "link", f"{what} was stopped (SIGSTOP) and sent {quiet}"
    if not local:
        return "link", f"the link to the worker stopped answering ({quiet})"
    if not isinstance(request, ProfileRequest):
        return "link", f"the worker stopped answering ({quiet})"
    return "stuck", (
        f"the worker sent nothing for {silence_s:.0f} s (stuck in one long operation, "
        "such as arithmetic on a huge Python integer): stopped"
    )


def _protocol_mismatch(theirs: int) -> str:
    return (
        f"the worker speaks protocol {theirs}, this app {PROTOCOL_VERSION}: "
        "install the same kernel-tui version where the worker runs"
    )


class WorkerClient:
    """One worker process, restarted on demand; requests are served one at a time. Its parts: the
    process (``RunningWorker``), its lines (``WorkerLines``), the requests (``RequestTracker``)."""

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
        self._worker: RunningWorker | None = None
        self._early = early
        self._requests = RequestTracker(cancel_ack_s)
        self._lines = WorkerLines(self._on_event, self._requests.refuse)
        self._reader: asyncio.Task[None] | None = None
        self._ready_event = asyncio.Event()
        self._lock = asyncio.Lock()
        self._closing = False
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
        return self._worker.pid if self._worker else None

    def new_id(self) -> str:
        return self._requests.new_id()

    async def start(self) -> WorkerReady:
        """Start the worker and wait until it has imported torch and listed its devices."""
        self._closing = False
        self._set_state("starting", "importing torch")
        self._ready_event = asyncio.Event()
        self.ready = None
        self._requests.forget_in_flight()
        if self._early is not None:
            self._worker = RunningWorker(await self._early.adopt(), self.command)
            self._early = None  # only now: a kill_now() meanwhile still finds it
        else:
            try:
                self._worker = await RunningWorker.spawn(self.command, self.env)
            except OSError as exc:
                self._worker = None
                message = f"the worker command could not be run: {inert_line(str(exc))}"
                raise self._start_failed(message, permanent=True) from None
        worker = self._worker
        self._lines.heard()
        self._reader = asyncio.create_task(self._read(worker))
        try:
            await asyncio.wait_for(self._ready_event.wait(), self.startup_timeout_s)
        except TimeoutError:
            await worker.end(self._reader)
            raise self._start_failed(f"the worker did not start within {self.startup_timeout_s:.0f} s") from None
        if self.ready is None:
            message, permanent = await worker.start_failure()
            raise self._start_failed(message, permanent=permanent)
        if self.ready.protocol != PROTOCOL_VERSION:
            message = _protocol_mismatch(self.ready.protocol)
            await worker.end(self._reader)
            self.ready = None
            raise self._start_failed(message, permanent=True)
        self._set_state("ready")
        if self._reader.done():  # it ended before it was marked ready: the reader passed it by
            self._replace_if_idle(worker)
        return self.ready

    def _start_failed(self, message: str, *, permanent: bool = False) -> StartFailed:
        """Say that this start failed ("failed", or "stopped" when trying again cannot help), and
        the exception that says it to the caller."""
        self._set_state("stopped" if permanent else "failed", message)
        return StartFailed(message, permanent=permanent)

    async def _read(self, worker: RunningWorker) -> None:
        """Read the worker's lines until it ends; then every request waiting on it hears so."""
        await self._lines.read(worker.stdout, worker.last_words)
        returncode = await worker.wait()
        self._ready_event.set()
        self._requests.worker_ended(returncode)
        self._replace_if_idle(worker)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, WorkerReady) and event.id is None:
            self.ready = event
            self._ready_event.set()
        else:
            self._requests.deliver(event)

    def _replace_if_idle(self, worker: RunningWorker) -> None:
        """A ready worker with nothing in flight, or only a request nobody reads any more, ended:
        replace it (a worker still starting is ``start()``'s to judge, a busy one the request's)."""
        if self.state == "ready" and self._requests.unattended() and not self._closing and worker is self._worker:
            self._replacement = asyncio.create_task(self._replace(worker))

    async def _replace(self, worker: RunningWorker) -> None:
        """An idle worker ended: start the next one now (a request that comes meanwhile waits for it)."""
        async with self._lock:
            if self._closing or worker is not self._worker:
                return  # closed, or a request has restarted it already
            death, _ = await worker.death(worker.returncode)
            if self._replacements >= MAX_REPLACEMENTS:
                self._set_state("stopped", f"{death}; it ends each time it is started, so it is left stopped")
                return
            self._replacements += 1
            await self._restart_quietly(death, lost=death)

    async def restart(self, reason: str) -> WorkerReady:
        self._set_state("restarting", reason)
        if self._worker is not None:
            await self._worker.end(self._reader)
        self.restarts += 1
        return await self.start()

    def kill_now(self) -> None:
        """Kill the worker and its children now, without waiting for them to end; a remote one
        (``--worker-cmd 'ssh ...'``) is told to shut down first, in case its link outlives the
        local process. Nothing restarts it after this."""
        self._closing = True
        if self._early is not None:  # not adopted yet (or being adopted)
            self._early.kill()
        if self._worker is not None:
            self._worker.kill_now()

    async def close(self) -> None:
        """Kill the worker and its children now (``kill_now``), and wait for them to end."""
        self.kill_now()
        self._early = None
        if self._worker is None:
            return
        await self._worker.end(self._reader)
        self._worker = None
        self._set_state("stopped")

    # -- requests ----------------------------------------------------------------------------

    async def cancel(self, request_id: str) -> None:
        """Stop ``request_id``: the worker ends it at its next safe point, or it is stopped; a
        worker that has not ended it within ``cancel_ack_s`` is restarted (not for a warm-up,
        which may be importing). A request not sent yet is answered as cancelled without being sent."""
        if self._requests.cancel(request_id) and self._worker is not None:
            with contextlib.suppress(ConnectionError, OSError):
                await self._worker.send(CancelRequest(request_id))

    async def kill_worker(self) -> None:
        """Kill the worker process outright, whatever it is doing; the next request starts another."""
        if self._worker is not None:
            self._worker.kill()

    async def warm_up(self, device: str | None = None) -> None:
        """Have the worker import and warm up Inductor; any other request pre-empts it."""
        async for _ in self.request(WarmupRequest(self.new_id(), device)):
            pass

    async def _settle(self) -> None:
        """Before a new request: one still running (its consumer went away) is cancelled, and its
        worker restarted if it does not end within cancel_ack_s (a warm-up: while it beats)."""
        in_flight = self._requests.in_flight
        if in_flight is None:
            return
        await self.cancel(in_flight.id)
        if await self._requests.ends_in_time(self._silent_at):
            return
        kind, message = _silence_cause(in_flight, self._worker, self.local, self.silence_s)
        silent = time.monotonic() >= self._silent_at() and kind == "link"
        await self._restart_quietly(CANCEL_OVERDUE.format(self.cancel_ack_s), lost=message if silent else "")

    def _silent_at(self) -> float:
        """When the worker, if it says nothing more, has been silent too long."""
        return self._lines.last_heard + self.silence_s

    async def request(self, request: Request) -> AsyncGenerator[Event]:
        """Send ``request`` and yield its events (not heartbeats); the last one is always a RequestDone.

        Requests queue behind each other; a warm-up in flight gives way at once. If the worker
        dies, goes silent, or does not stop after a cancel, this yields a one-line RequestFailed
        (none after a cancel) and a RequestDone, and restarts the worker.
        """
        if isinstance(warm_up := self._requests.in_flight, WarmupRequest) and not isinstance(request, WarmupRequest):
            await self.cancel(warm_up.id)
        async with self._lock:
            if self._requests.take_cancelled(request.id):
                yield RequestDone(request.id, cancelled=True)
                return
            if self.state in ("failed", "stopped") and self._state_detail:
                # The last start failed (or was given up): the caller decides when to try again.
                message = f"the worker is not running: {self._state_detail}"
                yield RequestFailed(request.id, ChainErrorInfo("link", message))
                yield RequestDone(request.id)
                return
            if self._worker is None or self._worker.returncode is not None:
                try:
                    await (self.restart("the worker had stopped") if self._worker else self.start())
                except StartFailed as exc:
                    yield RequestFailed(request.id, ChainErrorInfo("link", str(exc)))
                    yield RequestDone(request.id)
                    return
            await self._settle()
            self._replacements = 0
            queue = self._requests.sent(request)
            self._set_state("busy", getattr(request, "chain", ""))
            stuck_reported = False
            worker = self._worker
            try:
                if worker is None:
                    raise ConnectionError(NOT_RUNNING)
                await worker.send(request)
                self._lines.heard()  # silence counts from here: an idle worker says nothing
                while True:
                    event = await self._requests.next_event(queue, self._silent_at)
                    if event == "cancel":
                        yield RequestDone(request.id, cancelled=True)
                        await self._restart_quietly(CANCEL_OVERDUE.format(self.cancel_ack_s))
                        return
                    if isinstance(event, str):  # "silent"
                        kind, message = _silence_cause(request, self._worker, self.local, self.silence_s)
                        if kind == "link":
                            self._set_state("lost", message)
                        yield RequestFailed(request.id, ChainErrorInfo(kind, message))
                        yield RequestDone(request.id)
                        await self._restart_quietly("it went silent")
                        return
                    if isinstance(event, WorkerEnded):
                        message, link = await worker.death(event.returncode)
                        if link and not self._closing:
                            self._set_state("lost", message)
                        if not (stuck_reported and event.returncode == EXIT_STUCK) and not self._closing:
                            yield RequestFailed(request.id, ChainErrorInfo("link" if link else "worker", message))
                        yield RequestDone(request.id, cancelled=self._requests.cancel_deadline is not None)
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
                self._requests.unread(request.id)
                if self.state == "busy":
                    self._set_state("ready")

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
