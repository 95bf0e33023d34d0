"""The bridge between the app and its workers: a request's stream, whatever stops it, lets the
workers go on to the next request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from textual.app import App

from probes.link.protocol import RequestDone, WarmupRequest
from tui.bridge import WorkerBridge


class HeldWorkers:
    """Stands in for the WorkerPair: a request holds the workers (as the real one holds its
    worker's lock) from its first step until its stream is closed."""

    state = "ready"

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.released = asyncio.Event()

    async def request(self, request: WarmupRequest) -> AsyncIterator[RequestDone]:
        try:
            self.waiting.set()
            try:
                await asyncio.Event().wait()  # the worker's answer, which the cancel interrupts
            except asyncio.CancelledError:
                pass  # it had arrived with the cancel: Python 3.11's wait_for then returns it
            yield RequestDone(request.id)  # the last event: the stream ends when it is taken
        finally:
            self.released.set()

    async def cancel(self, request_id: str) -> None:
        return None


async def test_a_warm_up_stopped_as_its_answer_arrives_releases_the_workers() -> None:
    """Stopping a warm-up's stream (an edit's eager run pre-empts it) just as the worker's answer
    was read used to lose that answer inside the stream and leave the request open: the worker's
    lock was held for good and every later request waited (the first edit of a session hung)."""
    app = App()
    async with app.run_test():
        bridge = WorkerBridge(app, ["unused"], compile_worker=False)
        workers = HeldWorkers()
        bridge.workers = workers  # type: ignore[assignment]
        bridge.send(WarmupRequest("w1"))
        await asyncio.wait_for(workers.waiting.wait(), 5)
        bridge.cancel("w1")
        await asyncio.wait_for(workers.released.wait(), 5)
