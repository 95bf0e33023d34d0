"""Where each kernel sits against the machine's roofs: the figures behind the roofline view.

A kernel is placed at (arithmetic intensity in FLOP/byte, achieved TFLOP/s) only when the worker
counted its FLOPs and knows its bytes; any other kernel is listed with why it has no place (FLOPs
unknown, bytes unknown), never put at a guessed position. The roofs are the measured peak
bandwidth (a line of slope 1 in log-log: TFLOP/s = intensity x TB/s) and the measured compute
peak of each dtype (flat). Pure functions over protocol Measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from probes.link.protocol import KernelRow, Measurement
from probes.link.summary import SHORT_DTYPE_NAMES, format_flop_rate, format_flops

ROOF_STYLE = "red"


@dataclass(frozen=True)
class Roof:
    label: str
    tflops: float


@dataclass(frozen=True)
class Roofs:
    bandwidth_gbps: float | None
    compute: tuple[Roof, ...] = ()

    @property
    def peak_tflops(self) -> float | None:
        return max((r.tflops for r in self.compute), default=None)

    def attainable(self, intensity: float) -> float | None:
        """The roof's TFLOP/s at ``intensity`` (the lower of the two roofs there)."""
        bandwidth = intensity * self.bandwidth_gbps / 1000 if self.bandwidth_gbps else None
        found = [v for v in (bandwidth, self.peak_tflops) if v is not None]
        return min(found) if found else None

    @property
    def ridge(self) -> float | None:
        """The intensity where the bandwidth roof meets the highest compute roof."""
        peak = self.peak_tflops
        return peak / (self.bandwidth_gbps / 1000) if peak and self.bandwidth_gbps else None


@dataclass(frozen=True)
class Entry:
    """One kernel of one mode: its point, or why it has none."""

    measurement: Measurement
    row: KernelRow
    intensity: float | None
    tflops: float | None
    why_not: str | None
    """None when placed; else "FLOPs unknown", "bytes unknown"..."""

    @property
    def placed(self) -> bool:
        return self.why_not is None

    @property
    def mode(self) -> str:
        return self.measurement.mode


def entry(m: Measurement, row: KernelRow) -> Entry:
    if row.flops is None:
        return Entry(m, row, None, None, "FLOPs unknown")
    if not row.bytes:
        return Entry(m, row, None, row.tflops, "bytes unknown")
    if row.intensity is None or not row.tflops or row.intensity <= 0:
        return Entry(m, row, row.intensity, row.tflops, "no time measured" if not row.tflops else "no intensity")
    return Entry(m, row, row.intensity, row.tflops, None)


def entries(measurements: list[Measurement]) -> list[Entry]:
    """Every kernel (not memcpy/memset) of every measurement, placed ones first in mode order."""
    found = [entry(m, row) for m in measurements for row in m.kernels if row.kind == "kernel"]
    return sorted(found, key=lambda e: not e.placed)


def roofs(
    measurements: list[Measurement], device_peak_gbps: float | None, device_peaks_tflops: dict[str, float]
) -> Roofs:
    """The bandwidth roof (the measurements' peak, else the device's) and one compute roof per
    dtype the measurements' kernels ran in (what the measurements used, else the device's)."""
    bandwidth = next((m.peak_gbps for m in measurements if m.peak_gbps), None) or device_peak_gbps
    compute: dict[str, float] = {}
    for m in measurements:
        dtype = kernel_dtype(m)
        peak = m.compute_peak_tflops or device_peaks_tflops.get(dtype)
        if peak:
            compute.setdefault(dtype, peak)
    return Roofs(bandwidth, tuple(Roof(f"{dtype} peak", tflops) for dtype, tflops in compute.items()))


def kernel_dtype(m: Measurement) -> str:
    """The dtype the counted kernels ran in (a declared bf16 input in an fp32 setting), else the
    measurement's."""
    counted = {op for row in m.kernels if row.flops for op in row.ops}
    dtype = next((op.dtype for op in m.ops if op.op in counted and op.dtype), None)
    return SHORT_DTYPE_NAMES.get(dtype, dtype) if dtype else m.dtype


LATENCY_SHARE = 0.10
"""A kernel under this share of the roof at its intensity is held by neither roof: latency-bound."""
MEMORY_SHARE = 0.50
"""Where the ridge does not decide, a kernel that moves bytes at this share of the peak is memory-bound."""
LAUNCH_FLOOR_US = 3.0
"""A launch this short is mostly its own start and end (the launch floor): latency-bound."""
BOUNDS = ("memory", "compute", "latency")


def bound(e: Entry, r: Roofs) -> str:
    """What holds a kernel back: ``memory``, ``compute`` or ``latency`` ("" when its figures do
    not say). The rule, in docs/measuring.md: a placed kernel under ``LATENCY_SHARE`` of the roof
    at its intensity is latency-bound (its bandwidth and its compute rate are both low), else
    memory-bound left of the ridge and compute-bound right of it; where the ridge does not decide,
    a kernel is memory-bound at ``MEMORY_SHARE`` of the peak bandwidth; any kernel whose launches last
    under ``LAUNCH_FLOOR_US`` is latency-bound."""
    row = e.row
    if e.placed and e.intensity is not None and e.tflops is not None:
        roof = r.attainable(e.intensity)
        if roof and e.tflops < LATENCY_SHARE * roof:
            return "latency"
        if r.ridge is not None:
            return "memory" if e.intensity < r.ridge else "compute"
    if row.gbps is not None and r.bandwidth_gbps and row.gbps >= MEMORY_SHARE * r.bandwidth_gbps:
        return "memory"
    if row.launches_per_call > 0 and 0 < row.time_per_call_us / row.launches_per_call < LAUNCH_FLOOR_US:
        return "latency"
    return ""


def pct_of_roof(e: Entry, r: Roofs) -> float | None:
    """Achieved TFLOP/s as a share of the roof at the kernel's intensity."""
    if not e.placed or e.intensity is None or e.tflops is None:
        return None
    roof = r.attainable(e.intensity)
    return e.tflops / roof * 100 if roof else None


def roofline_facts(m: Measurement, row: KernelRow) -> list[tuple[str, Text]]:
    """FLOPs, intensity, TFLOP/s and % of the compute peak of one kernel, for its detail view."""
    if row.flops is None:
        return [("FLOPs/call", Text("unknown (not counted for this kernel)", style="dim"))]
    facts = [("FLOPs/call", Text(format_flops(row.flops)))]
    facts.append(
        (
            "intensity",
            Text(f"{row.intensity:.3g} FLOP/byte" if row.intensity is not None else "unknown (bytes unknown)"),
        )
    )
    if row.tflops is not None:
        peak = (
            f" ({row.pct_of_compute_peak:.0f}% of the measured {format_flop_rate(m.compute_peak_tflops)} peak)"
            if (row.pct_of_compute_peak is not None and m.compute_peak_tflops)
            else ""
        )
        facts.append(("achieved", Text(format_flop_rate(row.tflops) + peak)))
    return facts
