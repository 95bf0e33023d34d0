"""The CPU profiler's rows cover the work a call does, or the result says what they missed.

A long 1-D convolution runs in oneDNN (``aten::mkldnn_convolution``), which sets its output's
strides with ``aten::as_strided_``; counted as work, that op stood for the convolution and the row
read microseconds for a call of seconds.
"""

from __future__ import annotations

from typing import Any

import pytest

from probes.engine.sweep import missed_work_reason, run_profile
from probes.link.kernel_names import is_cpu_work_op
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest

CONV1D = "x: [1, 1, N]\nw: [1, 1, N // 2]\nF.conv1d(x, w)"


def measurement(device_time_us: float, wall_time_us: float | None, device: str = "cpu") -> Measurement:
    return Measurement(
        chain="a + b",
        mode="eager",
        size=1000,
        device=device,
        dtype="fp32",
        kernels=[],
        transfers=[],
        kernels_per_call=1.0,
        bytes_per_call=None,
        device_time_us=device_time_us,
        wall_time_us=wall_time_us,
        reps=5,
        ran_compiled=False,
    )


def test_in_place_metadata_ops_are_not_work() -> None:
    for op in ("aten::as_strided_", "aten::resize_as_", "aten::unsqueeze_", "aten::_nnpack_available"):
        assert not is_cpu_work_op(op)
    assert is_cpu_work_op("aten::mkldnn_convolution") and is_cpu_work_op("aten::_slow_conv2d_forward")


def test_rows_far_below_a_long_call_are_said_to_miss_work() -> None:
    reason = missed_work_reason(measurement(13.9, 5_180_000.0))
    assert reason is not None and "missed work" in reason
    assert missed_work_reason(measurement(600_000.0, 700_000.0)) is None
    assert missed_work_reason(measurement(5.0, 200.0)) is None  # a short call's wall time is the host's
    assert missed_work_reason(measurement(10.0, 5_000_000.0, device="cuda:0")) is None
    assert missed_work_reason(measurement(10.0, None)) is None


@pytest.mark.slow
def test_a_long_conv1d_row_covers_its_wall_time() -> None:
    events: list[Any] = []
    request = ProfileRequest(id="t", chain=CONV1D, sizes=[30_000], modes=["eager"], device="cpu", reps=1)
    run_profile(request, events.append)
    (m,) = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    assert m.wall_time_us is not None
    assert m.device_time_us > 0.5 * m.wall_time_us, [(k.short_name, k.time_per_call_us) for k in m.kernels]
    assert "convolution" in m.kernels[0].short_name or "conv" in m.kernels[0].short_name
    assert missed_work_reason(m) is None
