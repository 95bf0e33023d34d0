"""FLOPs per kernel where they can be known, and where each kernel sits against the roofs.

The count comes from ``torch.utils.flop_counter``'s formulas (matmul, bmm, addmm, convolution,
attention: exact from their shapes, e.g. ``[N, K] @ [K, M]`` is 2*N*K*M), op call by op call. A
kernel gets a count only when every op it ran is one of those and the calls of that op in its pass
can be told apart: it is the only kernel that ran the op, or the op's calls each have the same
count and there are as many as the kernels that ran only it (a backward matmul's two ``aten::mm``
calls). An elementwise or reduction kernel, or a matmul with a fused epilogue, gets None: an
honest "unknown", never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.utils.flop_counter import flop_registry

from probes.engine.torch_compat import TorchDispatchMode
from probes.link.protocol import KernelRow, Measurement
from probes.link.summary import SHORT_DTYPE_NAMES

COUNTED_OPS = frozenset(f"aten::{packet.__name__}" for packet in flop_registry)


class _CountingMode(TorchDispatchMode):
    """Records the FLOPs of each counted op call, in the order they ran (the backward pass's too:
    dispatch modes follow the autograd engine's threads)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, list[int]] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func.overloadpacket
        if packet in flop_registry:
            count = int(flop_registry[packet](*args, **kwargs, out_val=out))
            if count:
                self.calls.setdefault(f"aten::{packet.__name__}", []).append(count)
        return out


def flops_by_op(call: Callable[[], Any]) -> dict[str, list[int]]:
    """FLOPs of each call of a counted ATen op (``aten::mm``) during one call, in order."""
    with _CountingMode() as counter:
        call()
    return counter.calls


def assign(kernels: list[KernelRow], by_pass: dict[str | None, dict[str, list[int]]]) -> None:
    """Give each kernel the FLOPs of the counted op calls it ran in its pass, where those calls
    can be told apart (see the module's docstring); leave the rest None."""
    for pass_, counts in by_pass.items():
        rows = [k for k in kernels if k.pass_ == pass_]
        for op, calls in counts.items():
            claimers = [k for k in rows if op in k.ops]
            if not claimers or not all(o in COUNTED_OPS for k in claimers for o in k.ops):
                continue
            if len(claimers) == 1:
                claimers[0].flops = (claimers[0].flops or 0) + sum(calls)
            elif len(set(calls)) == 1 and len(calls) == len(claimers) and all(k.ops == [op] for k in claimers):
                for row in claimers:
                    row.flops = calls[0]


def fill_rates(measurement: Measurement) -> None:
    """TFLOP/s and FLOP per byte for every kernel with a FLOP count."""
    for row in measurement.kernels:
        if row.flops is None:
            continue
        row.tflops = row.flops / (row.time_per_call_us * 1e6) if row.time_per_call_us > 0 else None
        row.intensity = row.flops / row.bytes if row.bytes else None


def flop_dtype(measurement: Measurement) -> str | None:
    """The dtype of the chain's first counted op (``bf16``...): the compute peak to compare with;
    None when no kernel has FLOPs (no peak to compare with)."""
    if not any(k.flops for k in measurement.kernels):
        return None
    for op in measurement.ops:
        if op.op in COUNTED_OPS:
            return SHORT_DTYPE_NAMES.get(op.dtype, op.dtype)
    return None


OVER_COMPUTE_PEAK = "of the measured compute peak"


def apply_compute_peak(measurement: Measurement, peak_tflops: float | None) -> None:
    """Fill in % of the compute peak for every row, explaining (in the diagnostics) any above 100%."""
    measurement.compute_peak_tflops = peak_tflops
    measurement.diagnostics = [d for d in measurement.diagnostics if OVER_COMPUTE_PEAK not in d]
    for row in measurement.kernels:
        row.pct_of_compute_peak = 100 * row.tflops / peak_tflops if row.tflops and peak_tflops else None
        if row.pct_of_compute_peak is not None and row.pct_of_compute_peak > 100:
            measurement.diagnostics.append(
                f"{row.short_name} reached {row.pct_of_compute_peak:.0f}% {OVER_COMPUTE_PEAK}: the peak is one "
                "large matmul measured once; a GPU held near its power limit runs the same matmul up to ~10% "
                "faster or slower from one minute to the next"
            )
