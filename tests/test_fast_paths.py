"""The start-up and latency tricks change when rows come, never what they say.

With ``KERNEL_TUI_FAST_PATHS=0`` every trick takes its plain path (probes.link.fast_paths); the
same chains then measure to the same kernels, launches per call and bytes, eager and compiled. On
the CPU the compiled comparison runs a worker each way, so the tricks of a worker's start (the
Dynamo import deferral, the early meta run, the frozen imports, the spare compile wrapper) are in
it too; on a GPU, one process measures both ways, each compile fresh.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import torch

from probes.engine import compiling, profile_events
from probes.engine.sweep import run_profile
from probes.link import fast_paths
from probes.link.client import WorkerClient
from probes.link.kernel_names import strip_graph_prefix
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed

CHAINS = ["(a + b).relu()", "a * b", "x: [N, 64]\nw: [64, 32]\nx @ w"]
SIZE = 4096
WAIT_S = 600


def what_it_says(measurement: Measurement) -> dict[str, object]:
    """What a measurement says about kernels and bytes, without its times (or Inductor's graph
    numbers, which count the compiles of a process)."""
    return {
        "kernels": sorted(
            (strip_graph_prefix(k.name), k.launches_per_call, k.bytes, tuple(k.ops)) for k in measurement.kernels
        ),
        "transfers": sorted((t.name, t.launches_per_call, t.bytes) for t in measurement.transfers),
        "kernels_per_call": measurement.kernels_per_call,
        "bytes_per_call": measurement.bytes_per_call,
        "ran_compiled": measurement.ran_compiled,
        "ops": [(op.op, op.bytes_in, op.bytes_out, op.compiled_kernel) for op in measurement.ops],
    }


def said(events: list[object]) -> dict[tuple[str, str], dict[str, object]]:
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    results = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    return {(m.chain, m.mode): what_it_says(m) for m in results if m.wall_time_us is not None}


def test_eager_rows_are_the_same_with_the_fast_paths_off(monkeypatch: pytest.MonkeyPatch) -> None:
    raw_readings: list[str] = []
    read_events = profile_events.read_events

    def counted(results: object) -> list[profile_events.ProfileEvent]:
        raw_readings.append(os.environ[fast_paths.ENV])
        return read_events(results)

    monkeypatch.setattr(profile_events, "read_events", counted)
    by_setting = {}
    for setting in ("1", "0"):
        monkeypatch.setenv(fast_paths.ENV, setting)
        events: list[object] = []
        for chain in CHAINS:
            request = ProfileRequest("r", chain, sizes=[SIZE], modes=["eager"], device="cpu", reps=3)
            run_profile(request, events.append)
        by_setting[setting] = said(events)
    assert len(by_setting["1"]) == len(CHAINS)
    assert by_setting["0"] == by_setting["1"]
    assert set(raw_readings) == {"1"}, "with the fast paths off, profiles are read through torch's own reading"


async def measured_by_a_worker(setting: str, cache: Path) -> dict[tuple[str, str], dict[str, object]]:
    client = WorkerClient(env={fast_paths.ENV: setting, "KERNEL_TUI_CACHE_DIR": str(cache)})
    try:
        await asyncio.wait_for(client.start(), WAIT_S)
        events: list[object] = []
        for chain in CHAINS:
            request = ProfileRequest(
                client.new_id(), chain, sizes=[SIZE], modes=["eager", "compiled"], device="cpu", reps=3
            )

            async def gather(request: ProfileRequest = request) -> None:
                events.extend([event async for event in client.request(request)])

            await asyncio.wait_for(gather(), WAIT_S)
        return said(events)
    finally:
        await client.close()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_a_gpu_the_fast_paths_off_measure_the_same_kernels_counts_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    by_setting = {}
    for setting in ("1", "0"):
        monkeypatch.setenv(fast_paths.ENV, setting)
        monkeypatch.setattr(compiling, "_compiled_cache", type(compiling._compiled_cache)())  # each compile fresh
        events: list[object] = []
        for chain in CHAINS:
            request = ProfileRequest("r", chain, sizes=[SIZE], modes=["eager", "compiled"], device="cuda", reps=3)
            run_profile(request, events.append)
        by_setting[setting] = said(events)
    assert len(by_setting["1"]) == 2 * len(CHAINS)
    assert all(by_setting["1"][(chain, "compiled")]["ran_compiled"] for chain in CHAINS), by_setting["1"]
    assert by_setting["0"] == by_setting["1"]


@pytest.mark.slow
async def test_a_worker_with_the_fast_paths_off_measures_the_same_kernels_counts_and_bytes(tmp_path: Path) -> None:
    on = await measured_by_a_worker("1", tmp_path / "cache")
    off = await measured_by_a_worker("0", tmp_path / "cache")
    assert len(on) == 2 * len(CHAINS)
    assert all(on[(chain, "compiled")]["ran_compiled"] for chain in CHAINS), on
    assert off == on
