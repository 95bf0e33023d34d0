"""How spread and noise reach the screen: times with their ±, noisy figures marked, ratios stated
only as far as their interval allows.

Pure functions over protocol Measurements (no widget state), shared by the kernel pane, the sweep,
the kernel detail, the compare screen and the demo. The figures themselves come from
``probes.link.summary`` (``spread``, ``ratio``: a ratio's interval is the one the two spreads allow);
this module only says them: a ratio whose interval straddles 1 reads "no clear difference", never
as a speedup, and a noisy figure carries a ``~`` and the reasons in plain words.
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text

from probes.link.protocol import KernelRow, Measurement
from probes.link.summary import Ratio, device_over_wall, format_ratio, format_time_us, ratio, spread
from tui.widgets.cells import plain

NOISY_SPREAD = 0.10
"""An interquartile range wider than this fraction of the median makes a figure noisy (as the
engine's ``noisy`` flag counts it)."""
NOISY_MARK = "~"
NOISY_STYLE = "yellow"
OVER_WALL_MARK = ">wall"
"""After a device time that stands above the call's wall time (``summary.device_over_wall``: the
kernel detail says why in one line)."""
UNCLEAR = "no clear difference"
WALL_PENDING = "timing…"
"""The wall time of rows shown before their wall-time reps ended (``Measurement.wall_pending``)."""

Time = Literal["wall", "device"]
"""Which time of a call: the wall time a loop of calls gets, or the kernels' device time."""


def relative_spread(value: float, iqr: list[float] | None) -> float | None:
    """(p75 - p25) / median, or None when the figure has no spread (an older recording)."""
    if not iqr or len(iqr) != 2 or value <= 0:
        return None
    return (max(iqr[1], value) - min(iqr[0], value)) / value


def plus_minus(value: float, iqr: list[float] | None) -> str:
    """``±3%`` (half the interquartile range, relative), or "" without a spread."""
    rel = relative_spread(value, iqr)
    if rel is None:
        return ""
    half = rel / 2
    return f"±{half:.0%}" if half >= 0.005 else "±<1%"


def time_text(m: Measurement, which: Time, *, wide: bool = True) -> Text:
    """``174 µs ±3%`` (``wide``) or ``174 µs``; a figure whose spread is wide is marked ``~``, a
    device time above the wall time ``>wall``; ``timing…`` for a wall time still being measured."""
    if which == "wall" and m.wall_pending:
        return Text(WALL_PENDING, style="dim")
    p25, median, p75 = spread(m, which)
    iqr = [p25, p75] if p75 > p25 else None
    rel = relative_spread(median, iqr)
    noisy = rel is not None and rel > NOISY_SPREAD
    text = Text(format_time_us(median), style=NOISY_STYLE if noisy else "")
    if wide and iqr:
        text.append(f" {plus_minus(median, iqr)}", style=NOISY_STYLE if noisy else "dim")
    if noisy:
        text.append(NOISY_MARK, style=f"bold {NOISY_STYLE}")
    if which == "device" and device_over_wall(m) is not None:
        text.append(f" {OVER_WALL_MARK}", style=f"bold {NOISY_STYLE}")
    return text


def range_text(value: float | None, iqr: list[float] | None) -> str:
    """``170 µs - 181 µs (p25-p75)``, for the detail views."""
    if not iqr or len(iqr) != 2:
        return "no spread recorded"
    return f"{format_time_us(iqr[0])} - {format_time_us(iqr[1])} (p25-p75)"


def kernel_is_noisy(row: KernelRow) -> bool:
    rel = relative_spread(row.device_time_us, row.device_time_us_iqr)
    return rel is not None and rel > NOISY_SPREAD


MAX_REASONS = 1


def noise_reasons(measurements: list[Measurement]) -> list[str]:
    """Why the figures shown are noisy, each reason once (several modes often share one), a busy
    machine first: it explains the rest."""
    found = dict.fromkeys(reason for m in measurements if m.noisy for reason in m.noise_reasons)
    return sorted(found, key=lambda reason: "busy" not in reason)


def noise_line(measurements: list[Measurement]) -> Text | None:
    """``~ noisy (eager, compiled): machine busy: 2 of 2 cores loaded; ...`` or None."""
    noisy = [m for m in measurements if m.noisy]
    if not noisy:
        return None
    line = Text(f"{NOISY_MARK} noisy", style=f"bold {NOISY_STYLE}")
    line.append(f" ({', '.join(dict.fromkeys(m.mode for m in noisy))})", style=NOISY_STYLE)
    reasons = noise_reasons(noisy)
    said = "; ".join(reasons[:MAX_REASONS]) if reasons else "the spread between reps is wide"
    more = f" (+{len(reasons) - MAX_REASONS} more: enter on a row)" if len(reasons) > MAX_REASONS else ""
    line.append_text(plain(f": {said}{more}", NOISY_STYLE))
    return line


def ratio_text(found: Ratio | None, what: str = "", *, short: bool = False) -> Text:
    """A ratio as far as its interval allows: ``1.68x`` (green above 1, red below), with the
    interval when it is wide; "no clear difference" (``≈ same`` when ``short``) when it straddles 1;
    ``unclear: machine busy, re-run`` (``unclear`` when ``short``) when its readings cannot be trusted;
    a host-bound wall ratio that does not straddle 1 as its interval, labelled
    (``host-bound 0.27-0.34x``, ``0.27-0.34x hb`` when ``short``) and never coloured as a verdict:
    it is the host's speed in this process."""
    label = f"{what} " if what else ""
    if found is None:
        return Text("")
    if found.unclear_reason is not None:
        return Text("unclear" if short else f"{label}{found.unclear_text()}", style="yellow")
    if found.verdict == "unclear":
        if short:
            return Text("≈ same", style="dim yellow")
        bound = ", host-bound" if found.host_bound else ""
        return Text(f"{label}{UNCLEAR} ({found.interval()}{bound})", style="yellow")
    if found.host_bound:
        return Text(f"{found.span()} hb" if short else f"{label}host-bound {found.span()}", style="dim")
    style = "green" if found.verdict == "faster" else "red"
    text = Text(f"{label}{format_ratio(found.value)}x", style=style)
    if not short and found.high - found.low > 0.1 * found.value:
        text.append(f" ({found.interval()})", style="dim")
    return text


def cost_text(base: Measurement, other: Measurement, which: Time) -> Text:
    """How ``other`` compares with ``base`` in plain words: ``1.24x slower``, ``1.10x faster``, or
    "no clear difference" (e.g. a dynamic-shape compile against the static one)."""
    found = ratio(other, base, which)  # other / base: above 1, other takes longer
    if found is None:
        return Text("")
    if found.unclear_reason is not None:
        return Text(found.unclear_text(), style="yellow")
    if found.verdict == "unclear":
        return Text(f"{UNCLEAR} ({found.interval()} the time)", style="yellow")
    if found.verdict == "faster":
        return Text(f"{format_ratio(found.value)}x slower", style="red")
    return Text(f"{format_ratio(1 / found.value)}x faster", style="green")
