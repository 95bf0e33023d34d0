"""Peak memory per call: what fusion saves besides transfers. Eager ``(a + b).relu() * c`` holds
an intermediate array the fused kernel never makes."""

from __future__ import annotations

import pytest

from probes.engine.peak_memory import running_peak
from probes.engine.sweep import run_profile
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed

N = 1_000_000
ARRAY = 4 * N
"""One fp32 array of N elements."""
ROUNDING = 4096
"""The CPU allocator's requests are exact; this leaves room for a page's alignment."""


def test_the_peak_is_the_highest_running_total_of_allocations_and_frees() -> None:
    events = [(0, 100), (1, 50), (2, -100), (3, 80), (4, -130)]
    assert running_peak(events) == (150, None, None)


def test_the_backward_peak_is_counted_above_what_the_forward_left() -> None:
    forward = [(0, 400), (1, 400), (2, -400)]  # an intermediate freed, the output kept
    backward = [(10, 400), (11, 400), (12, -400)]
    whole, before, after = running_peak(forward + backward, split_ns=10)
    assert (whole, before, after) == (1200, 800, 800)


def test_a_split_after_every_event_leaves_the_backward_nothing() -> None:
    assert running_peak([(0, 10)], split_ns=5) == (10, 10, 0)


def measured(chain: str, **kwargs: object) -> dict[str, Measurement]:
    events: list = []
    request = ProfileRequest(id="m", chain=chain, sizes=[N], modes=["eager", "compiled"], device="cpu", **kwargs)
    run_profile(request, events.append)
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    return {e.measurement.mode: e.measurement for e in events if isinstance(e, MeasurementResult)}


@pytest.mark.slow
def test_eager_holds_the_intermediate_that_the_fused_kernel_never_makes() -> None:
    results = measured("(a + b).relu() * c", reps=3)
    eager, compiled = results["eager"], results["compiled"]
    assert compiled.ran_compiled and compiled.kernels_per_call == 1, "the CPU compile fuses the chain"
    assert eager.peak_memory_bytes is not None and compiled.peak_memory_bytes is not None
    assert compiled.peak_memory_bytes == pytest.approx(ARRAY, abs=ROUNDING), "the output alone"
    assert eager.peak_memory_bytes - compiled.peak_memory_bytes == pytest.approx(ARRAY, abs=ROUNDING)
    assert eager.cpu_threads is not None and eager.cpu_threads >= 1
    assert all(k.launch is None for k in eager.kernels + compiled.kernels), "launch configuration is for GPU kernels"


@pytest.mark.slow
def test_with_grad_forward_and_backward_peaks_are_measured_apart() -> None:
    results = measured("(a + b).relu() * c", reps=3, grad=True)
    for m in results.values():
        assert m.forward_peak_memory_bytes is not None and m.backward_peak_memory_bytes is not None
        assert m.peak_memory_bytes is not None
        assert m.peak_memory_bytes >= max(m.forward_peak_memory_bytes, m.backward_peak_memory_bytes)
        # the forward holds its output and an activation saved for the backward (relu's)
        assert m.forward_peak_memory_bytes >= 2 * ARRAY - ROUNDING, m.mode
        # the backward writes at least the gradient of one input
        assert m.backward_peak_memory_bytes >= ARRAY - ROUNDING
