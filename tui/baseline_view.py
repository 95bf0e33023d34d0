"""A pinned result per chain, and how later results read against it.

The pin is what was on screen for the chain when the user pinned it (the focus size in every
mode shown, and the chain's sweep), kept in the workspace as protocol JSON (without the generated
source, which no delta needs). Later results of the same chain are set against it with
``probes.link.baseline.compare`` (the same noise-aware deltas as ``kernel-tui profile --baseline``): a
time delta inside the noise of the two measurements is "no change", counts and bytes are exact.
Only results measured alike are compared: same device, dtype and grad setting.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.text import Text

from probes.link.baseline import Delta, compare
from probes.link.protocol import MODES, Measurement, ProtocolError, from_dict, to_dict
from probes.link.summary import format_size

VERDICT_STYLES = {"worse": "bold red", "better": "green", "same": "dim", "unclear": "yellow"}
VERDICT_WORDS = {"worse": "worse", "better": "better", "same": "no change", "unclear": "not judged"}


def pin_record(measurements: list[Measurement]) -> list[dict[str, Any]]:
    """``measurements`` as the workspace keeps them (JSON, generated source left out)."""
    record = []
    for m in measurements:
        compile_info = dataclasses.replace(m.compile, generated_source={}, launch_config={}) if m.compile else None
        record.append(to_dict(dataclasses.replace(m, compile=compile_info)))
    return record


def read_pin(record: Any) -> list[Measurement]:
    """The measurements of a pin from the workspace; ValueError in plain words if it is not one."""
    if not isinstance(record, list):
        raise ValueError("a pin is a list of measurements")
    try:
        return [from_dict(Measurement, item, "pin") for item in record]
    except ProtocolError as exc:
        raise ValueError(str(exc)) from None


def _alike(m: Measurement) -> tuple[str, str, bool]:
    return (m.device, m.dtype, m.grad)


def pin_deltas(pinned: list[Measurement], current: list[Measurement]) -> list[Delta]:
    """Every metric of every (mode, size) measured alike in both (see the module doc)."""
    deltas = []
    for target in dict.fromkeys(map(_alike, current)):
        deltas += compare([m for m in pinned if _alike(m) == target], [m for m in current if _alike(m) == target])
    return deltas


def _delta_words(d: Delta) -> Text:
    style = VERDICT_STYLES[d.verdict]
    if d.metric == "kernels":
        return Text(f"kernels {d.base:g} -> {d.now:g}", style=style)
    if d.metric == "transfers":
        return Text(f"{d.base:.2g}N -> {d.now:.2g}N", style=style)
    if d.metric == "bytes":
        return Text("bytes " + f"{d.change:+.0%}", style=style)
    name = d.metric.removesuffix("_time")
    if d.verdict == "unclear":
        return Text(f"{name} {d.change:+.0%} not judged", style=style)
    if d.verdict == "same":
        return Text(
            f"{name} no change" + (f" ({d.change:+.0%}, within ±{d.noise:.0%})" if d.change else ""), style=style
        )
    return Text(f"{name} {d.change:+.0%} {VERDICT_WORDS[d.verdict]}", style=style)


def baseline_line(pinned: list[Measurement], current: list[Measurement]) -> Text:
    """``vs pin · eager: device no change (+2%, noise ±4%), wall ... · compiled: kernels 1 -> 2``:
    counts and bytes only when they changed, times always (their verdict is the point)."""
    line = Text("vs pin", style="bold magenta")
    deltas = pin_deltas(pinned, current)
    if not deltas:
        have = sorted({(m.mode, m.size) for m in pinned}, key=lambda k: (k[1], k[0]))
        what = ", ".join(f"{mode} N={format_size(size)}" for mode, size in have[:4])
        line.append(f": nothing measured alike here (the pin has {what or 'nothing'}", style="dim")
        line.append(
            f", {pinned[0].dtype}, {'fwd+bwd' if pinned[0].grad else 'forward'})" if pinned else ")", style="dim"
        )
        return line
    by_mode: dict[str, list[Delta]] = {}
    for d in deltas:
        by_mode.setdefault(d.mode, []).append(d)
    for mode, found in sorted(
        by_mode.items(), key=lambda item: MODES.index(item[0]) if item[0] in MODES else len(MODES)
    ):
        shown = [d for d in found if d.metric.endswith("_time") or d.verdict != "same"]
        if any(d.metric == "transfers" for d in shown):
            shown = [d for d in shown if d.metric != "bytes"]  # the same change, said once
        line.append(f" · {mode}: ", style="bold")
        for i, d in enumerate(shown):
            if i:
                line.append(", ")
            line.append_text(_delta_words(d))
    return line


def delta_cell(deltas: list[Delta], size: int, mode: str) -> Text:
    """The sweep's ``vs pin`` cell: the device time's change, ``≈`` inside the noise."""
    found = next((d for d in deltas if d.size == size and d.mode == mode and d.metric == "device_time"), None)
    if found is None:
        return Text("")
    if found.verdict == "same":
        return Text("≈", style="dim", justify="right")
    if found.verdict == "unclear":
        return Text("?", style=VERDICT_STYLES["unclear"], justify="right")
    return Text(f"{found.change:+.0%}", style=VERDICT_STYLES[found.verdict], justify="right")
