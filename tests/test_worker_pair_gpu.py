"""Two workers on one GPU (run where there is a GPU): eager rows measured while the other worker compiles
read what they read alone, and the compiled rows of the same request are real compiles."""

from __future__ import annotations

import asyncio
import statistics

import pytest

torch = pytest.importorskip("torch")

from probes.link.protocol import MeasurementResult, ProfileRequest  # noqa: E402
from probes.link.worker_pair import WorkerPair  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

N = 10_000_000
EAGER = "(a * b + c).tanh()"
"""Three eager kernels of tens of µs each at 1e7 on a current GPU: device-bound, so the wall time per
call is the device's and any kernel of the other worker inside it would show."""


async def eager_reading(pair: WorkerPair, rid: str) -> tuple[float, float]:
    request = ProfileRequest(rid, EAGER, sizes=[N], modes=["eager"], device="cuda")
    [m] = [e.measurement async for e in pair.request(request) if isinstance(e, MeasurementResult)]
    return m.device_time_us, m.wall_time_us


async def test_eager_rows_measured_beside_a_compile_read_what_they_read_alone() -> None:
    pair = WorkerPair(compile_worker=True)
    try:
        await asyncio.wait_for(pair.start(), 300)
        alone = [await eager_reading(pair, f"alone{i}") for i in range(3)]

        async def compile_new_chains() -> list:
            found = []
            for i in range(4):  # each a chain never compiled: Inductor builds and benchmarks kernels
                chain = f"(a * {i + 2}.5 + b).sigmoid() * c - {i}"
                request = ProfileRequest(f"c{i}", chain, sizes=[N], modes=["compiled"], device="cuda")
                found += [e.measurement async for e in pair.request(request) if isinstance(e, MeasurementResult)]
            return found

        compiling = asyncio.ensure_future(compile_new_chains())
        beside = []
        while not compiling.done():
            beside.append(await eager_reading(pair, f"beside{len(beside)}"))
        compiled = await compiling
    finally:
        await pair.close()
    assert len(compiled) == 4 and all(m.ran_compiled for m in compiled)
    assert len(beside) >= 3, "the eager worker measured while the other compiled"
    device_alone = statistics.median(d for d, _ in alone)
    wall_alone = statistics.median(w for _, w in alone)
    for device_us, wall_us in beside:
        assert abs(device_us - device_alone) <= max(0.1 * device_alone, 3.0), (beside, alone)
        assert abs(wall_us - wall_alone) <= max(0.1 * wall_alone, 3.0), (beside, alone)
