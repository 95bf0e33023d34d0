"""A profile's events as the tool reads them: what ran, where, when, and (for CPU events) the ops
around it.

torch's own reading, ``profile.function_events``, builds a FunctionEvent of ~40 fields for each
event and demangles each name twice, several milliseconds for the few hundred events of a
measurement's profiled reps, in the way of every measurement's rows. The tool needs a few fields
and the nesting of CPU events, read here straight from the profile's raw results in about a third
of that time (``read_events``). The reading follows torch's own rules (its
``_parse_kineto_results`` and ``EventList._build_tree``): events in order of start; a runtime call
on the thread of the op it is linked to; on each thread, an event is the child of the innermost
event whose time range holds it whole; async events (ending on another thread) are nobody's parent
or child; a parent of the same name with that event as its only child stands for both. The
bookkeeping events torch leaves out of its list are left out here too.

The raw reading is a fast path (``probes.link.fast_paths``) on the torch versions it was checked
on (``probes.engine.torch_compat``); otherwise the events are torch's own reading, copied
(``from_function_events``).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import tempfile
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from torch.autograd.profiler import profile
from torch.profiler import DeviceType

from probes.engine import torch_compat
from probes.link import fast_paths


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


@functools.lru_cache(maxsize=4096)
def _name(raw: str) -> str:
    """The name as torch shows it: a C++ kernel's demangled (once: a profile repeats its kernels)."""
    return torch_compat.demangle(raw) if raw.startswith("_Z") else raw


def _event(raw: Any, name: str, trace_start_ns: int) -> ProfileEvent:
    thread = raw.start_thread_id()
    return ProfileEvent(
        name=_name(name),
        device_type=raw.device_type(),
        correlation_id=raw.correlation_id(),
        start_us=(raw.start_ns() - trace_start_ns) / 1000,
        end_us=(raw.end_ns() - trace_start_ns) / 1000,
        thread=thread,
        is_async=raw.is_async() or thread != raw.end_thread_id(),
        is_user_annotation=bool(raw.is_user_annotation()) if hasattr(raw, "is_user_annotation") else False,
    )


def read_profile(prof: profile) -> list[ProfileEvent]:
    """The events of a finished profile, CPU events nested, in order of start: read from its raw
    results where that is a fast path here, else copied from torch's own reading."""
    results = prof.kineto_results
    if results is not None and fast_paths.enabled("raw_profile_events") and torch_compat.raw_profile_events_readable():
        return read_events(results)
    return from_function_events(prof.function_events)


def from_function_events(function_events: Any) -> list[ProfileEvent]:
    """torch's reading of a profile (``profile.function_events``) as ProfileEvents, with torch's
    nesting."""
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


def read_events(results: Any) -> list[ProfileEvent]:
    """The events of a finished profile's raw results (``profile.kineto_results``), CPU events
    nested, in order of start (the longer first where two start together)."""
    start = results.trace_start_ns()
    read = []
    for raw in results.events():
        name = raw.name()
        if torch_compat.is_profiler_bookkeeping(name) or (hasattr(raw, "is_hidden_event") and raw.is_hidden_event()):
            continue
        read.append((_event(raw, name, start), raw.linked_correlation_id()))
    _on_their_ops_threads(read)
    events = sorted((event for event, _linked in read), key=lambda e: (e.start_us, -e.end_us))
    _nest(events)
    return _without_doubles(events)


def _on_their_ops_threads(read: list[tuple[ProfileEvent, int]]) -> None:
    """A runtime call (``cudaLaunchKernel``) recorded by CUPTI is put on the thread of the op it is
    linked to, so that it nests under that op, as torch's reading does."""
    ops = {
        e.correlation_id: e for e, linked in read if linked == 0 and e.device_type == DeviceType.CPU and not e.is_async
    }
    for event, linked in read:
        op = ops.get(linked) if linked > 0 and event.device_type == DeviceType.CPU else None
        if op is not None:
            event.thread = op.thread


def _nest(events: list[ProfileEvent]) -> None:
    nested = sorted((e for e in events if e.device_type == DeviceType.CPU and not e.is_async), key=attrgetter("thread"))
    for _thread, on_thread in itertools.groupby(nested, key=attrgetter("thread")):
        open_events: list[ProfileEvent] = []
        for event in sorted(on_thread, key=lambda e: (e.start_us, -e.end_us)):
            while open_events:
                parent = open_events[-1]
                if event.start_us >= parent.end_us or event.end_us > parent.end_us:
                    open_events.pop()
                else:
                    parent.cpu_children.append(event)
                    event.cpu_parent = parent
                    break
            open_events.append(event)


def _without_doubles(events: list[ProfileEvent]) -> list[ProfileEvent]:
    """An event whose parent has its name and no other child is folded into the parent (an op
    recorded twice, e.g. by its Python and C++ entry points), in torch's order."""
    while True:
        folded: set[int] = set()
        for event in events:
            parent = event.cpu_parent
            if parent is not None and parent.name == event.name and len(parent.cpu_children) == 1:
                parent.cpu_children = event.cpu_children
                for child in event.cpu_children:
                    child.cpu_parent = parent
                folded.add(id(event))
        if not folded:
            return events
        events = [e for e in events if id(e) not in folded]


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
