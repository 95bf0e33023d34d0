"""On the GPU box: a CUDA error that poisons the context costs a worker restart, never the session."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from probes.client import WorkerClient  # noqa: E402
from probes.protocol import MeasurementResult, ProfileRequest, RequestDone, RequestFailed  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

OUT_OF_RANGE = "i: [N] int64\na[i + N]"
"""Gathers with indices built past the end: a device-side assert, after which the context is unusable."""


async def test_poisoned_cuda_context_restarts_the_worker_and_the_next_chain_works() -> None:
    client = WorkerClient()
    try:
        await client.start()
        first_pid = client.pid
        events = [e async for e in client.request(ProfileRequest(client.new_id(), OUT_OF_RANGE, sizes=[4096], modes=["eager"], device="cuda"))]
        failures = [e for e in events if isinstance(e, RequestFailed)]
        assert failures and all(f.error.kind == "worker" for f in failures)
        assert "fatal error" in failures[0].error.message
        assert "poisoned" in failures[-1].error.message and "restarted" in failures[-1].error.message
        assert not any("Traceback" in f.error.message for f in failures)
        assert isinstance(events[-1], RequestDone)
        again = [e async for e in client.request(ProfileRequest(client.new_id(), "(a + b).relu()", sizes=[4096], modes=["eager"], device="cuda"))]
        assert any(isinstance(e, MeasurementResult) for e in again), again
        assert client.pid != first_pid and client.restarts == 1
    finally:
        await client.close()
