"""Deltas of a result against a pinned one (kernels, transfers, bytes, device and wall time, peak
memory).

Torch-free: the app and ``kernel-tui profile --baseline`` use the same code. A time delta smaller
than the noise of the two measurements (half their interquartile ranges, relative, added, and the
timers' resolution, ``TIME_FLOOR_US``) is "no change"; counts and bytes are exact, so any change
is one. Lower is better for every metric.

A baseline is a report from another process, and the spread a reading carries is that of one
process: a host's time per call differs from one process to the next by far more (bare processes
time the same ~40 µs compiled call at 35-77 µs on the H200). So a time the host decides is not
judged, and the delta says why instead of a verdict:

- a wall time of a *host-bound* call (its kernels take less than ``summary.HOST_BOUND_SHARE`` of it: the
  rest is Python, dispatch and launch overhead, whose speed is the process's);
- on the CPU, where every time is the host's, a time under ``CPU_SHORT_US`` (a call that short is
  mostly fixed costs: the same ``(a + b).relu()`` at N=100 read 2.7 µs and 3.8 µs of op time in
  two processes, each with a tight spread);
- any time measured while other processes loaded the machine (``summary.BUSY_REASON``).

A wall time that is mostly kernel time still holds the host's part (wall minus kernel time), and
that part differs between processes as much as a host-bound call does: its noise therefore counts
the host's part whole (``HOST_PART_SPREAD``). On the H100 the same compiled call at N=1e8 (kernels
93% of the call) read +1.4% and +5.2% wall time in a second process, each beyond one process's
spread, never beyond its host part (7%).

Device times, and wall times of calls that are mostly kernel time, are judged: the kernels run
alike from one process to the next, so a chain 30% slower is still caught by ``device_time`` at
every size on a GPU, and by ``wall_time`` where the kernels dominate. The trade-off: a regression of host
overhead alone (a slower Python path) is not caught at the sizes where it is all there is.

A gate (``--fail-on``) never passes on a figure it could not judge: ``gate`` sets apart what
regressed, what has no verdict, and which readings a busy machine spoiled (worth measuring again);
a gated figure still without a verdict is "could not judge", never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from probes.link.protocol import Measurement
from probes.link.summary import BUSY_REASON, counted, format_bytes, format_time_us, host_bound, transfers

METRICS = ("kernels", "transfers", "bytes", "device_time", "wall_time", "peak_memory")
Metric = Literal["kernels", "transfers", "bytes", "device_time", "wall_time", "peak_memory"]
Verdict = Literal["better", "worse", "same", "unclear"]
TIMES = ("device_time", "wall_time")
CPU_SHORT_US = 100.0
"""On the CPU, a time shorter than this is not judged across processes (see the module doc)."""
HOST_PART_SPREAD = 1.0
"""How much of a wall time's host part (its share outside the kernels) may differ between two
processes: all of it (a host's time per call varies up to 2x between processes)."""
TIME_FLOOR_US = 0.1
"""A time change smaller than this is no change: the profiler's and the timer's resolution, which
no interquartile range of a ~1 µs kernel shows."""


@dataclass(frozen=True)
class Delta:
    metric: str
    mode: str
    size: int
    base: float
    now: float
    noise: float
    """Relative change below which the two figures cannot be told apart (0 for exact figures)."""
    unjudged: str | None = None
    """Why the two figures are not compared at all (a host-bound wall time, a busy machine)."""
    busy_now: bool = False
    """Not compared because the current reading was taken on a busy machine (and the baseline's
    was not): a new reading may be judged."""

    @property
    def change(self) -> float:
        """Relative change, now against base (+0.10 is 10% more)."""
        return (self.now - self.base) / self.base if self.base else 0.0

    @property
    def verdict(self) -> Verdict:
        if self.unjudged is not None:
            return "unclear"
        if abs(self.change) <= self.noise or self.now == self.base:
            return "same"
        return "worse" if self.now > self.base else "better"

    def text(self) -> str:
        sign = f"{self.change:+.1%}"
        noise = f" (noise ±{self.noise:.1%})" if self.noise else ""
        was, now = with_unit(self.metric, self.base), with_unit(self.metric, self.now)
        if self.unjudged is not None:
            return f"{self.metric} {self.mode} N={self.size:,}: {was} -> {now}, {sign}: not judged ({self.unjudged})"
        shown = {"better": "better", "worse": "WORSE", "same": "no change"}[self.verdict]
        return f"{self.metric} {self.mode} N={self.size:,}: {was} -> {now}, {sign}{noise}: {shown}"


def with_unit(metric: str, value: float) -> str:
    """A metric's figure in its unit: µs/ms/s for times, B/kB/MB/GB for bytes, kernels, and
    input-sized arrays (``5N``) for transfers."""
    if metric in ("device_time", "wall_time"):
        return format_time_us(value)
    if metric in ("bytes", "peak_memory"):
        return format_bytes(value)
    if metric == "transfers":
        return f"{value:.3g}N"
    if metric == "kernels":
        return counted(value, "kernel")
    return f"{value:,.4g}"


def _relative_half_iqr(value: float | None, iqr: list[float] | None) -> float:
    if not iqr or len(iqr) != 2 or not value or value <= 0:
        return 0.0
    return (iqr[1] - iqr[0]) / 2 / value


def _figures(m: Measurement) -> dict[str, tuple[float | None, float]]:
    """Each metric's value and relative noise for one measurement."""
    return {
        "kernels": (m.kernels_per_call, 0.0),
        "transfers": (transfers(m), 0.0),
        "bytes": (float(m.bytes_per_call) if m.bytes_per_call is not None else None, 0.0),
        "device_time": (m.device_time_us, _relative_half_iqr(m.device_time_us, m.device_time_us_iqr)),
        "wall_time": (m.wall_time_us, _relative_half_iqr(m.wall_time_us, m.wall_time_us_iqr)),
        "peak_memory": (float(m.peak_memory_bytes) if m.peak_memory_bytes is not None else None, 0.0),
    }


def host_part(m: Measurement) -> float:
    """The share of the call's wall time outside its kernels (0 where either time is unknown)."""
    if not m.wall_time_us or m.wall_time_us <= 0 or m.device_time_us is None:
        return 0.0
    return max(0.0, 1.0 - m.device_time_us / m.wall_time_us)


def measured_busy(m: Measurement) -> bool:
    """Other processes loaded the machine while ``m`` was measured."""
    return any(r.startswith(BUSY_REASON) for r in m.noise_reasons)


def unjudged_reason(metric: str, base: Measurement, now: Measurement) -> str | None:
    """Why ``metric`` of the two measurements is not compared (see the module doc), or None."""
    if metric not in TIMES:
        return None
    if measured_busy(base) or measured_busy(now):
        return "measured on a busy machine: re-run on a quiet one"
    value = "device_time_us" if metric == "device_time" else "wall_time_us"
    if any(m.device == "cpu" and (getattr(m, value) or 0.0) < CPU_SHORT_US for m in (base, now)):
        return f"a CPU call under {CPU_SHORT_US:.0f} µs is mostly fixed costs, whose speed differs between processes"
    if metric == "wall_time":
        shares = [share for m in (base, now) if (share := host_bound(m)) is not None]
        if shares:
            return (
                f"host-bound: kernels are {min(shares):.0%} of the call, and a host's time per call "
                "differs between processes beyond one report's spread; judge device_time"
            )
    return None


def compare(baseline: list[Measurement], current: list[Measurement]) -> list[Delta]:
    """Every metric of every (mode, size) present in both, in size then mode order."""
    pinned = {(m.mode, m.size): m for m in baseline}
    deltas = []
    for m in sorted(current, key=lambda r: (r.size, r.mode)):
        base = pinned.get((m.mode, m.size))
        if base is None:
            continue
        ours, theirs = _figures(m), _figures(base)
        for metric in METRICS:
            now, now_noise = ours[metric]
            was, was_noise = theirs[metric]
            if now is None or was is None:
                continue
            floor = TIME_FLOOR_US / was if metric in TIMES and was > 0 else 0.0
            if metric == "wall_time":
                floor += HOST_PART_SPREAD * host_part(base)  # the pinned call's: a slower host must not widen it
            unjudged = unjudged_reason(metric, base, m)
            busy_now = unjudged is not None and measured_busy(m) and not measured_busy(base)
            deltas.append(Delta(metric, m.mode, m.size, was, now, now_noise + was_noise + floor, unjudged, busy_now))
    return deltas


def parse_fail_on(text: str) -> tuple[str, float]:
    """``device_time:5%`` -> ("device_time", 0.05); ValueError in plain words otherwise."""
    match = re.fullmatch(r"\s*([a-z_]+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*%?\s*", text)
    if not match or match.group(1) not in METRICS:
        raise ValueError(f"'{text}' is not METRIC:PCT with METRIC one of {', '.join(METRICS)} (e.g. device_time:5%)")
    return match.group(1), float(match.group(2)) / 100


def regressions(deltas: list[Delta], metric: str, threshold: float) -> list[Delta]:
    """The deltas of ``metric`` that got worse by more than ``threshold`` and beyond their noise."""
    return [d for d in deltas if d.metric == metric and d.verdict == "worse" and d.change > threshold]


@dataclass(frozen=True)
class Gate:
    """What ``--fail-on`` concludes: the gated deltas that regressed, the gated figures without a
    verdict (one line each), and the readings worth measuring again (size, mode)."""

    regressed: list[Delta] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)
    busy: list[tuple[int, str]] = field(default_factory=list)

    @property
    def outcome(self) -> Literal["passed", "failed", "unjudged"]:
        """A regression fails whatever else is unknown; otherwise a gated figure without a
        verdict leaves the gate unjudged: it never passes on what it could not judge."""
        if self.regressed:
            return "failed"
        return "unjudged" if self.unjudged else "passed"


def gate(baseline: Iterable[Measurement], current: Iterable[Measurement], fail_on: list[tuple[str, float]]) -> Gate:
    """Judge every ``fail_on`` (metric, threshold) at every size and mode the two share. Counts,
    transfers and bytes are exact and always judged; a figure known on one side only, a time the
    host decides and a reading from a busy machine have no verdict (``Gate.unjudged``)."""
    pinned = {(m.mode, m.size) for m in baseline}
    current = list(current)
    shared = sorted({(m.size, m.mode) for m in current if (m.mode, m.size) in pinned})
    deltas = {(d.metric, d.size, d.mode): d for d in compare(list(baseline), current)}
    found = Gate()
    for metric, threshold in fail_on:
        if not shared:
            found.unjudged.append(f"{metric}: no size and mode in common with the baseline")
        for size, mode in shared:
            delta = deltas.get((metric, size, mode))
            if delta is None:
                found.unjudged.append(f"{metric} {mode} N={size:,}: not known in the baseline or in this run")
            elif delta.unjudged is not None:
                found.unjudged.append(delta.text())
                if delta.busy_now and (size, mode) not in found.busy:
                    found.busy.append((size, mode))
            elif regressions([delta], metric, threshold):
                found.regressed.append(delta)
    return found
