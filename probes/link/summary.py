"""Derived figures and their formatting, shared by every client (headless tables and the TUI).

Torch-free: it works on protocol Measurements only, so the replay worker and the UI use it too.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from probes.link.protocol import Measurement
from probes.link.settings import MAX_SIZE as MAX_SIZE
from probes.link.settings import parse_size as parse_size
from probes.link.settings import parse_sizes as parse_sizes

ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp64": 8}
SHORT_DTYPE_NAMES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float64": "fp64"}
"""torch's dtype names (as op traces write them) -> the short names requests and peaks use."""


def input_dtypes(m: Measurement) -> str:
    """The dtype(s) of the inputs ``m`` ran with: what the chain declares (``x: [N, 4096] bf16``),
    the run's dtype for the rest. ``m.dtype`` alone read "fp32" over a chain of bf16 matmuls."""
    return _input_dtypes(m.chain, m.dtype)


@functools.lru_cache(maxsize=256)
def _input_dtypes(chain: str, run_dtype: str) -> str:
    from probes.chain.expr import ChainError, parse_chain  # off the app's first frame

    try:
        declared = [decl.dtype or run_dtype for decl in parse_chain(chain).inputs]
    except ChainError:
        return run_dtype
    return "+".join(dict.fromkeys(declared)) or run_dtype


def format_size(n: int) -> str:
    """1e2, 1e6, 3e7 when exact powers-ish, else with thousands separators."""
    exponent = int(math.log10(n)) if n > 0 else 0
    mantissa = n / 10**exponent if n > 0 else 0
    if n >= 100 and mantissa == int(mantissa):
        return f"{int(mantissa)}e{exponent}" if mantissa != 1 else f"1e{exponent}"
    return f"{n:,}"


def counted(count: float, noun: str) -> str:
    """``1 kernel``, ``2 kernels``, ``1.5 kernels``: a count and its noun, singular for exactly one."""
    return f"{count:g} {noun}" + ("" if count == 1 else "s")


def listed(words: list[str]) -> str:
    """``1e2``, ``1e2 and 1e4``, ``1e2, 1e4 and 1e6``."""
    return f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else "".join(words)


def sizes_measured(sizes: Iterable[int], measured: Iterable[int], failed: Iterable[int]) -> str:
    """``4 of 5 sizes measured, 1e2 failed``: how much of a sweep was measured, the sizes that
    failed on their own, and the rest (neither: a sweep cut short) ``missing``. A size is
    measured when every mode asked for came back (the caller decides that)."""
    sizes, done, bad = list(dict.fromkeys(sizes)), set(measured), set(failed) - set(measured)
    text = f"{len([n for n in sizes if n in done])} of {counted(len(sizes), 'size')} measured"
    for word, group in (
        ("failed", [n for n in sizes if n in bad]),
        ("missing", [n for n in sizes if n not in done | bad]),
    ):
        if group:
            text += f", {listed([format_size(n) for n in group])} {word}"
    return text


def format_time_us(us: float | None) -> str:
    if us is None:
        return "-"
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    if us >= 10:
        return f"{us:.1f} µs"
    return f"{us:.2f} µs"


SI_PREFIXES = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0))


def three_figures(value: float) -> str:
    return f"{value:.3g}"


def format_si(value: float, unit: str, figure: Callable[[float], str] = three_figures, sep: str = " ") -> str:
    """``value`` in ``unit`` with the SI prefix its figure needs once rounded: 999,999 FLOP is
    ``1 MFLOP``, never ``1e+03 kFLOP``; ``figure`` writes the scaled value, ``sep`` follows it."""
    for index, (prefix, scale) in enumerate(SI_PREFIXES):
        if abs(value) < scale and scale > 1:
            continue
        text = figure(value / scale)
        if abs(float(text)) >= 1000 and index > 0:  # rounded up into the next prefix
            prefix, scale = SI_PREFIXES[index - 1]
            text = figure(value / scale)
        return f"{text}{sep}{prefix}{unit}"
    raise AssertionError("unreachable: the last prefix takes every value")


def format_flops(flops: float) -> str:
    return format_si(flops, "FLOP")


def format_flop_rate(tflops: float) -> str:
    """A rate given in TFLOP/s, with the prefix its size needs (``12.3 GFLOP/s``)."""
    return format_si(tflops * 1e12, "FLOP/s")


def _bytes_figure(value: float) -> str:
    return f"{value:.{2 if abs(value) < 10 else 1 if abs(value) < 100 else 0}f}"


def format_bytes(nbytes: float | None) -> str:
    if nbytes is None:
        return "-"
    if abs(nbytes) < 1e3:
        return f"{int(nbytes)} B"
    return format_si(nbytes, "B", _bytes_figure)


def format_gbps(gbps: float | None) -> str:
    if gbps is None:
        return "-"
    return f"{gbps:,.0f} GB/s" if gbps >= 10 else f"{gbps:.2f} GB/s"


MAX_ARRAYS = 16


def transfers(measurement: Measurement) -> float | None:
    """Bytes per call in units of one input-sized array (5.0 for eager add+relu, 3.0 compiled);
    None where the inputs are not N-element arrays (``x: [N, 4096]`` and ``w`` of a matmul), where
    such a unit would only be a big number."""
    element = ELEMENT_BYTES.get(measurement.dtype)
    if not measurement.bytes_per_call or not element:
        return None
    unit = measurement.size * element
    arrays = measurement.input_bytes / unit
    if measurement.input_bytes and (abs(arrays - round(arrays)) > 0.01 or not 1 <= round(arrays) <= MAX_ARRAYS):
        return None
    return measurement.bytes_per_call / unit


def format_transfers(measurement: Measurement) -> str:
    count = transfers(measurement)
    if count is None:
        return format_bytes(measurement.bytes_per_call)
    return f"{count:.0f}N" if abs(count - round(count)) < 0.05 else f"{count:.1f}N"


def peak_part(measurement: Measurement) -> str:
    """`` / 4.00 MB peak`` where the measurement's peak memory is known, else nothing."""
    peak = measurement.peak_memory_bytes
    return f" / {format_bytes(peak)} peak" if peak is not None else ""


def mode_label(measurement: Measurement) -> str:
    """The mode as it really ran: a compiled mode that fell back to eager says so."""
    if measurement.mode != "eager" and not measurement.ran_compiled:
        return f"{measurement.mode} (ran eager!)"
    return measurement.mode


Verdict = Literal["faster", "slower", "unclear"]


def format_ratio(value: float) -> str:
    """Two decimals wherever they round to 0.10 or more, else two significant digits: a compiled
    call 300x slower than eager reads ``0.0033``, not ``0.00``."""
    return f"{value:.2f}" if round(value, 2) >= 0.1 else f"{value:.2g}"


def spread(measurement: Measurement, which: Literal["wall", "device"]) -> tuple[float, float, float]:
    """(p25, median, p75) of the wall or device time per call; a recording without spread is exact.
    Not for the wall time of an early-rows result (``Measurement.wall_pending``): it has none yet."""
    value = measurement.wall_time_us if which == "wall" else measurement.device_time_us
    if value is None:
        raise ValueError(f"{measurement.mode} at N={measurement.size}: its wall time is still being measured")
    iqr = measurement.wall_time_us_iqr if which == "wall" else measurement.device_time_us_iqr
    if not iqr or len(iqr) != 2:
        return value, value, value
    return min(iqr[0], value), value, max(iqr[1], value)


BUSY_REASON = "machine busy"
"""How a measurement's noise reason starts when other processes loaded the machine meanwhile
(``probes.engine.noise``): every rep can then be slow alike, so a tight spread proves nothing."""
DRIFT_REASON = "the profiled reps ran slower than the timed ones"
"""The noise reason of a measurement whose two sets of reps ran at different speeds."""
KERNELS_OVER_WALL = 1.05
"""Kernel times that add up to more than this many times the call's wall time contradict it (a
few percent either way is the two sets of reps' own spread)."""


def kernels_over_wall_reason(device_us: float, wall_us: float) -> str | None:
    """A call's kernels cannot take longer than the call: kernel times (from the profiled reps)
    that add up to more than the wall time (from the timed reps) say the two sets of reps ran at
    different speeds, and neither figure is to be read on its own (on a loaded CPU machine, eager
    rows of ``(a + b).relu()`` can read well above their wall time). The words the engine gives
    the measurement (``profile`` prints them under its table) and the app's kernel detail shows."""
    if wall_us <= 0 or device_us <= KERNELS_OVER_WALL * wall_us:
        return None
    return f"the kernel times add up to {device_us / wall_us:.1f}x the call's wall time: {DRIFT_REASON}"


def device_over_wall(m: Measurement) -> str | None:
    """Why ``m``'s device time stands above its wall time, in one line; None where it does not
    (or its wall time is still being measured, ``Measurement.wall_pending``)."""
    if m.wall_time_us is None:
        return None
    return kernels_over_wall_reason(m.device_time_us, m.wall_time_us)


HOST_BOUND_SHARE = 0.5
"""A call whose kernels take less than this share of its wall time is host-bound: its wall time
is mostly the host's (Python, dispatch, launches), whose speed differs from one process to the
next by more than any one process's spread. The one rule: the wall ratio is labelled by it
(``Ratio.host_bound``), the baseline leaves such wall times unjudged (docs/measuring.md)."""
WIDE_INTERVAL = 1.4
"""A ratio whose interval's ends are further apart than this factor says nothing confident:
either time moved that much between reps."""


def host_bound(m: Measurement) -> float | None:
    """The share of the call its kernels take, when under ``HOST_BOUND_SHARE``; else None."""
    if not m.wall_time_us or m.wall_time_us <= 0:
        return None
    share = m.device_time_us / m.wall_time_us
    return share if share < HOST_BOUND_SHARE else None


TWO_PROCESSES = "eager and compiled timed in two processes"
"""The unclear reason of a host-bound call's wall ratio whose readings came from two workers."""


def unreliable_reason(
    eager: Measurement,
    compiled: Measurement,
    which: Literal["wall", "device"],
    low: float,
    high: float,
    *,
    two_processes: bool = False,
) -> str | None:
    """Why the ratio of two readings is no conclusion whatever its value, or None.

    The interval of a ratio covers the spread inside each reading, not what moved between them: a
    reading taken while other processes loaded the cores, or one whose own reps drifted, can be off
    by a factor that no interval shows (docs/measuring.md has a pair read at 66x and at 2.3x). So
    such a reading makes the ratio "unclear" however tight its interval, and so does an interval
    too wide to state a factor. Readings measured in different requests are kept
    apart before they get here (the app pairs readings of one request only). ``two_processes``:
    the two were timed in two processes (the app's eager and compile workers), whose host speed
    differs by up to 2x, so the wall ratio of a host-bound call says nothing either. Kernel times
    above the wall time (``DRIFT_REASON``) put the profiled reps in doubt, which only the device
    time comes from: the wall ratio, from the timed reps, stands (on the CPU the profiler's own
    cost lifts short ops' times above the wall time in most readings). The reason carries its
    advice: "re-run" where a new measurement can help."""
    reasons = [r for m in (eager, compiled) for r in m.noise_reasons]
    if any(r.startswith(BUSY_REASON) for r in reasons):
        return f"{BUSY_REASON}, re-run"
    if which == "device" and any(DRIFT_REASON in r for r in reasons):
        return "the readings drifted, re-run"
    if low > 0 and high / low > WIDE_INTERVAL:
        return "wide spread, re-run"
    if two_processes and (host_bound(eager), host_bound(compiled)) != (None, None):
        return TWO_PROCESSES
    return None


@dataclass(frozen=True)
class Ratio:
    """eager / compiled time, with the interval the two spreads allow (low = eager p25 over
    compiled p75, high = eager p75 over compiled p25), and why it is no conclusion when the
    conditions it was measured under say so (``unreliable_reason``)."""

    value: float
    low: float
    high: float
    unclear_reason: str | None = None
    host_bound: bool = False
    """A wall ratio where either call is host-bound (``host_bound``): its figure is the host's
    speed in this process, so it is stated as its interval over reps, labelled, never bare."""

    @property
    def verdict(self) -> Verdict:
        """A ratio whose interval straddles 1, or whose readings cannot be trusted, is not a
        conclusion."""
        if self.unclear_reason is not None:
            return "unclear"
        if self.low > 1.0:
            return "faster"
        if self.high < 1.0:
            return "slower"
        return "unclear"

    def text(self) -> str:
        """``1.68x``, with the interval when it is wide enough to matter, ``(within noise)`` when
        it straddles 1, ``host-bound 0.26-0.34x`` (the interval only) for a host-bound wall ratio,
        ``unclear: machine busy, re-run`` (no figure) when it cannot be trusted."""
        if self.unclear_reason is not None:
            return self.unclear_text()
        if self.host_bound:
            return f"host-bound {self.span()}" + (" (within noise)" if self.verdict == "unclear" else "")
        if self.verdict == "unclear":
            return f"{format_ratio(self.value)}x (within noise: {self.interval()})"
        if self.high - self.low > 0.1 * self.value:
            return f"{format_ratio(self.value)}x ({self.interval()})"
        return f"{format_ratio(self.value)}x"

    def unclear_text(self) -> str:
        """``unclear: machine busy, re-run``."""
        return f"unclear: {self.unclear_reason}"

    def span(self) -> str:
        """The interval, ``0.27-0.34x``, or the one figure where its ends print alike."""
        return self.interval() if format_ratio(self.low) != format_ratio(self.high) else f"{format_ratio(self.value)}x"

    def interval(self) -> str:
        """``0.27-0.34x``."""
        return f"{format_ratio(self.low)}-{format_ratio(self.high)}x"


def ratio(
    eager: Measurement, compiled: Measurement, which: Literal["wall", "device"], *, two_processes: bool = False
) -> Ratio | None:
    """None where a time is zero, or a wall time still being measured; ``two_processes``: the two
    readings came from two processes (see ``unreliable_reason``)."""
    if which == "wall" and (eager.wall_pending or compiled.wall_pending):
        return None
    e25, e50, e75 = spread(eager, which)
    c25, c50, c75 = spread(compiled, which)
    if c50 <= 0 or c25 <= 0 or c75 <= 0:
        return None
    low, high = e25 / c75, e75 / c25
    apart = two_processes and which == "wall"
    bound = which == "wall" and (host_bound(eager), host_bound(compiled)) != (None, None)
    unclear = unreliable_reason(eager, compiled, which, low, high, two_processes=apart)
    return Ratio(e50 / c50, low, high, unclear, host_bound=bound)


@dataclass(frozen=True)
class Comparison:
    size: int
    eager: Measurement
    compiled: Measurement
    two_processes: bool = False
    """The two were timed in two processes (see ``unreliable_reason``)."""

    @property
    def device_ratio(self) -> Ratio | None:
        return ratio(self.eager, self.compiled, "device")

    @property
    def wall_ratio(self) -> Ratio | None:
        return ratio(self.eager, self.compiled, "wall", two_processes=self.two_processes)


def comparisons(
    results: Iterable[Measurement], compiled_mode: str = "compiled", *, two_processes: bool = False
) -> list[Comparison]:
    """Eager vs ``compiled_mode`` at every size that has both, in size order."""
    by_key = {(m.size, m.mode): m for m in results}
    pairs = []
    for size in sorted({m.size for m in by_key.values()}):
        eager, compiled = by_key.get((size, "eager")), by_key.get((size, compiled_mode))
        if eager and compiled:
            pairs.append(Comparison(size, eager, compiled, two_processes))
    return pairs


def crossover(pairs: list[Comparison]) -> int | None:
    """The smallest size from which the compiled chain is clearly faster per call (wall time, its
    interval above 1) at every larger size; None when it is not, or not clearly."""
    found = None
    for pair in reversed(pairs):
        wall = pair.wall_ratio
        if wall is None or wall.verdict != "faster":
            break
        found = pair.size
    return found


def sweep_verdict(pairs: list[Comparison]) -> str:
    """One line on where compiling pays off per call, never calling noise a conclusion."""
    size = crossover(pairs)
    if size is not None:
        return f"compiled is faster per call from N = {format_size(size)} up"
    largest = pairs[-1].wall_ratio if pairs else None
    if largest is not None and largest.unclear_reason is not None:
        return f"compiled vs eager per call is unclear at the largest size measured ({largest.unclear_reason})"
    if largest is not None and largest.verdict == "unclear":
        return "compiled vs eager per call is within noise at the largest size measured"
    return "compiled is not faster per call at the largest size measured"


def speeds(pair: Comparison) -> str:
    """``, device 1.60x, per call host-bound 0.26-0.34x``: both ratios of one pair, each named. The
    per-call (wall) one is the ratio the sweep's verdict (``crossover``) reads, so a size's line
    and the sweep's summary never disagree on what they both state."""
    found = [(what, r) for what, r in (("device", pair.device_ratio), ("per call", pair.wall_ratio)) if r]
    return "".join(f", {what} {r.text()}" for what, r in found)


def headline(eager: Measurement | None, compiled: Measurement | None) -> str:
    """``eager 2 kernels / 5N / 8.00 MB peak -> compiled 1 kernel / 3N / 4.00 MB peak, device
    1.60x, per call 0.52x`` (whatever is available)."""

    def part(m: Measurement) -> str:
        return f"{mode_label(m)} {counted(m.kernels_per_call, 'kernel')} / {format_transfers(m)}{peak_part(m)}"

    if eager and compiled:
        return f"{part(eager)} -> {part(compiled)}{speeds(Comparison(eager.size, eager, compiled))}"
    only = eager or compiled
    return part(only) if only else ""
