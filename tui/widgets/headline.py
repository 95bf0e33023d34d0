"""The kernel pane's comparison line: eager -> compiled (or static -> dynamic) counts, and the
ratios only as far as their spreads allow; with grad, the same per pass; then why figures are noisy.

Pure: built from the measurements on screen, so the headline, the demo and the tests agree.
"""

from __future__ import annotations

from rich.text import Text

from probes.link.protocol import Measurement
from probes.link.summary import format_transfers, mode_label, peak_part, ratio
from tui.views import ModeView
from tui.widgets.facts import fact_lines
from tui.widgets.passes import pass_comparisons
from tui.widgets.spread import Time, cost_text, noise_line, ratio_text, time_text

TIMES: tuple[Time, ...] = ("device", "wall")


def _part(m: Measurement) -> str:
    count = m.kernels_per_call
    return f"{mode_label(m)} {count:g} kernel{'' if count == 1 else 's'} / {format_transfers(m)}{peak_part(m)}"


def static_and_dynamic(measurements: list[Measurement]) -> tuple[Measurement, Measurement] | None:
    """The static compile and the dynamic-shape compile among ``measurements``, when both are."""
    dynamic = next((m for m in measurements if m.mode == "dynamic"), None)
    static = next((m for m in measurements if m.mode not in ("eager", "dynamic")), None)
    return (static, dynamic) if static is not None and dynamic is not None else None


def dynamic_line(static: Measurement, dynamic: Measurement) -> Text:
    """``dynamic vs compiled: device 340 µs vs 275 µs, 1.24x slower · wall ...``."""
    line = Text(f"dynamic vs {static.mode}: ", style="bold")
    for which in TIMES:
        if which == "wall":
            line.append(" · ")
        line.append(f"{which} ")
        line.append_text(time_text(dynamic, which, wide=False))
        line.append(" vs ")
        line.append_text(time_text(static, which, wide=False))
        line.append(", ")
        line.append_text(cost_text(static, dynamic, which))
    return line


def readings_apart(eager: ModeView | None, compiled: ModeView | None) -> str | None:
    """Why the eager and compiled readings shown make no ratio: they came from separate requests
    (say, eager from a sweep taken under load, compiled from a later run), so what moved between
    the two runs is in their ratio and no interval shows it. None when they came from one."""
    if eager is None or compiled is None or eager.batch is None or compiled.batch is None:
        return None
    if eager.batch == compiled.batch:
        return None
    if eager.activity in ("waiting", "measuring"):
        return "measured in separate runs; measuring eager beside compiled…"
    return "measured in separate runs, ctrl+r re-runs"


def comparison_text(
    eager: Measurement | None,
    others: list[Measurement],
    width: int,
    *,
    apart: str | None = None,
    two_processes: bool = False,
) -> Text:
    """Everything the headline says about the measurements shown (empty when there are none); its
    counts, ratios and passes are facts, broken between each other at ``width`` cells. ``apart``
    (``readings_apart``): why eager and compiled make no ratio, said in its place;
    ``two_processes``: their wall times were timed in two processes (``FocusView.two_processes``),
    so a host-bound call's wall ratio is no conclusion."""
    shown = [m for m in [eager, *others] if m is not None]
    if not shown:
        return Text()
    first = [Text(" -> ".join(_part(m) for m in shown), style="bold")]
    lines = [first]
    compiled = others[0] if others else None
    if eager is not None and compiled is not None:
        if apart is not None:
            first.append(Text(f"ratio unclear: {apart}", style="yellow"))
        else:
            ratios = ((which, ratio(eager, compiled, which, two_processes=two_processes)) for which in TIMES)
            first += [ratio_text(found, which) for which, found in ratios if found is not None]
        if eager.grad and compiled.grad:
            lines.append(pass_comparisons(eager, compiled))
    text = fact_lines(Text(), lines, width)
    pair = static_and_dynamic(others)
    if pair is not None:
        text.append("\n")
        text.append_text(dynamic_line(*pair))
    noise = noise_line(shown)
    if noise is not None:
        text.append("\n")
        text.append_text(noise)
    return text
