"""Two workers on one device: one measures eager rows, the other compiles.

A compile takes a third of a second or more and is not stopped inside a kernel's build: with one
worker, the next edit's eager rows wait behind it, so compiles could only start once the text had
been stable for a while. With a second worker for the compiled modes, an edit's compile starts
beside its eager measurement, and the next edit's eager rows never wait for a compile.
``probes.engine.device_lock`` keeps the two workers' measurements from overlapping on the device.

``WorkerPair`` has the surface of ``WorkerClient`` that a UI needs (``start``, ``request``,
``cancel``, ``close``, ``state``, ``ready``): a request of eager and compiled modes goes to both
workers under its one id and comes back as one stream with one ``RequestDone``. Without a compile
worker (none wanted, or it could not start) everything goes to the one worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Callable

from probes.link import fast_paths
from probes.link.client import StartFailed, WorkerClient, WorkerState
from probes.link.protocol import (
    ChainErrorInfo,
    Event,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
)
from probes.link.request_tracker import Request
from probes.link.worker_process import EarlyWorker


class WorkerPair:
    """An eager worker and, when ``compile_worker``, a compile worker, used as one."""

    def __init__(
        self,
        command: list[str] | str | None = None,
        *,
        compile_worker: bool,
        on_state: Callable[[WorkerState, str], None] | None = None,
        on_compiler_state: Callable[[str, str], None] | None = None,
        early: EarlyWorker | None = None,
        early_compiler: EarlyWorker | None = None,
    ) -> None:
        self.primary = WorkerClient(command, on_state=on_state, early=early)
        self.compiler = (
            WorkerClient(command, on_state=on_compiler_state, early=early_compiler) if compile_worker else None
        )
        if self.compiler is None and early_compiler is not None:
            early_compiler.kill()
        self._on_compiler_state = on_compiler_state
        self.compiler_failure: str | None = None
        """Why the compile worker could not start (its requests then go to the eager worker)."""
        self._compiler_start: asyncio.Task[None] | None = None
        self._routes: dict[str, list[WorkerClient]] = {}
        self._cancelled: set[str] = set()
        """Requests cancelled while they run: a part still waiting for its worker is not sent."""
        self._roles_decided = asyncio.Event()
        """Clear while the first start has not decided which worker measures eager rows."""
        self._roles_decided.set()

    @property
    def state(self) -> WorkerState:
        return self.primary.state

    @property
    def ready(self) -> WorkerReady | None:
        return self.primary.ready

    def compiles_apart(self) -> bool:
        """Compiles run in a worker of their own (so they never hold up eager rows)."""
        return (
            self.compiler is not None
            and self.compiler_failure is None
            and self.compiler.state not in ("stopped", "failed")
        )

    async def start(self) -> WorkerReady:
        """Start both (the compile worker only if it has not started yet, or failed to); wait for the
        eager worker only (the compile worker's start goes on). The first start starts both at
        once, and the first of them to be ready measures the eager rows."""
        if self.compiler is not None and self._compiler_start is None:
            return await self._start_both(self.primary, self.compiler)
        if self.compiler is not None and (self.compiler_failure is not None or self.compiler.state == "failed"):
            self.compiler_failure = None
            self._compiler_start = asyncio.ensure_future(self._compiler_started(self.compiler.start()))
        return await self.primary.start()

    async def _start_both(self, eager: WorkerClient, compiler: WorkerClient) -> WorkerReady:
        """Two workers launched together import torch side by side, and either may be ready first
        (by a tenth of a second or more, in many launches): the app's first rows wait for the one
        that measures them, so that one is whichever is ready first (a fast path,
        ``probes.link.fast_paths``: without it the eager worker keeps its role)."""
        starts = {client: asyncio.ensure_future(client.start()) for client in (eager, compiler)}
        self._roles_decided.clear()
        try:
            await asyncio.wait(starts.values(), return_when=asyncio.FIRST_COMPLETED)
            swap = _started(starts[compiler]) and not _started(starts[eager])
            if swap and fast_paths.enabled("first_ready_worker"):
                self._swap_roles()
            assert self.compiler is not None
            self._compiler_start = asyncio.ensure_future(self._compiler_started(starts[self.compiler]))
        except asyncio.CancelledError:
            for start in starts.values():
                start.cancel()
            raise
        finally:
            self._roles_decided.set()
        return await starts[self.primary]

    def _swap_roles(self) -> None:
        """The compile worker measures eager rows from now on, and the eager worker compiles; each
        role's state callback follows its role and is told its worker's state."""
        assert self.compiler is not None
        self.primary, self.compiler = self.compiler, self.primary
        self.primary.on_state, self.compiler.on_state = self.compiler.on_state, self.primary.on_state
        self.primary.announce_state()
        self.compiler.announce_state()

    async def _compiler_started(self, start: Awaitable[WorkerReady]) -> None:
        try:
            await start
        except Exception as exc:
            self.compiler_failure = str(exc) or exc.__class__.__name__
            # A start that failed as such has said so through the worker's own state already.
            if self._on_compiler_state is not None and not isinstance(exc, StartFailed):
                self._on_compiler_state("failed", self.compiler_failure)

    def _parts(self, request: Request) -> list[tuple[WorkerClient, Request]]:
        """Which worker gets which part of ``request``."""
        if not self.compiles_apart():
            return [(self.primary, request)]
        assert self.compiler is not None
        if isinstance(request, WarmupRequest):
            return [(self.compiler, request)]
        split = _split(request)
        if split is not None:
            return [(self.primary, split[0]), (self.compiler, split[1])]
        if isinstance(request, ProfileRequest) and "eager" not in request.modes:
            return [(self.compiler, request)]
        return [(self.primary, request)]

    def _compiler_starting(self) -> bool:
        return self._compiler_start is not None and not self._compiler_start.done()

    async def _compiled_part_worker(self) -> WorkerClient:
        """The worker for a compiled part sent while the compile worker starts: that one once
        started, the eager worker if it could not start."""
        assert self._compiler_start is not None
        await asyncio.wait([self._compiler_start])  # not cancelled with this request: the start goes on
        return self.compiler if self.compiles_apart() and self.compiler is not None else self.primary

    async def request(self, request: Request) -> AsyncGenerator[Event]:
        """Send ``request`` (split between the workers) and yield its events; the last one is its
        one RequestDone (cancelled if either part was). While the compile worker starts, the eager
        part of a request goes at once and its compiled part waits for that start."""
        # The first worker's "ready" can reach the app, which then sends, before the start that
        # waits for it has decided the roles: sent then, a compiled part would go to a compile
        # worker still importing torch, and the client would count its silence from then.
        await self._roles_decided.wait()
        compiles = isinstance(request, WarmupRequest) or any(mode != "eager" for mode in getattr(request, "modes", []))
        split = _split(request) if self._compiler_starting() else None
        parts: list[tuple[WorkerClient | None, Request]]
        if split is not None:
            parts = [(self.primary, split[0]), (None, split[1])]
            self._routes[request.id] = [client for client in (self.primary, self.compiler) if client is not None]
        else:
            if compiles and self._compiler_start is not None:
                await asyncio.shield(self._compiler_start)  # a stream stopped meanwhile leaves the start be
            parts = list(self._parts(request))
            self._routes[request.id] = [client for client, _ in parts if client is not None]
        try:
            # The inner stream closed with this one (a consumer may stop at any event), at once, not
            # when the garbage collector finds it: until then it holds its worker's lock.
            only, part = parts[0]
            events: AsyncGenerator[Event]
            if len(parts) == 1 and only is not None:
                events = only.request(part)
            else:
                assert isinstance(request, ProfileRequest)  # only a profile request is split
                events = self._merged(request, parts)
            async with contextlib.aclosing(events):
                async for event in events:
                    yield event
        finally:
            self._routes.pop(request.id, None)
            self._cancelled.discard(request.id)

    async def _merged(
        self, request: ProfileRequest, parts: list[tuple[WorkerClient | None, Request]]
    ) -> AsyncGenerator[Event]:
        """The parts' events as one stream; a part without its worker yet (None) is sent once its
        worker has started, unless the request was cancelled meanwhile."""
        queue: asyncio.Queue[tuple[int, Event]] = asyncio.Queue()

        async def pump(index: int, client: WorkerClient | None, part: Request) -> None:
            try:
                if client is None:
                    client = await self._compiled_part_worker()
                    if request.id in self._cancelled:
                        queue.put_nowait((index, RequestDone(request.id, cancelled=True)))
                        return
                async with contextlib.aclosing(client.request(part)) as events:
                    async for event in events:
                        queue.put_nowait((index, event))
            except Exception as exc:
                queue.put_nowait(
                    (index, RequestFailed(request.id, ChainErrorInfo("worker", f"lost the worker: {exc}")))
                )
                queue.put_nowait((index, RequestDone(request.id)))

        pumps = [asyncio.ensure_future(pump(i, client, part)) for i, (client, part) in enumerate(parts)]
        steps = [0] * len(parts)
        total = len(request.sizes) * len(dict.fromkeys(request.modes))
        open_parts, cancelled = len(parts), False
        try:
            while open_parts:
                index, event = await queue.get()
                if isinstance(event, RequestDone):
                    open_parts -= 1
                    cancelled |= event.cancelled
                    continue
                if isinstance(event, Progress):
                    steps[index] = event.step
                    event = dataclasses.replace(event, step=sum(steps), total=total)
                yield event
            yield RequestDone(request.id, cancelled=cancelled)
        finally:
            for task in pumps:
                task.cancel()

    async def cancel(self, request_id: str) -> None:
        """Stop ``request_id`` in whichever worker has it (not sent yet: in both)."""
        if request_id in self._routes:
            self._cancelled.add(request_id)
        clients = self._routes.get(request_id) or [c for c in (self.primary, self.compiler) if c is not None]
        await asyncio.gather(*(client.cancel(request_id) for client in dict.fromkeys(clients)))

    def kill_now(self) -> None:
        """Kill both workers now, without waiting for them to end (``close`` waits)."""
        for client in (self.primary, self.compiler):
            if client is not None:
                client.kill_now()

    async def close(self) -> None:
        """Kill both workers now, and wait for them to end."""
        if self._compiler_start is not None and not self._compiler_start.done():
            self._compiler_start.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compiler_start
        await asyncio.gather(*(client.close() for client in (self.primary, self.compiler) if client is not None))


def _split(request: Request) -> tuple[ProfileRequest, ProfileRequest] | None:
    """A request of eager and compiled modes as its eager part and its compiled part."""
    if not isinstance(request, ProfileRequest):
        return None
    eager = [mode for mode in request.modes if mode == "eager"]
    compiled = [mode for mode in request.modes if mode != "eager"]
    if not eager or not compiled:
        return None
    return dataclasses.replace(request, modes=eager), dataclasses.replace(request, modes=compiled)


def _started(start: asyncio.Future[WorkerReady]) -> bool:
    return start.done() and not start.cancelled() and start.exception() is None
