"""FLOPs per kernel where they can be known, and where each kernel sits against the roofs.

The count is op call by op call: ``torch.utils.flop_counter``'s formulas for matmuls, convolutions
and attention (exact from their shapes, e.g. ``[N, K] @ [K, M]`` is 2*N*K*M), and the stated
counts of ``op_flops`` for elementwise, reduction and normalisation ops (docs/measuring.md has the
table). An op with neither (a copy, an index) has no count, and a kernel that ran it gets None.

Eager: each traced op's FLOPs go to the kernels it launched itself, not to the copies or fills it
ran to set up its operands (``probes.engine.bytes_moved``). Compiled: a generated kernel gets a
count only when every op it ran is counted and the calls of that op in its pass can be told
apart: it is the only kernel that ran the op, or the op's calls each have the same count and
there are as many as the kernels that ran only it (a backward matmul's two ``aten::mm`` calls).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.flop_counter import flop_registry, sdpa_backward_flop_count, sdpa_flop_count

from probes.link.kernel_names import strip_graph_prefix
from probes.link.protocol import KernelRow, Measurement
from probes.link.summary import SHORT_DTYPE_NAMES

PER_OUTPUT_ELEMENT = {
    **dict.fromkeys(
        (
            "add",
            "sub",
            "rsub",
            "mul",
            "div",
            "neg",
            "abs",
            "relu",
            "clamp",
            "clamp_min",
            "clamp_max",
            "maximum",
            "minimum",
            "where",
            "exp",
            "log",
            "sqrt",
            "rsqrt",
            "reciprocal",
            "tanh",
            "sigmoid",
            "sin",
            "cos",
            "pow",
            "square",
            "threshold_backward",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
        ),
        1,
    ),
    "addcmul": 2,
    "addcdiv": 2,
    "sigmoid_backward": 3,
    "tanh_backward": 3,
    "silu": 4,
    "gelu": 5,
    "silu_backward": 6,
    "gelu_backward": 11,
}
"""FLOPs per output element of elementwise ops: one per arithmetic step or math function
(gelu: x/sqrt(2), erf, +1, *0.5, *x)."""

PER_INPUT_ELEMENT = {
    "_softmax": 5,
    "_log_softmax": 5,
    "_softmax_backward_data": 4,
    "_log_softmax_backward_data": 4,
    "native_layer_norm": 8,
    "native_layer_norm_backward": 13,
}
"""FLOPs per input element of normalisations: softmax max, subtract, exp, sum, divide (its
backward multiply, sum, subtract, multiply); layer norm mean 1, variance 3, normalise 2, scale
and shift 2 (its backward 13: input, weight and bias gradients)."""

REDUCTIONS = {"sum": 0, "mean": 1, "amax": 0, "amin": 0, "max": 0, "min": 0, "prod": 0}
"""Reductions: one FLOP per input element folded into an output (inputs minus outputs), plus
the extra FLOPs per output given here (mean's division)."""

SCANS = frozenset({"cumsum", "cumprod"})
"""Scans: one FLOP per element but the first of each scanned line."""

_SDPA_CPU = {"_scaled_dot_product_flash_attention_for_cpu"}
_SDPA_CPU_BACKWARD = {"_scaled_dot_product_flash_attention_for_cpu_backward"}

COUNTED_OPS = frozenset(
    f"aten::{name}"
    for name in [
        *(packet.__name__ for packet in flop_registry),
        *PER_OUTPUT_ELEMENT,
        *PER_INPUT_ELEMENT,
        *REDUCTIONS,
        *SCANS,
        *_SDPA_CPU,
        *_SDPA_CPU_BACKWARD,
    ]
)


def _first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, list | tuple):
        return next((t for t in value if isinstance(t, torch.Tensor)), None)
    return None


def op_flops(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int | None:
    """FLOPs of one ATen op call, or None for an op without a count (see the module docstring)."""
    packet = func.overloadpacket
    name = packet.__name__
    if packet in flop_registry:
        return int(flop_registry[packet](*args, **kwargs, out_val=out))
    result = _first_tensor(out)
    source = _first_tensor(args)
    if result is None:
        return None
    if name in PER_OUTPUT_ELEMENT:
        return PER_OUTPUT_ELEMENT[name] * result.numel()
    if source is None:
        return None
    if name in PER_INPUT_ELEMENT:
        return PER_INPUT_ELEMENT[name] * source.numel()
    if name in REDUCTIONS:
        return source.numel() - result.numel() + REDUCTIONS[name] * result.numel()
    if name in SCANS and source.dim() > 0:
        dim = args[1] if len(args) > 1 else kwargs["dim"]
        return source.numel() - source.numel() // max(1, int(source.shape[dim]))
    if name in _SDPA_CPU:
        q, k, v = args[:3]
        return int(sdpa_flop_count(q.shape, k.shape, v.shape))
    if name in _SDPA_CPU_BACKWARD:
        grad_out, q, k, v = args[:4]
        return int(sdpa_backward_flop_count(grad_out.shape, q.shape, k.shape, v.shape))
    return None


def split_by_time(total: int, times: list[float]) -> list[int]:
    """``total`` shared in proportion to ``times`` (evenly when they are all 0), the rounding
    left to the last share: the shares always add up to ``total``."""
    if len(times) <= 1:
        return [total] * len(times)
    whole = sum(times)
    shares = [int(total * t / whole) if whole > 0 else total // len(times) for t in times[:-1]]
    return [*shares, total - sum(shares)]


def ran_every_call(rows: list[KernelRow], calls: list[int]) -> bool:
    """Whether a compiled call's ATen-run rows of an op (not generated: a generated kernel may do
    several calls' work in one launch) launch a kernel for each of the op's calls in the eager
    trace the figures come from. A compile can run an op fewer times than eager does
    (Inductor's ``addmm`` made an ``mm`` with its bias fused into the next kernel): the eager calls
    are then not the compiled kernels' work, and their figures stay unknown rather than wrong."""
    return sum(row.launches_per_call for row in rows) >= len(calls)


def shares(rows: list[KernelRow], calls: list[int]) -> list[int]:
    """Each row's part of an op's calls (FLOPs or bytes) in one pass: all of them to the only row
    that ran the op; when the calls are all alike and the rows launch as many kernels per call as
    there are calls, each row its launches' calls; else (a CUDA matmul run as a gemm and a
    split-K reduction, a normalisation's backward as two reductions) the calls' total shared by
    the rows' device time, as eager shares an op's bytes between its kernels. The shares always
    add up to the calls' total."""
    if len(rows) == 1:
        return [sum(calls)]
    if len(set(calls)) == 1 and sum(row.launches_per_call for row in rows) == len(calls):
        return [int(calls[0] * row.launches_per_call) for row in rows]
    return split_by_time(sum(calls), [row.time_per_call_us for row in rows])


MATMUL_FAMILY = frozenset(f"aten::{packet.__name__}" for packet in flop_registry) | {
    f"aten::{name}" for name in _SDPA_CPU | _SDPA_CPU_BACKWARD
}
"""Ops whose FLOPs only the kernels ATen runs for them (or a generated matmul template) do: a
generated pointwise kernel named after a matmul (``cpp_fused_mm_slice_0``) copies its operand."""


def assign(
    kernels: list[KernelRow], by_pass: dict[str | None, dict[str, list[int]]], generated: frozenset[str] = frozenset()
) -> None:
    """Give each compiled kernel the FLOPs of the counted op calls it ran in its pass, where every
    op it ran is counted and those calls can be told apart (``shares``); leave the rest None.
    ``generated``: the names of the compile's own kernels, which never claim a matmul's FLOPs
    unless they are a matmul template (``triton_tem_*``)."""
    for pass_, counts in by_pass.items():
        rows = [k for k in kernels if k.pass_ == pass_]
        for op, calls in counts.items():
            claimers = [k for k in rows if op in k.ops]
            if op in MATMUL_FAMILY:
                claimers = [k for k in claimers if strip_graph_prefix(k.name) not in generated or "_tem_" in k.name]
            # a prim beside ATen ops (Inductor's prims.prepare_softmax_online) is a piece of one of them
            if not claimers or not all(o in COUNTED_OPS for k in claimers for o in k.ops if o.startswith("aten::")):
                continue
            extern = not any(strip_graph_prefix(k.name) in generated for k in claimers)
            if extern and not ran_every_call(claimers, calls):  # a generated kernel fuses calls
                continue
            for row, share in zip(claimers, shares(claimers, calls), strict=True):
                row.flops = (row.flops or 0) + share


def fill_rates(measurement: Measurement) -> None:
    """TFLOP/s and FLOP per byte for every kernel with a FLOP count."""
    for row in measurement.kernels:
        if row.flops is None:
            continue
        row.tflops = row.flops / (row.time_per_call_us * 1e6) if row.time_per_call_us > 0 else None
        row.intensity = row.flops / row.bytes if row.bytes else None


def flop_dtype(measurement: Measurement) -> str | None:
    """The dtype of the chain's first matmul-family op (``bf16``...): the compute peak to compare
    with; None when no matmul-family kernel has FLOPs (the peak is a matmul's: nothing to compare
    with it, and nothing to measure it for)."""
    if not any(k.flops for k in measurement.kernels if any(op in MATMUL_FAMILY for op in k.ops)):
        return None
    for op in measurement.ops:
        if op.op in MATMUL_FAMILY:
            return SHORT_DTYPE_NAMES.get(op.dtype, op.dtype)
    return None


OVER_COMPUTE_PEAK = "of the measured compute peak"
PEAK_MOVES_GPU = (
    "a GPU held near its power limit runs the same matmul up to ~10% faster or slower from one minute to the next"
)
PEAK_MOVES_CPU = "a CPU's clock and the other work on its cores move the same matmul's rate from one run to the next"
"""Why a kernel can read above the compute peak, in the words of the device it ran on."""


def apply_compute_peak(measurement: Measurement, peak_tflops: float | None) -> None:
    """Fill in % of the compute peak for every matmul-family row, explaining (in the diagnostics)
    any above 100%. The peak is a matmul's (the matrix units); an elementwise or normalisation
    kernel computes on the vector units, and a % of that peak would say nothing about it."""
    measurement.compute_peak_tflops = peak_tflops
    measurement.diagnostics = [d for d in measurement.diagnostics if OVER_COMPUTE_PEAK not in d]
    moves = PEAK_MOVES_CPU if measurement.device == "cpu" else PEAK_MOVES_GPU
    for row in measurement.kernels:
        matmul = any(op in MATMUL_FAMILY for op in row.ops)
        row.pct_of_compute_peak = 100 * row.tflops / peak_tflops if row.tflops and peak_tflops and matmul else None
        if row.pct_of_compute_peak is not None and row.pct_of_compute_peak > 100:
            measurement.diagnostics.append(
                f"{row.short_name} reached {row.pct_of_compute_peak:.0f}% {OVER_COMPUTE_PEAK}: the peak is one "
                f"large matmul measured once; {moves}"
            )
