"""Bytes each kernel moves per call, and the op chain with the kernel(s) each op ran in.

Eager: each ATen op's tensor inputs and outputs (broadcast dims counted once), given to the kernels
it launched in the labelled attribution pass. Compiled: the generated kernels' real tensor
arguments during one call, or Inductor's own estimate where no Python call can be seen (CUDA graphs).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from probes.engine import compiled as inductor
from probes.engine.compiling import PreparedCall
from probes.engine.flops import split_by_time
from probes.engine.launches import SETUP_OPS, Launch
from probes.engine.trace import OpTrace
from probes.engine.training_step import GradStep, backward_of
from probes.link.kernel_names import classify_device_event, short_name
from probes.link.protocol import OpNode

KernelKey = tuple[str, str | None]
"""A kernel row's identity: its name and its pass (None without grad)."""


@dataclass
class EagerAttribution:
    """What each eager kernel (by name and pass) moved, computed and ran, per call."""

    bytes: dict[KernelKey, int]
    flops: dict[KernelKey, int]
    ops: dict[KernelKey, list[str]]
    op_kernels: dict[int, list[str]]
    """The short names of the kernels each traced op launched."""


def _own_op(launch: Launch) -> str | None:
    """The ATen op that launched this kernel itself: a CPU kernel is its op; a CUDA kernel's
    launcher sits under the innermost ATen op, e.g. ``aten::copy_`` for the copy an
    ``aten::mm`` runs to make an operand contiguous."""
    return launch.name if launch.name.startswith("aten::") else launch.aten_op


def _split(total: int, launches: list[Launch]) -> list[int]:
    """``total`` shared among ``launches`` by device time (all of it to a single one)."""
    return split_by_time(total, [launch.duration_us for launch in launches])


def eager_bytes(trace: OpTrace, attribution: list[Launch]) -> EagerAttribution:
    """Bytes, FLOPs and ops per kernel from the attribution pass, each kernel in the pass it ran
    in (a forward and a backward ``aten::mul`` are two rows, each with its own launches' bytes).
    An op's bytes are split between its kernels by device time when it launched more than one;
    its FLOPs go to the kernels it launched itself, not to the copies or fills it ran to set up
    its operands (``SETUP_OPS``), split by device time when there are several."""
    by_op: dict[int, list[Launch]] = defaultdict(list)
    for launch in attribution:
        if launch.op_index is not None and classify_device_event(launch.name) == "kernel":
            by_op[launch.op_index].append(launch)
    got = EagerAttribution(defaultdict(int), {}, defaultdict(list), defaultdict(list))
    uncounted: set[KernelKey] = set()
    for index, launches in by_op.items():
        op = trace.ops[index]
        for launch, share in zip(launches, _split(op.bytes_in + op.bytes_out, launches), strict=True):
            key = (launch.name, launch.pass_)
            got.bytes[key] += share
            if op.op not in got.ops[key]:
                got.ops[key].append(op.op)
            got.op_kernels[index].append(short_name(launch.name))
        doers = [launch for launch in launches if _own_op(launch) == op.op or _own_op(launch) not in SETUP_OPS]
        doers = doers if op.flops is not None else []
        for launch, share in zip(doers, _split(op.flops or 0, doers), strict=True):
            key = (launch.name, launch.pass_)
            got.flops[key] = got.flops.get(key, 0) + share
        counted = {id(launch) for launch in doers}
        uncounted.update((launch.name, launch.pass_) for launch in launches if id(launch) not in counted)
    for key in uncounted:  # a count for some of a kernel's launches only is no count
        got.flops.pop(key, None)
    return got


def compiled_bytes(prepared: PreparedCall) -> tuple[dict[KernelKey, int], dict[KernelKey, list[str]]]:
    """Bytes per generated kernel, in its pass, from its real tensor arguments during one call.
    With grad the forward and the backward are recorded apart: their graphs' kernels can share a
    name (``cpp_fused_mul_0`` in both), and each pass's row has its own launches' bytes."""
    recorded: dict[KernelKey, int] = {}
    step = prepared.call
    if isinstance(step, GradStep):
        for leaf in step.leaves:
            leaf.grad = None
        with inductor.recording_kernel_bytes(prepared.modules, prepared.kernels) as forward:
            result = step.forward()
        with inductor.recording_kernel_bytes(prepared.modules, prepared.kernels) as backward:
            backward_of(result, step.seeds)
        recorded.update({(name, "forward"): count for name, count in forward.items()})
        recorded.update({(name, "backward"): count for name, count in backward.items()})
    else:
        with inductor.recording_kernel_bytes(prepared.modules, prepared.kernels) as sink:
            step()
        recorded.update({(name, None): count for name, count in sink.items()})
    for name, estimate in inductor.estimated_kernel_bytes(prepared.modules).items():
        # CUDA graph replays never call the Python wrapper: use Inductor's own estimate.
        recorded.setdefault((name, None), estimate)
    kernel_ops: dict[KernelKey, list[str]] = {(name, None): k.aten_ops for name, k in prepared.kernels.items()}
    return recorded, kernel_ops


def op_nodes(trace: OpTrace | None, op_kernels: dict[int, list[str]], prepared: PreparedCall) -> list[OpNode]:
    if trace is None:
        return []
    remaining = {name: list(k.aten_ops) for name, k in prepared.kernels.items()}
    nodes = []
    for op in trace.ops:
        if op.is_view:
            continue
        fused_into = None
        for name, ops in remaining.items():
            if op.op in ops:
                ops.remove(op.op)
                fused_into = name
                break
        nodes.append(
            OpNode(
                op=op.op,
                shape=op.shape,
                dtype=op.dtype,
                bytes_out=op.bytes_out,
                bytes_in=op.bytes_in,
                eager_kernels=op_kernels.get(op.index, []),
                compiled_kernel=fused_into,
            )
        )
    return nodes
