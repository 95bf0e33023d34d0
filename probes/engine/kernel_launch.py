"""What each GPU kernel is made of: its launch configuration, its resources, its occupancy.

Two sources, joined per kernel row:

- **The profile's record of each launch** (every CUDA kernel, ATen's and cuBLAS's too): grid,
  block, registers per thread and shared memory (static + dynamic), which Kineto keeps only in the
  Chrome trace it writes (``probes.engine.profile_events.read_kernel_records``), joined to the
  row through its first launch's correlation id. The trace is read once per measurement, after
  the rows have gone out (the early rows do not wait for it: ``probes.engine.attribute``).
- **Inductor's compiled Triton kernel** (``torch_compat.triton_kernel_facts``): num_warps,
  num_stages, the block sizes, spills and the autotuner's cache state, and the configurations its
  autotuner timed while compiling (``torch_compat.recording_autotune_trials``).

Occupancy is the tool's own (``probes.engine.occupancy``): Kineto's "est. achieved occupancy"
reads 0 for cuBLAS's kernels.

A call measured again (the same chain, mode, size and compiled code) launches the same kernels the
same way, so what was read for it is kept (``KnownLaunches``) and its trace is not read again.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from types import ModuleType
from typing import Any

import torch

from probes.engine import torch_compat
from probes.engine.flops import MATMUL_FAMILY
from probes.engine.occupancy import DeviceLimits, theoretical_occupancy
from probes.engine.profile_events import KernelRecords, kernel_record
from probes.engine.torch_compat import AutotuneTrials
from probes.link.kernel_names import strip_graph_prefix
from probes.link.protocol import AutotuneTrial, KernelRow, LaunchInfo

TRITON_FIELDS = ("num_warps", "num_stages", "block_sizes", "spills", "autotune", "autotune_cache")
"""What only Inductor's compiled kernel knows; the profile's record gives the rest."""
LOW_OCCUPANCY = 0.25
"""Below this theoretical occupancy a kernel gets a line in the diagnostics."""


@functools.cache
def device_limits(index: int) -> DeviceLimits | None:
    """The limits of one SM of CUDA device ``index`` (its properties never change); None where
    this torch does not report them all (occupancy is then not computed)."""
    props = torch.cuda.get_device_properties(index)
    figures = [
        getattr(props, name, None)
        for name in (
            "max_threads_per_multi_processor",
            "regs_per_multiprocessor",
            "shared_memory_per_multiprocessor",
            "warp_size",
        )
    ]
    known = [figure for figure in figures if isinstance(figure, int) and figure > 0]
    if len(known) != len(figures):
        return None
    threads, registers, shared, warp = known
    return DeviceLimits.for_capability(props.major, props.minor, threads, registers, shared, warp)


def _dims(value: Any) -> list[int] | None:
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return list(value)
    return None


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def with_occupancy(info: LaunchInfo, limits: DeviceLimits | None) -> LaunchInfo:
    """``info`` with its theoretical occupancy filled in, where its block and registers are known."""
    if limits is None or info.block is None or info.registers_per_thread is None:
        return info
    threads = 1
    for dim in info.block:
        threads *= dim
    found = theoretical_occupancy(limits, threads, info.registers_per_thread, info.shared_memory_bytes or 0)
    if found is None:
        return info
    return dataclasses.replace(
        info, blocks_per_sm=found.blocks_per_sm, occupancy=found.occupancy, occupancy_limit=found.limit
    )


def launch_from_record(record: dict[str, Any], limits: DeviceLimits | None) -> LaunchInfo:
    """A kernel's launch as its Chrome-trace record's ``args`` give it (``grid``, ``block``,
    ``registers per thread``, ``shared memory``), its occupancy computed against ``limits``."""
    info = LaunchInfo(
        grid=_dims(record.get("grid")),
        block=_dims(record.get("block")),
        registers_per_thread=_count(record.get("registers per thread")),
        shared_memory_bytes=_count(record.get("shared memory")),
    )
    return with_occupancy(info, limits)


def triton_launches(
    modules: Iterable[ModuleType], names: Iterable[str], trials: AutotuneTrials
) -> dict[str, LaunchInfo]:
    """Per generated Triton kernel: what its compiled kernel says of its chosen launch, and the
    configurations its autotuner timed (the chosen one marked), by kernel name."""
    found: dict[str, LaunchInfo] = {}
    modules = list(modules)
    for name in names:
        facts = next(
            (f for m in modules if (f := torch_compat.triton_kernel_facts(m.__dict__.get(name))) is not None), None
        )
        if facts is None:
            continue
        chosen = torch_compat.config_text(facts.block_sizes, facts.num_warps, facts.num_stages)
        # A configuration that could not run (out of resources) is timed as infinite: it is left
        # out, as a time that is not finite is no time a report or a line may carry.
        timed = [(config, ms) for config, ms in trials.get(name, []) if math.isfinite(ms)]
        tried = [AutotuneTrial(config, ms, config == chosen) for config, ms in timed]
        if tried and not any(t.chosen for t in tried):
            best = min(tried, key=lambda t: t.time_ms)
            best.chosen = True
        found[name] = LaunchInfo(
            block=[facts.num_warps * 32, 1, 1] if facts.num_warps else None,
            registers_per_thread=facts.registers_per_thread,
            shared_memory_bytes=facts.shared_memory_bytes,
            num_warps=facts.num_warps,
            num_stages=facts.num_stages,
            block_sizes=facts.block_sizes,
            spills=facts.spills,
            autotune=sorted(tried, key=lambda t: t.time_ms),
            autotune_cache=facts.autotune_cache,
        )
    return found


def _merged(recorded: LaunchInfo | None, triton: LaunchInfo | None, limits: DeviceLimits | None) -> LaunchInfo | None:
    """The profile's record, with Triton's fields added (and standing in for what the record lacks)."""
    if triton is None:
        return recorded
    if recorded is None:
        return with_occupancy(triton, limits)
    return dataclasses.replace(recorded, **{name: getattr(triton, name) for name in TRITON_FIELDS})


def fill_launches(
    kernels: list[KernelRow],
    first_correlation: dict[tuple[str, str | None], int],
    records: KernelRecords,
    triton: dict[str, LaunchInfo],
    limits: DeviceLimits | None,
) -> None:
    """Give each kernel row its launch: the record of its first launch (``first_correlation`` by
    (name, pass)) and, for a generated Triton kernel, what Inductor knows of it."""
    for row in kernels:
        correlation = first_correlation.get((row.name, row.pass_))
        record = kernel_record(records, correlation, row.name) if correlation is not None else None
        recorded = launch_from_record(record, limits) if record is not None else None
        row.launch = _merged(recorded, triton.get(strip_graph_prefix(row.name)), limits)


def launch_diagnostics(kernels: list[KernelRow]) -> list[str]:
    """One line per kernel that spills registers or whose theoretical occupancy is low, saying
    what that means. A matmul's kernel is left out of the second: it keeps few large tiles per SM
    by design (cuBLAS's run at 12-19%), so the line would say nothing on every matmul chain."""
    lines = []
    for row in kernels:
        info = row.launch
        if info is None:
            continue
        if info.spills:
            lines.append(
                f"{row.short_name} spills {info.spills} registers per thread to local memory: values that do not fit "
                "in registers make a round trip through cache and device memory (a smaller block size avoids it)"
            )
        matmul = any(f"aten::{op}" in MATMUL_FAMILY for op in row.ops)
        if info.occupancy is not None and info.occupancy < LOW_OCCUPANCY and not matmul:
            lines.append(
                f"{row.short_name} has {info.occupancy:.0%} theoretical occupancy (limited by "
                f"{info.occupancy_limit}): few warps per SM to hide memory latency; "
                "a cause of low bandwidth for a memory-bound kernel"
            )
    return lines


RowKey = tuple[str, str | None]
"""A kernel row's (name, pass)."""


class KnownLaunches:
    """The launches read for the last ``size`` measured calls, by the caller's key for the call."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._known: OrderedDict[Hashable, dict[RowKey, LaunchInfo | None]] = OrderedDict()

    def fill(self, key: Hashable, kernels: list[KernelRow]) -> bool:
        """Give each row the launch read for it before; False (nothing given) unless every row's is known."""
        known = self._known.get(key)
        if known is None or any((row.name, row.pass_) not in known for row in kernels):
            return False
        self._known.move_to_end(key)
        for row in kernels:
            row.launch = known[(row.name, row.pass_)]
        return True

    def remember(self, key: Hashable, kernels: list[KernelRow]) -> None:
        self._known[key] = {(row.name, row.pass_): row.launch for row in kernels}
        self._known.move_to_end(key)
        while len(self._known) > self.size:
            self._known.popitem(last=False)
