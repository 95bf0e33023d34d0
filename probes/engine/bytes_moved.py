"""Bytes each kernel moves per call, and the op chain with the kernel(s) each op ran in.

Eager: each ATen op's tensor inputs and outputs (broadcast dims counted once), given to the kernels
it launched in the labelled attribution pass. Compiled: the generated kernels' real tensor
arguments during one call, or Inductor's own estimate where no Python call can be seen (CUDA graphs).
"""

from __future__ import annotations

from collections import defaultdict

from probes.engine import compiled as inductor
from probes.engine.compiling import PreparedCall
from probes.engine.launches import Launch
from probes.engine.trace import OpTrace
from probes.link.kernel_names import classify_device_event, short_name
from probes.link.protocol import OpNode


def eager_bytes(
    trace: OpTrace, attribution: list[Launch]
) -> tuple[dict[str, int], dict[str, list[str]], dict[int, list[str]]]:
    """Bytes and ops per kernel name from the attribution pass; an op's bytes are split between
    its kernels by device time when it launched more than one."""
    by_op: dict[int, list[Launch]] = defaultdict(list)
    for launch in attribution:
        if launch.op_index is not None and classify_device_event(launch.name) == "kernel":
            by_op[launch.op_index].append(launch)
    kernel_bytes: dict[str, int] = defaultdict(int)
    kernel_ops: dict[str, list[str]] = defaultdict(list)
    op_kernels: dict[int, list[str]] = defaultdict(list)
    for index, launches in by_op.items():
        op = trace.ops[index]
        total_time = sum(launch.duration_us for launch in launches) or 1.0
        for launch in launches:
            share = launch.duration_us / total_time if len(launches) > 1 else 1.0
            kernel_bytes[launch.name] += int((op.bytes_in + op.bytes_out) * share)
            if op.op not in kernel_ops[launch.name]:
                kernel_ops[launch.name].append(op.op)
            op_kernels[index].append(short_name(launch.name))
    return kernel_bytes, kernel_ops, op_kernels


def compiled_bytes(prepared: PreparedCall) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Bytes per generated kernel from its real tensor arguments during one call."""
    with inductor.recording_kernel_bytes(prepared.modules, prepared.kernels) as sink:
        prepared.call()
    for name, estimate in inductor.estimated_kernel_bytes(prepared.modules).items():
        # CUDA graph replays never call the Python wrapper: use Inductor's own estimate.
        sink.setdefault(name, estimate)
    kernel_ops = {name: kernel.aten_ops for name, kernel in prepared.kernels.items()}
    return dict(sink), kernel_ops


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
