"""A profile's events as the tool reads them: what ran, where, when, and (for CPU events) the ops
around it, copied from torch's own reading (``profile.function_events``) with its nesting; and
what Kineto recorded of each device kernel's launch (``read_kernel_records``).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

from torch.autograd.profiler import profile
from torch.profiler import DeviceType


@dataclass(eq=False, slots=True)
class ProfileEvent:
    """One event of a profile: a CPU op or range, a runtime call, or what ran on the device."""

    name: str
    device_type: DeviceType
    correlation_id: int
    """Ties a device event to the runtime call (``cudaLaunchKernel``...) that launched it."""
    start_us: float
    """Since the profile's start."""
    end_us: float
    thread: int
    is_async: bool
    is_user_annotation: bool
    """A ``record_function`` range drawn on the device's timeline, not a kernel."""
    cpu_parent: ProfileEvent | None = None
    cpu_children: list[ProfileEvent] = field(default_factory=list)

    @property
    def elapsed_us(self) -> float:
        return self.end_us - self.start_us


def read_profile(prof: profile) -> list[ProfileEvent]:
    """The events of a finished profile, CPU events nested, as torch reads them."""
    function_events = prof.function_events
    ours = {
        id(e): ProfileEvent(
            name=e.name,
            device_type=e.device_type,
            correlation_id=e.id,
            start_us=e.time_range.start,
            end_us=e.time_range.end,
            thread=e.thread,
            is_async=e.is_async,
            is_user_annotation=bool(getattr(e, "is_user_annotation", False)),
        )
        for e in function_events
    }
    for e in function_events:
        event = ours[id(e)]
        event.cpu_parent = ours[id(e.cpu_parent)] if e.cpu_parent is not None else None
        event.cpu_children = [ours[id(child)] for child in e.cpu_children]
    return list(ours.values())


KERNEL_CATEGORY = "kernel"
"""The category of a device kernel's record in a profile's Chrome trace."""


KernelRecords = dict[int, list[tuple[str, dict[str, Any]]]]
"""Per correlation id, each kernel launched under it: (its name, its arguments). One launch call
is one kernel, but a CUDA graph's replay launches all of the graph's kernels under one id."""


def kernel_records(trace: dict[str, Any]) -> KernelRecords:
    """The arguments of each device kernel in a Chrome trace (``traceEvents`` of category
    ``kernel``), by correlation id: grid, block, registers per thread, shared memory, stream..."""
    records: KernelRecords = {}
    for event in trace.get("traceEvents", []):
        if not isinstance(event, dict) or event.get("cat") != KERNEL_CATEGORY:
            continue
        args = event.get("args")
        if isinstance(args, dict) and isinstance(args.get("correlation"), int):
            records.setdefault(args["correlation"], []).append((str(event.get("name", "")), args))
    return records


def kernel_record(records: KernelRecords, correlation_id: int, name: str) -> dict[str, Any] | None:
    """The arguments of kernel ``name`` launched under ``correlation_id``: the one kernel of that
    launch, or among a graph's kernels the one of that name (None where none is, or several)."""
    found = records.get(correlation_id, [])
    if len(found) == 1:
        return found[0][1]
    named = [args for kernel, args in found if kernel == name]
    return named[0] if len(named) == 1 else None


def read_kernel_records(prof: profile) -> KernelRecords:
    """The arguments Kineto recorded for each device kernel of a finished profile, by correlation
    id (``ProfileEvent.correlation_id``; see ``read_trace``); empty where the trace cannot be read."""
    return kernel_records(read_trace(prof))


def read_trace(prof: profile) -> dict[str, Any]:
    """A finished profile's Chrome trace, as Kineto writes it. Kineto keeps a kernel's launch
    arguments only there (its events' accessors do not give them), so the profile is written to a
    temporary file (``export_chrome_trace``) and read back; empty where that fails."""
    fd, path = tempfile.mkstemp(prefix="kernel-tui-trace-", suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as trace:
            found = json.load(trace)
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError, RuntimeError):
        return {}
    finally:
        os.unlink(path)
