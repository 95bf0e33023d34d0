"""Deltas of a result against a pinned one (kernels, transfers, bytes, device and wall time, peak
memory).

Torch-free: the app and ``kernel-tui profile --baseline`` use the same code. A time delta smaller
than the noise of the two measurements (half their interquartile ranges, relative, added) is "no
change"; counts and bytes are exact, so any change is one. Lower is better for every metric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from probes.link.protocol import Measurement
from probes.link.summary import format_bytes, format_time_us, transfers

METRICS = ("kernels", "transfers", "bytes", "device_time", "wall_time", "peak_memory")
Metric = Literal["kernels", "transfers", "bytes", "device_time", "wall_time", "peak_memory"]
Verdict = Literal["better", "worse", "same"]


@dataclass(frozen=True)
class Delta:
    metric: str
    mode: str
    size: int
    base: float
    now: float
    noise: float
    """Relative change below which the two figures cannot be told apart (0 for exact figures)."""

    @property
    def change(self) -> float:
        """Relative change, now against base (+0.10 is 10% more)."""
        return (self.now - self.base) / self.base if self.base else 0.0

    @property
    def verdict(self) -> Verdict:
        if abs(self.change) <= self.noise or self.now == self.base:
            return "same"
        return "worse" if self.now > self.base else "better"

    def text(self) -> str:
        sign = f"{self.change:+.1%}"
        noise = f" (noise ±{self.noise:.1%})" if self.noise else ""
        shown = {"better": "better", "worse": "WORSE", "same": "no change"}[self.verdict]
        was, now = with_unit(self.metric, self.base), with_unit(self.metric, self.now)
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
        return f"{value:g} kernel" + ("" if value == 1 else "s")
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
            deltas.append(Delta(metric, m.mode, m.size, was, now, now_noise + was_noise))
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
