"""FLOPs per kernel where they can be known, and where each kernel sits against the roofs.

The count comes from ``torch.utils.flop_counter`` (matmul, bmm, addmm, convolution, attention:
exact from their shapes, e.g. ``[N, K] @ [K, M]`` is 2*N*K*M). A kernel gets a count only when
every op it ran is one of those and it is the only kernel of its pass that ran that op; an
elementwise or reduction kernel, or a matmul with a fused epilogue, gets None: an honest
"unknown", never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.utils.flop_counter import FlopCounterMode, flop_registry

from probes.protocol import KernelRow, Measurement
from probes.summary import SHORT_DTYPE_NAMES

COUNTED_OPS = frozenset(f"aten::{packet.__name__}" for packet in flop_registry)


def flops_by_op(call: Callable[[], Any]) -> dict[str, int]:
    """FLOPs of one call, by ATen op (``aten::mm``), for the ops whose count is known."""
    with FlopCounterMode(display=False) as counter:
        call()
    found = counter.get_flop_counts().get("Global", {})
    return {f"aten::{packet.__name__}": int(count) for packet, count in found.items() if count}


def assign(kernels: list[KernelRow], by_pass: dict[str | None, dict[str, int]]) -> None:
    """Give each kernel the FLOPs of the counted op it alone ran in its pass; leave the rest None."""
    for pass_, counts in by_pass.items():
        rows = [k for k in kernels if k.pass_ == pass_]
        for op, flops in counts.items():
            claimers = [k for k in rows if op in k.ops]
            if len(claimers) == 1 and all(o in COUNTED_OPS for o in claimers[0].ops):
                claimers[0].flops = (claimers[0].flops or 0) + flops


def fill_rates(measurement: Measurement) -> None:
    """TFLOP/s and FLOP per byte for every kernel with a FLOP count."""
    for row in measurement.kernels:
        if row.flops is None:
            continue
        row.tflops = row.flops / (row.time_per_call_us * 1e6) if row.time_per_call_us > 0 else None
        row.intensity = row.flops / row.bytes if row.bytes else None


def flop_dtype(measurement: Measurement) -> str | None:
    """The dtype of the chain's first counted op (``bf16``...): the compute peak to compare with."""
    for op in measurement.ops:
        if op.op in COUNTED_OPS:
            return SHORT_DTYPE_NAMES.get(op.dtype, op.dtype)
    return None


def apply_compute_peak(measurement: Measurement, peak_tflops: float | None) -> None:
    measurement.compute_peak_tflops = peak_tflops
    for row in measurement.kernels:
        row.pct_of_compute_peak = 100 * row.tflops / peak_tflops if row.tflops and peak_tflops else None
