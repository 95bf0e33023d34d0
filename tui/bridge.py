"""One bridge to the probe worker for every screen: the client's lifecycle, and each request's events
streamed into Textual messages.

The main app, the demo and the compare screen all send requests through a ``WorkerBridge``; each
event of a request arrives as a ``WorkerEvent`` message (Progress, MeasurementResult, RequestFailed,
RequestDone: the last one always comes, in plain words, even when the worker is lost), and every
change of the worker's state as a ``WorkerStateChanged``. Where a GPU measures, compiles run in a
second worker (``probes.link.worker_pair``); its troubles arrive as ``CompileWorkerStateChanged``.
Quitting kills the workers at once (``kill``) and waits for them to be gone at most ``close_wait_s``
after the kill (``close``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from textual.message import Message

from probes.link.client import StartFailed, WorkerState
from probes.link.protocol import (
    ChainErrorInfo,
    Event,
    ProfileRequest,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
)
from probes.link.worker_pair import WorkerPair
from probes.link.worker_process import EarlyWorker, compile_worker_wanted
from tui.debug_log import log_error

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump
    from textual.worker import Worker

CLOSE_WAIT_S = 0.25
"""How long quitting waits for the killed worker to be gone (its kernel-side teardown; a CUDA
context takes longest), so that no worker outlives the prompt's return."""
WARMUP_SILENCE_S = 2.0
"""A warm-up that has not said a word by then is not understood by this worker: it is let go."""


class FromEntry(Message):
    """A message of one device entry's workers (``tui.fleet``): ``entry`` is its index, 0 for the
    first (the only one unless ``--device`` lists several)."""

    entry = 0


class WorkerStateChanged(FromEntry):
    """The worker is starting, ready, busy, lost (why), restarting, failed to start (why: another
    start may work) or stopped (given up, why; or closed)."""

    def __init__(self, state: WorkerState | str, detail: str, ready: WorkerReady | None) -> None:
        super().__init__()
        self.state = state
        self.detail = detail
        self.ready = ready


class CompileWorkerStateChanged(FromEntry):
    """The compile worker is starting, ready, busy, lost, stopped, or failed to start (compiles
    then run in the eager worker)."""

    def __init__(self, state: WorkerState | str, detail: str) -> None:
        super().__init__()
        self.state = state
        self.detail = detail


class WorkerEvent(FromEntry):
    """One event of a request sent through the bridge."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event
        self.request_id: str = getattr(event, "id", "") or ""


class WorkerBridge:
    """Owns a ``WorkerPair``; runs its requests as Textual workers of ``host``. Its messages go to
    ``listener`` (by default the host; the app's main screen listens to the app's bridge)."""

    def __init__(
        self,
        host: App[Any],
        command: list[str] | str | None = None,
        *,
        early: EarlyWorker | None = None,
        early_compiler: EarlyWorker | None = None,
        compile_worker: bool | None = None,
        listener: MessagePump | None = None,
        close_wait_s: float = CLOSE_WAIT_S,
        warmup_silence_s: float = WARMUP_SILENCE_S,
        entry: int = 0,
    ) -> None:
        """``early``, ``early_compiler``: the workers, already started with ``command`` as the
        program launched. ``compile_worker``: None decides by ``compile_worker_wanted``.
        ``entry``: the device entry its messages are of (``FromEntry``)."""
        self.host = host
        self.entry = entry
        self.listener: MessagePump = listener or host
        self.workers = WorkerPair(
            command,
            compile_worker=compile_worker_wanted(command) if compile_worker is None else compile_worker,
            on_state=self._state_changed,
            on_compiler_state=self._compiler_state_changed,
            early=early,
            early_compiler=early_compiler,
        )
        self.close_wait_s = close_wait_s
        self.warmup_silence_s = warmup_silence_s
        self.closing = False
        self._closed = False
        self._killed_at = 0.0
        self._streams: dict[str, Worker[None]] = {}
        self._warmups: set[str] = set()
        self._starter: Worker[None] | None = None

    @property
    def ready(self) -> WorkerReady | None:
        return self.workers.ready

    def compiles_apart(self) -> bool:
        return self.workers.compiles_apart()

    def starting(self) -> bool:
        return self._starter is not None and self._starter.is_running

    def start(self) -> None:
        """Start (or start again) the worker; its state arrives as WorkerStateChanged messages."""
        if self.starting() or self.closing:
            return
        self._starter = self.host.run_worker(self._start(), group="worker-start", exit_on_error=False)

    async def _start(self) -> None:
        try:
            await self.workers.start()
        except StartFailed as exc:  # the worker's state said so ("failed" or "stopped")
            log_error(self.host, f"the worker did not start: {exc}")
        except Exception as exc:  # any other start failure is a message too, never a crash
            log_error(self.host, "the worker did not start", exc)
            self._post(self.listener, WorkerStateChanged("failed", str(exc) or exc.__class__.__name__, None))

    def send(self, request: ProfileRequest | WarmupRequest, reply_to: MessagePump | None = None) -> None:
        """Send ``request``; its events go to ``reply_to`` (default: the listener) as WorkerEvent."""
        target = reply_to or self.listener
        if isinstance(request, WarmupRequest):
            self._warmups.add(request.id)
        self._streams[request.id] = self.host.run_worker(
            self._stream(request, target), group="requests", exit_on_error=False
        )

    async def _stream(self, request: ProfileRequest | WarmupRequest, target: MessagePump) -> None:
        try:
            # Closed whatever ends this stream: a stream stopped while its events hold the worker's
            # lock (one yielded, not yet taken) would hold it for good, and every later request wait.
            async with contextlib.aclosing(self.workers.request(request)) as events:
                first = True
                while True:
                    try:
                        # asyncio.timeout, not wait_for: wait_for reads the next event in a task of
                        # its own, and drops an event that task got as the stream was stopped.
                        async with asyncio.timeout(
                            self.warmup_silence_s if first and request.id in self._warmups else None
                        ):
                            event = await anext(events)
                    except StopAsyncIteration:
                        return
                    except TimeoutError:
                        self._post(target, WorkerEvent(RequestDone(request.id, cancelled=True)))
                        return
                    first = False
                    self._post(target, WorkerEvent(event))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the request ends in plain words, never a traceback
            log_error(self.host, f"request {request.id} lost the worker", exc)
            self._post(
                target, WorkerEvent(RequestFailed(request.id, ChainErrorInfo("worker", f"lost the worker: {exc}")))
            )
            self._post(target, WorkerEvent(RequestDone(request.id)))
        finally:
            self._streams.pop(request.id, None)
            self._warmups.discard(request.id)

    def cancel(self, request_id: str) -> None:
        """Ask the worker to stop ``request_id``; a warm-up is also let go at once, so that the real
        request behind it is sent without waiting."""
        if request_id in self._warmups:
            stream = self._streams.get(request_id)
            if stream is not None:
                stream.cancel()
        if self.workers.state != "stopped":
            self.host.run_worker(self.workers.cancel(request_id), group="cancel", exit_on_error=False)

    def kill(self) -> None:
        """Kill the workers now, whatever they are doing; ``close()`` then waits for them to be gone.
        Quitting kills first, so that the workers die while the app saves and takes itself down."""
        if self.closing:
            return
        self.closing = True
        self._killed_at = time.monotonic()
        for stream in [*self._streams.values(), self._starter]:
            if stream is not None:
                stream.cancel()  # before the client closes: a stream that saw the worker end would restart it
        self.workers.kill_now()

    async def close(self) -> None:
        """Kill the workers (unless ``kill()`` has) and wait for them to be gone, at most
        ``close_wait_s`` after the kill. Never raises."""
        if self._closed:
            return
        self._closed = True
        self.kill()
        closing = asyncio.ensure_future(self.workers.close())
        left_s = max(0.0, self._killed_at + self.close_wait_s - time.monotonic())
        done, _ = await asyncio.wait({closing}, timeout=left_s)
        if not done:
            closing.cancel()
        elif not closing.cancelled() and closing.exception() is not None:
            log_error(self.host, "closing the worker", closing.exception())

    def _state_changed(self, state: WorkerState, detail: str) -> None:
        if not self.closing:
            ready = self.workers.ready if state == "ready" else None
            self._post(self.listener, WorkerStateChanged(state, detail, ready))

    def _compiler_state_changed(self, state: str, detail: str) -> None:
        if not self.closing:
            self._post(self.listener, CompileWorkerStateChanged(state, detail))

    def _post(self, target: MessagePump, message: Message) -> None:
        if isinstance(message, FromEntry):
            message.entry = self.entry
        target.post_message(message)  # a screen closed meanwhile drops it: nobody waits for it any more
