"""Two workers used as one: compiled modes go to the compile worker, a request of both comes back as
one stream with one RequestDone, and a compile worker that cannot start leaves the eager one to compile."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from probes.link.client import WorkerClient
from probes.link.protocol import MeasurementResult, ProfileRequest, Progress, RequestDone, WarmupRequest
from probes.link.worker_pair import WorkerPair
from probes.link.worker_process import COMPILE_WORKER_ENV, compile_worker_wanted

WAIT_S = 180
"""Upper bound on anything a test waits for (two torch imports and a cold compile on 2 cores)."""


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path))


def served_modes(client: WorkerClient) -> list[list[str]]:
    """Record the modes of every profile request ``client`` is sent."""
    seen: list[list[str]] = []
    request = client.request

    def spy(req):
        if isinstance(req, ProfileRequest):
            seen.append(list(req.modes))
        return request(req)

    client.request = spy  # type: ignore[method-assign]
    return seen


RUN_WORKER = "runpy.run_module('probes.engine.worker', run_name='__main__')"


def held_back(gate: Path, then: str = RUN_WORKER) -> list[str]:
    """A worker command that starts (runs ``then``) only once the test creates ``gate``."""
    return [
        sys.executable,
        "-c",
        f"import os, runpy, sys, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.01)\n{then}",
    ]


async def collect(pair: WorkerPair, request: ProfileRequest) -> list:
    async def gather() -> list:
        return [event async for event in pair.request(request)]

    return await asyncio.wait_for(gather(), WAIT_S)


async def test_eager_and_compiled_are_measured_by_their_own_workers_and_come_back_as_one_request() -> None:
    pair = WorkerPair(compile_worker=True)
    try:
        await asyncio.wait_for(pair.start(), WAIT_S)  # the first one ready is the eager worker
        eager_side, compile_side = served_modes(pair.primary), served_modes(pair.compiler)
        events = await collect(
            pair, ProfileRequest("p1", "(a + b).relu()", sizes=[1000, 4000], modes=["eager", "compiled"], device="cpu")
        )
        assert pair.compiles_apart()
        assert eager_side == [["eager"]] and compile_side == [["compiled"]]
        assert pair.primary.pid != pair.compiler.pid
        results = sorted((e.measurement.mode, e.measurement.size) for e in events if isinstance(e, MeasurementResult))
        assert results == [("compiled", 1000), ("compiled", 4000), ("eager", 1000), ("eager", 4000)]
        assert all(
            e.measurement.ran_compiled
            for e in events
            if isinstance(e, MeasurementResult) and e.measurement.mode == "compiled"
        )
        dones = [e for e in events if isinstance(e, RequestDone)]
        assert dones == [RequestDone("p1")] and events[-1] == dones[0]
        steps = [(e.step, e.total) for e in events if isinstance(e, Progress) and e.step]
        assert {total for _, total in steps} == {4} and max(step for step, _ in steps) == 4  # counted as one request
        assert [step for step, _ in steps] == sorted(step for step, _ in steps)
    finally:
        await pair.close()
    assert pair.primary.state == pair.compiler.state == "stopped"


async def test_a_compile_worker_that_cannot_start_leaves_the_compiles_to_the_eager_worker() -> None:
    failures: list[tuple[str, str]] = []
    pair = WorkerPair(compile_worker=True, on_compiler_state=lambda state, detail: failures.append((state, detail)))
    pair.compiler.command = [sys.executable, "-c", "import sys; print('no GPU for me', file=sys.stderr); sys.exit(3)"]
    eager_side = served_modes(pair.primary)
    try:
        await asyncio.wait_for(pair.start(), WAIT_S)
        events = await collect(
            pair, ProfileRequest("p2", "a * 2", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        )
        assert not pair.compiles_apart()
        assert eager_side == [["eager", "compiled"]]
        assert sorted(e.measurement.mode for e in events if isinstance(e, MeasurementResult)) == ["compiled", "eager"]
        assert ("failed", pair.compiler_failure) in failures and "no GPU for me" in pair.compiler_failure
    finally:
        await pair.close()


async def test_the_worker_ready_first_measures_the_eager_rows(tmp_path: Path) -> None:
    """Two workers launched together import torch side by side and either may be ready first; the
    first eager rows come from that one, not after the other's start."""
    states: list[tuple[str, str]] = []
    compiler_states: list[str] = []
    pair = WorkerPair(
        compile_worker=True,
        on_state=lambda state, detail: states.append((state, detail)),
        on_compiler_state=lambda state, detail: compiler_states.append(state),
    )
    slow, fast = pair.primary, pair.compiler
    assert fast is not None
    gate = tmp_path / "go"  # the held-back worker starts once the test lets it
    slow.command = held_back(gate)
    try:
        ready = await asyncio.wait_for(pair.start(), WAIT_S)
        assert pair.primary is fast and pair.compiler is slow and slow.state == "starting"
        assert ready is fast.ready and pair.ready is fast.ready
        assert (
            states[-1] == ("ready", "") and compiler_states[-1] == "starting"
        )  # each role's callback told its worker's state
        gate.touch()
        eager_side, compile_side = served_modes(fast), served_modes(slow)
        events = await collect(
            pair, ProfileRequest("p6", "a - 1", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        )
        assert eager_side == [["eager"]] and compile_side == [["compiled"]]  # the compile waited for its worker's start
        assert sorted(e.measurement.mode for e in events if isinstance(e, MeasurementResult)) == ["compiled", "eager"]
        assert compiler_states[-1] == "ready" and states[-1][0] == "ready"
    finally:
        await pair.close()


@contextlib.asynccontextmanager
async def compile_worker_held(gate: Path, then: str = RUN_WORKER) -> AsyncIterator[tuple[WorkerPair, WorkerClient]]:
    """A started pair whose compile worker is still starting until ``gate`` exists (then runs ``then``)."""
    pair = WorkerPair(compile_worker=True)
    held = pair.compiler
    assert held is not None
    held.command = held_back(gate, then)
    try:
        await asyncio.wait_for(pair.start(), WAIT_S)
        assert pair.compiler is held and held.state == "starting"
        yield pair, held
    finally:
        await pair.close()


async def request_opening_gate(
    pair: WorkerPair,
    request: ProfileRequest,
    gate: Path,
    at_first_rows: Callable[[MeasurementResult], Awaitable[None]] | None = None,
) -> list:
    """The request's events; at its first rows, ``at_first_rows`` runs and then ``gate`` opens."""
    events: list = []

    async def gather() -> None:
        async for event in pair.request(request):
            events.append(event)
            if isinstance(event, MeasurementResult) and not gate.exists():
                if at_first_rows is not None:
                    await at_first_rows(event)
                gate.touch()

    await asyncio.wait_for(gather(), WAIT_S)
    assert gate.exists(), "no rows came before the compile worker started"
    return events


async def test_eager_rows_do_not_wait_for_the_compile_workers_start(tmp_path: Path) -> None:
    """A launch's first request (eager and compiled) goes to the eager worker as soon as that one
    is ready: its eager rows come while the compile worker still starts, its compiled rows after."""
    gate = tmp_path / "go"
    async with compile_worker_held(gate) as (pair, held):
        eager_side, compile_side = served_modes(pair.primary), served_modes(held)

        async def first_rows(event: MeasurementResult) -> None:
            assert event.measurement.mode == "eager" and held.state == "starting"

        request = ProfileRequest("p7", "a - 2", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        events = await request_opening_gate(pair, request, gate, first_rows)
        assert eager_side == [["eager"]] and compile_side == [["compiled"]]
        modes = [e.measurement.mode for e in events if isinstance(e, MeasurementResult)]
        assert modes[0] == "eager" and modes[-1] == "compiled" and set(modes) == {"eager", "compiled"}
        assert [e for e in events if isinstance(e, RequestDone)] == [RequestDone("p7")] == events[-1:]


async def test_a_request_cancelled_while_the_compile_worker_starts_never_reaches_it(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    async with compile_worker_held(gate) as (pair, held):
        compile_side = served_modes(held)

        async def cancel(_: MeasurementResult) -> None:
            await pair.cancel("p8")

        request = ProfileRequest("p8", "a + 3", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        events = await request_opening_gate(pair, request, gate, cancel)
        assert [e for e in events if isinstance(e, RequestDone)] == [RequestDone("p8", cancelled=True)] == events[-1:]
        assert compile_side == []
        again = await collect(
            pair, ProfileRequest("p9", "a + 4", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        )
        assert compile_side == [["compiled"]]
        assert sorted(e.measurement.mode for e in again if isinstance(e, MeasurementResult)) == ["compiled", "eager"]


async def test_a_compile_worker_that_fails_while_a_request_waits_leaves_its_compile_to_the_eager_worker(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "go"
    async with compile_worker_held(gate, then="sys.exit(3)") as (pair, _):
        eager_side = served_modes(pair.primary)
        request = ProfileRequest("p10", "a * 5", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        events = await request_opening_gate(pair, request, gate)
        assert eager_side == [["eager"], ["compiled"]] and not pair.compiles_apart()
        whole = [
            e.measurement.mode
            for e in events
            if isinstance(e, MeasurementResult) and e.measurement.wall_time_us is not None
        ]
        assert sorted(whole) == ["compiled", "eager"]
        assert [e for e in events if isinstance(e, RequestDone)] == [RequestDone("p10")] == events[-1:]


async def test_a_cancelled_request_is_stopped_in_both_workers_and_ends_once() -> None:
    pair = WorkerPair(compile_worker=True)
    try:
        await asyncio.wait_for(pair.start(), WAIT_S)
        events: list = []
        sizes = [1000 * k for k in range(1, 40)]

        async def gather() -> None:
            async for event in pair.request(
                ProfileRequest("p3", "(a - b).sigmoid()", sizes=sizes, modes=["eager", "compiled"], device="cpu")
            ):
                events.append(event)
                if isinstance(event, MeasurementResult) and not any(isinstance(e, RequestDone) for e in events):
                    await pair.cancel("p3")

        await asyncio.wait_for(gather(), WAIT_S)
        dones = [e for e in events if isinstance(e, RequestDone)]
        assert dones == [RequestDone("p3", cancelled=True)] and events[-1] == dones[0]
        assert len([e for e in events if isinstance(e, MeasurementResult)]) < 2 * len(sizes)
        # Both workers are free again: the next request is answered in full.
        again = await collect(
            pair, ProfileRequest("p4", "a + 1", sizes=[1000], modes=["eager", "compiled"], device="cpu")
        )
        assert sorted(e.measurement.mode for e in again if isinstance(e, MeasurementResult)) == ["compiled", "eager"]
    finally:
        await pair.close()


async def test_a_warm_up_goes_to_the_compile_worker() -> None:
    pair = WorkerPair(compile_worker=True)
    warmed: list[str] = []
    try:
        await asyncio.wait_for(pair.start(), WAIT_S)
        assert pair.compiler is not None
        request = pair.compiler.request

        def spy(req):
            warmed.append(type(req).__name__)
            return request(req)

        pair.compiler.request = spy  # type: ignore[method-assign]
        events = [e async for e in pair.request(WarmupRequest("w1", "cpu"))]
        assert warmed == ["WarmupRequest"] and events[-1] == RequestDone("w1")
    finally:
        await pair.close()


def test_a_compile_worker_is_wanted_for_the_local_worker_where_a_gpu_driver_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(COMPILE_WORKER_ENV, raising=False)
    has_driver = any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/kfd"))
    assert compile_worker_wanted(None) == has_driver
    assert not compile_worker_wanted(
        "ssh gpu-box python -m probes.engine.worker"
    )  # the user's own command: asked for only
    monkeypatch.setenv(COMPILE_WORKER_ENV, "1")
    assert compile_worker_wanted("ssh gpu-box python -m probes.engine.worker")
    monkeypatch.setenv(COMPILE_WORKER_ENV, "0")
    assert not compile_worker_wanted(None)


async def test_starting_again_leaves_a_running_compile_worker_be() -> None:
    """ctrl+r after the eager worker failed to start starts it again, not a second compile worker."""
    pair = WorkerPair(compile_worker=True)
    try:
        await asyncio.wait_for(pair.start(), WAIT_S)
        await collect(pair, ProfileRequest("p5", "a * 3", sizes=[1000], modes=["compiled"], device="cpu"))
        compiler_pid = pair.compiler.pid
        await asyncio.wait_for(pair.start(), WAIT_S)
        assert pair.compiler.pid == compiler_pid and pair.compiles_apart()
    finally:
        await pair.close()
