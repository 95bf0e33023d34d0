"""How far a figure can be trusted: its spread over reps, and how busy the machine was meanwhile.

Torch-free, so the summaries and the UI can reason about the same numbers. A figure is *noisy* when
its interquartile range is wider than ``NOISY_IQR_FRACTION`` of its median, or when other processes
kept the machine's cores busy while it was measured (then every rep can be slow alike, and a tight
spread proves nothing).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from probes.link.summary import BUSY_REASON, counted

NOISY_IQR_FRACTION = 0.10
BUSY_OTHER_CORES = 0.5
"""Cores kept busy by other processes (beyond this one) from which a measurement is noisy, when
they leave less than ``SPARE_CORES`` idle. Even half a core stolen on a two-core machine shifts
host-bound timings by tens of percent; on a sixteen-core machine the same load takes nothing from
the measuring thread."""
SPARE_CORES = 1.0


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(p25, median, p75), by linear interpolation; a single value is its own spread."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1:
        return values[0], values[0], values[0]
    p25, p50, p75 = statistics.quantiles(values, n=4, method="inclusive")
    return p25, p50, p75


def iqr_is_wide(p25: float, median: float, p75: float) -> bool:
    return median > 0 and (p75 - p25) > NOISY_IQR_FRACTION * median


def spread_reason(what: str, p25: float, median: float, p75: float, reps: int) -> str | None:
    """A plain-words reason when the spread of ``what`` is wide, else None."""
    if not iqr_is_wide(p25, median, p75):
        return None
    half = 50 * (p75 - p25) / median
    return f"{what} varies ±{half:.0f}% between reps (middle half of {reps} reps)"


def _proc_stat_jiffies() -> tuple[int, int] | None:
    """(busy, total) jiffies over all cores since boot, from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields[:8]) - idle, sum(fields[:8])


def _own_jiffies() -> int | None:
    """User + system jiffies of this process (all its threads)."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])


@dataclass
class CpuLoad:
    """Cores busy during a window, split into this process and everything else."""

    cores: int
    busy_cores: float
    other_cores: float

    @property
    def busy(self) -> bool:
        return self.other_cores >= BUSY_OTHER_CORES and self.cores - self.busy_cores < SPARE_CORES

    def reason(self) -> str:
        return (
            f"{BUSY_REASON}: {self.busy_cores:.1f} of {counted(self.cores, 'core')} loaded "
            f"({self.other_cores:.1f} by other processes)"
        )


class LoadWindow:
    """Measures the machine's CPU load between ``start()`` and ``stop()`` (Linux /proc)."""

    def __init__(self) -> None:
        self._machine: tuple[int, int] | None = None
        self._own: int | None = None

    def start(self) -> LoadWindow:
        self._machine = _proc_stat_jiffies()
        self._own = _own_jiffies()
        return self

    def stop(self) -> CpuLoad | None:
        """The load over the window; None when it cannot be known (no /proc, too short)."""
        machine, own = _proc_stat_jiffies(), _own_jiffies()
        if None in (machine, own, self._machine, self._own):
            return None
        assert machine is not None and self._machine is not None and own is not None and self._own is not None
        busy, total = machine[0] - self._machine[0], machine[1] - self._machine[1]
        cores = os.cpu_count() or 1
        if total < 2 * cores:  # under ~20 ms of jiffies: too coarse to say anything
            return None
        per_core = total / cores
        busy_cores = busy / per_core
        own_cores = (own - self._own) / per_core
        return CpuLoad(cores, busy_cores, max(0.0, busy_cores - own_cores))
