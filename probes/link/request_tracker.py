"""A worker client's requests: their ids, each one's events on a queue of its own, the one in
flight (requests are served one at a time), and the deadline of its cancel."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable

from probes.link.protocol import (
    ChainErrorInfo,
    Event,
    Heartbeat,
    InfoRequest,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WarmupRequest,
)

Request = ProfileRequest | InfoRequest | WarmupRequest


class WorkerEnded:
    """Put on each request's queue when the worker process ends."""

    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode


class RequestTracker:
    """Routes each event to its request's queue and follows the request in flight to its end."""

    def __init__(self, cancel_ack_s: float) -> None:
        self.cancel_ack_s = cancel_ack_s
        self._ids = itertools.count(1)
        self._queues: dict[str, asyncio.Queue[Event | WorkerEnded]] = {}
        self.in_flight: Request | None = None
        """Sent to the worker, its RequestDone not seen yet (its consumer may have gone)."""
        self.idle = asyncio.Event()
        """Set while nothing is in flight."""
        self.cancel_deadline: float | None = None
        self._importing = False
        """The request in flight is importing the compiler: a cancel waits for the import's end."""
        self._cancelled_unsent: set[str] = set()

    def new_id(self) -> str:
        return f"r{next(self._ids)}"

    def forget_in_flight(self) -> None:
        """A new worker process has nothing in flight."""
        self.in_flight = None
        self.idle.set()

    def sent(self, request: Request) -> asyncio.Queue[Event | WorkerEnded]:
        """``request`` is in flight: the queue its events come on."""
        queue: asyncio.Queue[Event | WorkerEnded] = asyncio.Queue()
        self._queues[request.id] = queue
        self.in_flight, self.cancel_deadline, self._importing = request, None, False
        self.idle.clear()
        return queue

    def unread(self, request_id: str) -> None:
        """Nobody reads ``request_id``'s events any more."""
        self._queues.pop(request_id, None)

    def unattended(self) -> bool:
        """Nothing in flight, or only a request nobody reads any more."""
        return self.in_flight is None or self.in_flight.id not in self._queues

    def deliver(self, event: Event) -> None:
        """An event from the worker, to its request's queue (dropped if nobody reads it)."""
        request_id = getattr(event, "id", "") or ""
        in_flight = self.in_flight is not None and request_id == self.in_flight.id
        if in_flight:
            self._track_import(event)
        if isinstance(event, RequestDone) and in_flight:
            self.in_flight = None
            self.idle.set()
        queue = self._queues.get(request_id)
        if queue is not None:
            queue.put_nowait(event)

    def refuse(self, why: str) -> None:
        """A line meant for the request in flight was refused: it fails, in one line."""
        request_id = self.in_flight.id if self.in_flight is not None else ""
        queue = self._queues.get(request_id)
        if queue is not None:
            queue.put_nowait(RequestFailed(request_id, ChainErrorInfo("worker", why)))

    def worker_ended(self, returncode: int | None) -> None:
        self.idle.set()
        for queue in self._queues.values():
            queue.put_nowait(WorkerEnded(returncode))

    def cancel(self, request_id: str) -> bool:
        """Whether ``request_id`` is in flight (the worker is to be told; its deadline runs, not
        for a warm-up, which may be importing); one not sent yet is answered as cancelled when it
        comes (``take_cancelled``)."""
        in_flight = self.in_flight
        if in_flight is None or in_flight.id != request_id:
            self._cancelled_unsent.add(request_id)
            return False
        if not isinstance(in_flight, WarmupRequest) and self.cancel_deadline is None:
            self.cancel_deadline = time.monotonic() + self.cancel_ack_s
        return True

    def take_cancelled(self, request_id: str) -> bool:
        """Whether ``request_id`` was cancelled before it was sent (said once)."""
        cancelled = request_id in self._cancelled_unsent
        self._cancelled_unsent.discard(request_id)
        return cancelled

    def cancel_at(self) -> float:
        """When the request in flight, if cancelled, is overdue."""
        return float("inf") if self._importing or self.cancel_deadline is None else self.cancel_deadline

    async def next_event(
        self, queue: asyncio.Queue[Event | WorkerEnded], silent_at: Callable[[], float]
    ) -> Event | WorkerEnded | str:
        """The next event for a request, or why there is none: "silent" (nothing from the worker
        by ``silent_at()``) or "cancel" (overdue)."""
        while True:
            now = time.monotonic()
            silent, cancel_at = silent_at(), self.cancel_at()
            if now >= cancel_at:
                return "cancel"
            if now >= silent:
                return "silent"
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns an event that came
            # with a cancel of its caller, and the cancel is lost.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(silent, cancel_at) - now):
                    return await queue.get()

    async def ends_in_time(self, silent_at: Callable[[], float]) -> bool:
        """Wait for the request in flight to end: False when the worker goes silent (nothing by
        ``silent_at()``) or the request's cancel is overdue first."""
        while not self.idle.is_set():
            limit = min(silent_at(), self.cancel_at())
            if time.monotonic() >= limit:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.idle.wait(), limit - time.monotonic())
        return True

    def _track_import(self, event: Event) -> None:
        """While the worker imports the compiler, which it cannot stop halfway and stops right
        after, a cancel's deadline does not run; it runs again from the import's end."""
        if isinstance(event, Heartbeat):
            return
        importing = isinstance(event, Progress) and event.stage == "importing"
        if self._importing and not importing and self.cancel_deadline is not None:
            self.cancel_deadline = max(self.cancel_deadline, time.monotonic() + self.cancel_ack_s)
        self._importing = importing
