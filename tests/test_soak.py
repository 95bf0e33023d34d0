"""Soak: one worker, a thousand requests in a row. It keeps answering, keeps its pid, and its memory
does not grow without bound; on CUDA, allocated device memory returns to its baseline after each
request. Run with ``pytest -s`` to see the figures.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from probes.link.protocol import MeasurementResult, ProfileRequest, RequestDone, RequestFailed

CHAIN = "(a + b).relu()"
REQUESTS = 1000
RSS_FROM = 100
"""RSS is compared from this request on: the first ones warm up caches and the allocator."""
MAX_RSS_GROWTH = 50e6
REQUEST_TIMEOUT_S = 60


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


async def test_one_worker_answers_a_thousand_requests(tmp_path: Path) -> None:
    from probes.link.client import WorkerClient

    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    rss: dict[int, int] = {}
    try:
        await client.start()
        pid = client.pid
        assert pid is not None
        begin = time.perf_counter()
        for number in range(1, REQUESTS + 1):
            request = ProfileRequest(client.new_id(), CHAIN, sizes=[100], modes=["eager"], device="cpu", reps=1)

            async def answer(request: ProfileRequest = request) -> list[Any]:
                return [event async for event in client.request(request)]

            events = await asyncio.wait_for(answer(), REQUEST_TIMEOUT_S)
            failures = [e.error.located() for e in events if isinstance(e, RequestFailed)]
            results = [e for e in events if isinstance(e, MeasurementResult)]
            assert not failures and len(results) == 1, f"request {number}: {failures or events}"
            assert results[0].measurement.kernels_per_call == 2, f"request {number}"
            assert isinstance(events[-1], RequestDone) and events[-1].id == request.id
            assert client.pid == pid and client.restarts == 0, f"the worker was replaced at request {number}"
            if number == RSS_FROM or number % 100 == 0:
                rss[number] = rss_bytes(pid)
        elapsed = time.perf_counter() - begin
    finally:
        await client.close()

    growth = rss[REQUESTS] - rss[RSS_FROM]
    series = ", ".join(f"{n}: {b / 1e6:.1f}" for n, b in sorted(rss.items()))
    print(
        f"\nsoak: {REQUESTS} requests in {elapsed:.1f} s ({elapsed / REQUESTS * 1e3:.0f} ms each); "
        f"worker RSS (MB) {series}; growth {RSS_FROM}->{REQUESTS}: {growth / 1e6:+.1f} MB"
    )
    assert growth < MAX_RSS_GROWTH, f"worker RSS grew {growth / 1e6:.1f} MB from request {RSS_FROM} to {REQUESTS}"


@pytest.mark.gpu
def test_device_memory_returns_to_baseline_after_each_request() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from probes.engine.sweep import run_profile

    def run(chain: str, size: int) -> list[Any]:
        events: list[Any] = []
        run_profile(
            ProfileRequest("gpu-soak", chain, sizes=[size], modes=["eager"], device="cuda", reps=3), events.append
        )
        return events

    run(CHAIN, 1_000_000)  # warm up: the peak bandwidth (cached), cuBLAS and the profiler
    torch.cuda.synchronize()
    baseline = torch.cuda.memory_allocated()
    peaks = []
    for number in range(1, 101):
        torch.cuda.reset_peak_memory_stats()
        events = run(CHAIN, 1_000_000)
        assert any(isinstance(e, MeasurementResult) for e in events), f"request {number}: {events}"
        torch.cuda.synchronize()
        peaks.append(torch.cuda.max_memory_allocated())
        after = torch.cuda.memory_allocated()
        assert after == baseline, f"request {number}: {after - baseline:+,} bytes still allocated"
    # A size the guard cannot foresee from shapes (it depends on the data, and random int64
    # repeats would ask for exabytes): refused before it runs, and nothing is left allocated.
    oom = run("i: [N] int64\ntorch.repeat_interleave(a, i)", 1_000_000)
    failures = [e for e in oom if isinstance(e, RequestFailed)]
    assert failures and failures[0].error.kind == "memory" and "depends on the data" in failures[0].error.message, oom
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == baseline
    assert any(isinstance(e, MeasurementResult) for e in run(CHAIN, 1_000_000))
    print(
        f"\ngpu soak: baseline {baseline / 1e6:.1f} MB allocated, back to it after each of 100 requests "
        f"(peak {max(peaks) / 1e6:.1f} MB) and after a refused data-dependent size ({failures[0].error.message[:80]})"
    )
