"""The worker process and its client: answers, cancels, and survives crashes, hangs and kills."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from probes.client import WorkerClient
from probes.protocol import MeasurementResult, ProfileRequest, Progress, RequestDone, RequestFailed
from probes.worker import TEST_FAULT_ENV

CHAIN = "(a + b).relu()"


async def collect(client: WorkerClient, request: ProfileRequest) -> list:
    return [event async for event in client.request(request)]


def eager_request(client: WorkerClient, sizes: list[int] | None = None) -> ProfileRequest:
    return ProfileRequest(client.new_id(), CHAIN, sizes=sizes or [1000], modes=["eager"], device="cpu", reps=3)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
async def client(tmp_path: Path):
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    yield client
    await client.close()


async def test_worker_answers_a_request_with_tagged_events(client: WorkerClient) -> None:
    ready = await client.start()
    assert ready.torch_version and any(d.name == "cpu" for d in ready.devices)
    request = eager_request(client)
    events = await collect(client, request)
    assert all(e.id == request.id for e in events)
    assert isinstance(events[-1], RequestDone) and not events[-1].cancelled
    results = [e for e in events if isinstance(e, MeasurementResult)]
    assert len(results) == 1 and results[0].measurement.kernels_per_call == 2
    assert any(isinstance(e, Progress) for e in events)


async def test_bad_chain_answers_failed_with_position(client: WorkerClient) -> None:
    await client.start()
    request = ProfileRequest(client.new_id(), "(a + b).relu(", device="cpu")
    events = await collect(client, request)
    (failure,) = [e for e in events if isinstance(e, RequestFailed)]
    assert failure.error.kind == "syntax" and failure.error.line == 1
    assert isinstance(events[-1], RequestDone)


async def test_cancel_stops_a_running_sweep(client: WorkerClient) -> None:
    await client.start()
    request = eager_request(client, sizes=[1000] * 30)
    events = []
    async for event in client.request(request):
        events.append(event)
        if isinstance(event, MeasurementResult) and len(events) < 10:
            await client.cancel(request.id)
    done = events[-1]
    assert isinstance(done, RequestDone) and done.cancelled
    assert len([e for e in events if isinstance(e, MeasurementResult)]) < 30


@pytest.mark.parametrize("fault", ["crash", "hang", "exit-in-compile"])
async def test_faults_are_survived_and_reported(tmp_path: Path, fault: str) -> None:
    marker = tmp_path / "fired"
    client = WorkerClient(env={TEST_FAULT_ENV: f"{fault}:{marker}"}, deadline_s=8)
    try:
        await client.start()
        modes = ["compiled"] if fault == "exit-in-compile" else ["eager"]
        request = ProfileRequest(client.new_id(), CHAIN, sizes=[1000], modes=modes, device="cpu", reps=3)
        events = await collect(client, request)
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "worker"
        expected = {"crash": "signal 9", "hang": "did not answer", "exit-in-compile": "exited (code 1)"}[fault]
        assert expected in failure.error.message and "restarted" in failure.error.message
        assert isinstance(events[-1], RequestDone)
        assert marker.exists() and client.restarts == 1
        again = await collect(client, eager_request(client))
        assert any(isinstance(e, MeasurementResult) for e in again), again
    finally:
        await client.close()


async def test_killed_mid_request_then_next_request_works(client: WorkerClient) -> None:
    await client.start()
    first_pid = client.pid
    request = eager_request(client, sizes=[1000] * 50)
    events = []
    async for event in client.request(request):
        events.append(event)
        if isinstance(event, MeasurementResult) and len(events) < 5:
            await client.kill_worker()
    assert any(isinstance(e, RequestFailed) and "signal 9" in e.error.message for e in events)
    assert client.pid != first_pid
    again = await collect(client, eager_request(client))
    assert any(isinstance(e, MeasurementResult) for e in again)


async def test_close_leaves_no_worker_behind(client: WorkerClient) -> None:
    await client.start()
    pid = client.pid
    assert pid is not None and alive(pid)
    await client.close()
    await asyncio.sleep(0.1)
    assert not alive(pid)


async def test_worker_command_is_configurable_like_ssh() -> None:
    # A stand-in for `ssh gpu-box python -m probes.worker`: any command that speaks the protocol.
    command = f"env KERNEL_TUI_VIA=stand-in-ssh {sys.executable} -m probes.worker"
    client = WorkerClient(command)
    try:
        ready = await client.start()
        assert ready.pid != os.getpid()
        events = await collect(client, eager_request(client))
        assert any(isinstance(e, MeasurementResult) for e in events)
    finally:
        await client.close()
