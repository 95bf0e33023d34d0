"""Profiler events -> kernel launches: which device kernels (or CPU work ops) ran, for how long,
in which rep, launched by which op; nothing the tool launched itself.

On CUDA a device event is tied to the CPU runtime call that launched it (correlation id), and
through that call's ancestors to the rep, the traced op and the innermost ATen op. On the CPU the
"kernels" are the leaf ATen ops doing the work and Inductor's ``cpp_*`` kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.profiler import DeviceType

from probes.engine.profile_events import ProfileEvent
from probes.engine.trace import OP_LABEL_PREFIX
from probes.link.kernel_names import is_cpu_work_op

REP_LABEL = "kernel_tui::rep"
FLUSH_LABEL = "kernel_tui::flush"
BACKWARD_LABEL = "kernel_tui::backward"
COMPILED_REGION = "Torch-Compiled Region"
"""Dynamo's profiler label around each call that runs compiled code."""


@dataclass
class Launch:
    name: str
    duration_us: float
    rep: int | None
    """Which profiled rep it belongs to (None: outside any rep, e.g. the attribution pass)."""
    op_index: int | None
    """The traced op that launched it (attribution pass only)."""
    aten_op: str | None
    """The innermost ATen op above it, e.g. aten::mm under a compiled graph's extern call."""
    pass_: str | None = None
    """``forward`` or ``backward`` when the profiled call ran both; else None."""
    correlation_id: int = 0
    """The device event's correlation id (CUDA), which ties it to its record in the profile's trace."""


class _Windows:
    """Time ranges of the tool's labels, to place events that no label encloses: the autograd
    engine runs a CUDA backward on a thread of its own, outside the main thread's labels."""

    def __init__(self, cpu: list[ProfileEvent], rep_events: list[ProfileEvent]) -> None:
        self.reps = [(e.start_us, e.end_us, i) for i, e in enumerate(rep_events)]
        self.backward = [(e.start_us, e.end_us) for e in cpu if e.name == BACKWARD_LABEL]

    def rep_at(self, when: float) -> int | None:
        return next((i for start, end, i in self.reps if start <= when <= end), None)

    def pass_at(self, when: float) -> str | None:
        if not self.backward:
            return None
        return "backward" if any(start <= when <= end for start, end in self.backward) else "forward"


def _ancestors(event: ProfileEvent) -> list[ProfileEvent]:
    chain = []
    parent = event.cpu_parent
    while parent is not None:
        chain.append(parent)
        parent = parent.cpu_parent
    return chain


def _context(event: ProfileEvent, rep_ids: dict[int, int]) -> tuple[bool, int | None, int | None, str | None]:
    """(launched by the tool itself?, rep index, op index, innermost aten op) for an event."""
    rep = op_index = aten = None
    lineage = [event, *_ancestors(event)]
    for ancestor in lineage:
        name = ancestor.name
        if name == FLUSH_LABEL:
            return True, None, None, None
        if rep is None and name == REP_LABEL:
            rep = rep_ids.get(id(ancestor))
        if op_index is None and name.startswith(OP_LABEL_PREFIX):
            op_index = int(name[len(OP_LABEL_PREFIX) :])
        if aten is None and name.startswith("aten::") and ancestor is not event:
            aten = name
    return False, rep, op_index, aten


def _is_runtime_call(name: str) -> bool:
    """CUDA runtime/driver API events (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch...)."""
    return name.startswith("cuda") or (name.startswith("cu") and name[2:3].isupper())


def _launch(event: ProfileEvent, launcher: ProfileEvent, rep_ids: dict[int, int], windows: _Windows) -> Launch | None:
    """The launch of ``event`` (a device kernel, or a CPU work op that is its own launcher)."""
    own, rep, op_index, aten = _context(launcher, rep_ids)
    if own:
        return None
    when = launcher.start_us
    if rep is None:
        rep = windows.rep_at(when)
    return Launch(event.name, event.elapsed_us, rep, op_index, aten, windows.pass_at(when), event.correlation_id)


def _cuda_launches(events: list[ProfileEvent], rep_ids: dict[int, int], windows: _Windows) -> list[Launch]:
    """Device events tied to the CPU call that launched them through the runtime call's
    correlation id; a kernel launched inside the tool's flush range is the tool's own."""
    cpu = [e for e in events if e.device_type == DeviceType.CPU]
    launchers = {e.correlation_id: e for e in cpu if _is_runtime_call(e.name)}
    launches = []
    for event in events:
        if event.device_type != DeviceType.CUDA or event.name.startswith("kernel_tui::"):
            continue
        if event.is_user_annotation:
            continue
        launcher = launchers.get(event.correlation_id)
        if launcher is None:
            continue
        launch = _launch(event, launcher, rep_ids, windows)
        if launch is not None:
            launches.append(launch)
    return launches


@dataclass
class ProfiledEvents:
    launches: list[Launch]
    compiled_reps: int
    """How many reps entered Dynamo's compiled code (a compiled mode that ran eager: none)."""


def read_profile(events: list[ProfileEvent], device: torch.device) -> ProfiledEvents:
    """Every real device launch (CUDA) or leaf work op (CPU) in a profile's events, tool launches
    excluded, and how many reps ran compiled code."""
    cpu = [e for e in events if e.device_type == DeviceType.CPU]
    rep_events = sorted((e for e in cpu if e.name == REP_LABEL), key=lambda e: e.start_us)
    rep_ids = {id(e): i for i, e in enumerate(rep_events)}
    windows = _Windows(cpu, rep_events)
    compiled = {windows.rep_at(e.start_us) for e in cpu if e.name.startswith(COMPILED_REGION)} - {None}
    if device.type == "cuda":
        return ProfiledEvents(_cuda_launches(events, rep_ids, windows), len(compiled))
    launches: list[Launch] = []
    roots = [e for e in cpu if is_cpu_work_op(e.name) and not any(is_cpu_work_op(a.name) for a in _ancestors(e))]
    for root in roots:
        for event in _cpu_kernels(root):
            launch = _launch(event, event, rep_ids, windows)
            if launch is not None and launch.op_index is None:  # the op's label can sit just below it
                launch.op_index = _label_below(event)
            if launch is not None:
                launches.append(launch)
    return ProfiledEvents(launches, len(compiled))


def _label_below(event: ProfileEvent) -> int | None:
    stack = list(event.cpu_children)
    while stack:
        child = stack.pop()
        if child.name.startswith(OP_LABEL_PREFIX):
            return int(child.name[len(OP_LABEL_PREFIX) :])
        stack.extend(child.cpu_children)
    return None


SETUP_OPS = frozenset(
    f"aten::{name}"
    for name in (
        "fill_", "zero_", "zeros", "zeros_like", "new_zeros", "new_empty", "new_empty_strided",
        "copy_", "clone", "contiguous", "to", "_to_copy",
    )
)  # fmt: skip
"""Work ops that an op runs to set up its output or inputs (sum fills its result, then copies it;
mm clones a strided input; mul by a Python number converts that number; an attention backward
zeroes its gradients' buffers), not to do its work. An
op with only these below it does the work itself and is the kernel; an op with any other work op
below it (relu around clamp_min, linear around addmm) is a wrapper, and its
children are the kernels. A rule on names, not times, so every size, rep and the attribution
pass agree on the same kernels."""


def _work_children(event: ProfileEvent) -> list[ProfileEvent]:
    """The nearest work ops below ``event`` (through labels and bookkeeping ops)."""
    below, stack = [], list(event.cpu_children)
    while stack:
        child = stack.pop()
        if is_cpu_work_op(child.name):
            below.append(child)
        else:
            stack.extend(child.cpu_children)
    return sorted(below, key=lambda c: c.start_us)


def _cpu_kernels(event: ProfileEvent) -> list[ProfileEvent]:
    """The events that did the work under a CPU op: itself, or (recursively) its work-op children."""
    children = _work_children(event)
    if all(child.name in SETUP_OPS for child in children):
        return [event]
    return [kernel for child in children for kernel in _cpu_kernels(child)]
