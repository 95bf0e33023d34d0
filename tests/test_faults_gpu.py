"""On a GPU: a CUDA error that poisons the context costs a worker restart, never the app;
real compiles (max-autotune and CUDA graphs included) keep beating and are never taken for stuck;
a cancelled compile stops within the client's grace; the memory guard cannot be sent around by
``device="cuda"``. Run with ``-s`` to see the figures."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from probes.link.client import CANCEL_ACK_S, DEFAULT_SILENCE_S, WorkerClient  # noqa: E402
from probes.link.protocol import (  # noqa: E402
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    decode,
    encode,
)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

OUT_OF_RANGE = "i: [N] int64\na[i + N]"
"""Gathers with indices built past the end: a device-side assert, after which the context is unusable."""
MATMUL = "x: [N // 1024, 1024]\nw: [1024, 1024]\nx @ w"
"""max-autotune benchmarks many Triton templates for it: the longest compile the tool runs."""


async def test_poisoned_cuda_context_restarts_the_worker_and_the_next_chain_works() -> None:
    client = WorkerClient()
    try:
        await client.start()
        first_pid = client.pid
        events = [
            e
            async for e in client.request(
                ProfileRequest(client.new_id(), OUT_OF_RANGE, sizes=[4096], modes=["eager"], device="cuda")
            )
        ]
        failures = [e for e in events if isinstance(e, RequestFailed)]
        assert failures and all(f.error.kind == "worker" for f in failures)
        assert "fatal error" in failures[0].error.message
        assert "poisoned" in failures[-1].error.message  # the cause; the restart shows in the next request
        assert not any("Traceback" in f.error.message for f in failures)
        assert isinstance(events[-1], RequestDone)
        again = [
            e
            async for e in client.request(
                ProfileRequest(client.new_id(), "(a + b).relu()", sizes=[4096], modes=["eager"], device="cuda")
            )
        ]
        assert any(isinstance(e, MeasurementResult) for e in again), again
        assert client.pid != first_pid and client.restarts == 1
    finally:
        await client.close()


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_compiles_keep_beating(mode: str, tmp_path: Path) -> None:
    """The longest gap between two messages of a worker compiling ``MATMUL`` in ``mode`` from a cold
    cache, against the client's silence limit: the watchdog must never take a compile for stuck."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "probes.engine.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)},
    )
    assert worker.stdin is not None and worker.stdout is not None
    arrivals: list[tuple[float, object]] = []

    def read() -> None:
        for line in worker.stdout:  # type: ignore[union-attr]
            arrivals.append((time.monotonic(), decode(line)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while not arrivals:
            time.sleep(0.05)
        request = ProfileRequest("gpu-beat", MATMUL, sizes=[1024 * 1024], modes=[mode], device="cuda")
        worker.stdin.write(encode(request) + "\n")
        worker.stdin.flush()
        deadline = time.monotonic() + 900
        while not any(isinstance(event, RequestDone) for _, event in arrivals):
            assert time.monotonic() < deadline and worker.poll() is None
            time.sleep(0.1)
    finally:
        worker.kill()
    times = [at for at, event in arrivals[1:]]
    gap = max(b - a for a, b in zip(times, times[1:], strict=False))
    results = [event for _, event in arrivals if isinstance(event, MeasurementResult)]
    assert results and results[0].measurement.ran_compiled, [
        event for _, event in arrivals if not isinstance(event, MeasurementResult)
    ][-5:]
    compile_s = results[0].measurement.compile_time_s
    print(f"\n{mode}: compile {compile_s:.1f} s, longest silence {gap:.2f} s (limit {DEFAULT_SILENCE_S:.0f} s)")
    assert gap < DEFAULT_SILENCE_S / 3


async def test_a_cancelled_max_autotune_compile_stops_within_the_grace_and_the_worker_goes_on() -> None:
    client = WorkerClient()
    try:
        await client.start()
        request = ProfileRequest(
            client.new_id(), MATMUL + " * 2", sizes=[1024 * 1024], modes=["max-autotune"], device="cuda"
        )
        events, cancelled_at, done_at = [], None, None
        async for event in client.request(request):
            events.append(event)
            if isinstance(event, Progress) and event.stage == "compiling" and cancelled_at is None:
                cancelled_at = time.monotonic()
                await client.cancel(request.id)
            if isinstance(event, RequestDone):
                done_at = time.monotonic()
        assert (
            cancelled_at is not None and done_at is not None and events[-1] == RequestDone(request.id, cancelled=True)
        )
        print(
            f"\nmax-autotune compile stopped {done_at - cancelled_at:.2f} s after the cancel "
            f"(grace {CANCEL_ACK_S:.0f} s)"
        )
        assert client.restarts == 0, "the compile did not stop within the grace: the worker was restarted"
        again = [
            e
            async for e in client.request(
                ProfileRequest(client.new_id(), "(a + b).relu()", sizes=[4096], modes=["compiled"], device="cuda")
            )
        ]
        assert any(isinstance(e, MeasurementResult) and e.measurement.ran_compiled for e in again), again
    finally:
        await client.close()


@pytest.mark.parametrize(
    "chain",
    [
        "torch.ones(N * N, device='cuda').sum() + a",
        "torch.empty(N, N, device=a.device).sum()",
        "a.to('cuda:0').repeat(N)",
        "torch.zeros(N, N, device=torch.device('cuda')).sum()",
    ],
)
def test_the_guard_sizes_explicit_cuda_factories_without_allocating(chain: str) -> None:
    from probes.engine.sweep import run_profile

    run_profile(
        ProfileRequest("warm", "(a + b).relu()", sizes=[1024], modes=["eager"], device="cuda", reps=1), lambda e: None
    )
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    baseline = torch.cuda.memory_allocated()
    events: list = []
    run_profile(ProfileRequest("guard", chain, sizes=[10**6], modes=["eager"], device="cuda", reps=1), events.append)
    failures = [e.error for e in events if isinstance(e, RequestFailed)]
    assert failures and failures[0].kind == "memory" and "needs about" in failures[0].message, events
    grown = torch.cuda.max_memory_allocated() - baseline  # the engine's L2-flush buffer at most, not the chain's TBs
    assert grown < 1e9, f"the refused chain allocated {grown / 1e9:.1f} GB on the device"
