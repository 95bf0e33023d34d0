"""The ATen ops a chain runs, with the bytes each reads and writes.

A ``TorchDispatchMode`` sees each op below autograd, with its real tensor arguments. Run on
``meta`` tensors it sizes a chain without allocating anything (the memory guard,
``probes.engine.memory_guard``); run on the device inside the profiler, it tags each op with a
``record_function`` label so that every eager kernel can be tied to the op that launched it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from probes.engine.flops import op_flops
from probes.engine.torch_compat import TorchDispatchMode, tree_leaves

OP_LABEL_PREFIX = "kernel_tui::op#"
"""record_function label put around op i during the attribution pass: kernel_tui::op#i."""


def spanned_bytes(tensor: torch.Tensor) -> int:
    """Bytes of memory a tensor's elements actually occupy: broadcast (stride 0) dims count once."""
    if tensor.numel() == 0:
        return 0
    elements = 1
    for size, stride in zip(tensor.shape, tensor.stride(), strict=True):
        if stride != 0:
            elements *= size
    return elements * tensor.element_size()


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass
class TracedOp:
    index: int
    op: str
    """``aten::add`` style."""
    shape: list[int]
    dtype: str
    bytes_in: int
    bytes_out: int
    is_view: bool
    flops: int | None = None
    """Its FLOPs (``probes.engine.flops.op_flops``), None for an op without a count."""


@dataclass
class OpTrace:
    ops: list[TracedOp] = field(default_factory=list)

    @property
    def output_bytes_total(self) -> int:
        return sum(op.bytes_out for op in self.ops if not op.is_view)


class RecordingMode(TorchDispatchMode):
    """Records each op into ``trace``; ``run_op`` runs it (subclasses may run it differently)."""

    def __init__(self, trace: OpTrace, label_ops: bool = False) -> None:
        super().__init__()  # type: ignore[no-untyped-call, unused-ignore]  # torch leaves it unannotated
        self.trace = trace
        self.label_ops = label_ops

    def run_op(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return func(*args, **kwargs)

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "namespace", "aten") == "profiler":
            # record_function's own enter/exit ops (the tool's labels, a backward's marker): not
            # part of the chain
            return func(*args, **kwargs)
        index = len(self.trace.ops)
        label = (
            torch.profiler.record_function(f"{OP_LABEL_PREFIX}{index}") if self.label_ops else contextlib.nullcontext()
        )
        with label:
            out = self.run_op(func, args, kwargs)
        inputs = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        is_view = bool(getattr(func, "is_view", False))
        first = outputs[0] if outputs else None
        self.trace.ops.append(
            TracedOp(
                index=index,
                op=f"aten::{func.overloadpacket.__name__}",
                shape=list(first.shape) if first is not None else [],
                dtype=_dtype_name(first.dtype) if first is not None else "",
                bytes_in=0 if is_view else sum(spanned_bytes(t) for t in inputs),
                bytes_out=0 if is_view else sum(spanned_bytes(t) for t in outputs),
                is_view=is_view,
                flops=None if is_view else op_flops(func, args, kwargs, out),
            )
        )
        return out


@contextlib.contextmanager
def recording_ops(label_ops: bool = False) -> Iterator[OpTrace]:
    """Record every ATen op run inside the block; optionally label each for the profiler."""
    trace = OpTrace()
    with RecordingMode(trace, label_ops):
        yield trace
