"""The demo's steps, as data: what each one measures and how its caption reads the measurement.

Captions are built from the measured figures (kernel names, counts, transfers, times), never
hard-coded ones, so the same steps tell the story on a GPU and on the CPU; the kernels they name
are the kernel pane's rows, by the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import probes
from probes.link.protocol import Measurement, SourceRef
from probes.link.summary import (
    comparisons,
    format_size,
    format_time_us,
    format_transfers,
    ratio,
    sweep_verdict,
    transfers,
)
from tui.widgets.spread import Time, ratio_text, time_text

Lookup = Callable[[str, int, str], "Measurement | None"]
"""(chain, size, mode) -> the measurement the demo has for it, if any."""

ADD = "c = a + b"
SEED = "(a + b).relu()"
EXAMPLE = SourceRef(
    str(Path(probes.__file__).resolve().parent / "examples" / "mlp_block.py"),
    "bias_gelu",
    ["x: [N // 1024, 1024]", "b: [1024]"],
)
"""A function of a file shipped with the package, profiled as a user's own (``kernel-tui FILE.py:NAME``)."""
EXAMPLE_NAME = f"{Path(EXAMPLE.path).name}:{EXAMPLE.name}"
"""What the step shows and its rows are called: the file's name, wherever the package lies."""
GPU_SWEEP = (100, 10_000, 1_000_000, 10_000_000, 100_000_000)
CPU_SWEEP = (100, 10_000, 1_000_000, 10_000_000)


def _kernels(m: Measurement) -> str:
    count = m.kernels_per_call
    return f"{count:g} kernel{'' if count == 1 else 's'}"


def _names(m: Measurement) -> str:
    """The kernel rows the kernel pane shows, by the same names; a row that does not run once per
    call says how often it does (so the names always add up to the count beside them)."""
    from tui.widgets.cells import display_name

    names = [display_name(k) + ("" if k.launches_per_call == 1 else f" ×{k.launches_per_call:g}") for k in m.kernels]
    return " + ".join(names) or "no kernel recorded"


def _arrays(m: Measurement) -> str:
    count = transfers(m)
    if count is None:
        return format_transfers(m)
    return f"{format_transfers(m)} ({count:.0f} array-sized transfers)"


def _time(m: Measurement, which: Time) -> str:
    """A time as the panes say it: ``~`` marks one whose spread is wide."""
    return time_text(m, which, wide=False).plain


def cap_small(get: Lookup) -> str:
    m = get(ADD, 8, "eager")
    if m is None:
        return ""
    return (
        f"c = a + b at N=8: {_kernels(m)}, {_names(m)}; it moves {_arrays(m)} in "
        f"{_time(m, 'device')} of device time, {_time(m, 'wall')} wall."
    )


def cap_large(get: Lookup) -> str:
    m = get(ADD, 1_000_000, "eager")
    if m is None:
        return ""
    small = get(ADD, 8, "eager")
    before = f" (vs {format_time_us(small.device_time_us)} at N=8)" if small else ""
    return (
        f"c = a + b at N=1e6: the same {_kernels(m)}, {_names(m)}, just more threads: "
        f"{format_transfers(m)}, device {format_time_us(m.device_time_us)}{before}."
    )


def cap_eager(get: Lookup) -> str:
    m = get(SEED, 1_000_000, "eager")
    if m is None:
        return ""
    return (
        f"(a + b).relu() eager at 1e6: {_kernels(m)}, {_names(m)}: the intermediate tmp = a + b is "
        f"written out and read back: {_arrays(m)}, device {_time(m, 'device')}."
    )


def cap_compiled(get: Lookup) -> str:
    c = get(SEED, 1_000_000, "compiled")
    if c is None:
        return ""
    if not c.ran_compiled:
        return f"torch.compile fell back to eager here: {c.fallback_reason or 'no reason given'}."
    e = get(SEED, 1_000_000, "eager")
    fused = "one fused kernel" if c.kernels_per_call == 1 else _kernels(c)
    text = f"Compiled: {fused}, {_names(c)}: {_arrays(c)}, tmp never exists"
    if e is not None:
        text += f"; {format_transfers(e)} -> {format_transfers(c)}"
        found = ratio(e, c, "device")
        if found is not None:
            text += f", device {_time(e, 'device')} -> {_time(c, 'device')} ({ratio_text(found).plain})"
    return text + "."


def cap_sweep(get: Lookup, sizes: tuple[int, ...]) -> str:
    results = [m for n in sizes for mode in ("eager", "compiled") if (m := get(SEED, n, mode)) is not None]
    pairs = comparisons(results)
    if not pairs:
        return ""
    small, large = pairs[0], pairs[-1]
    text = (
        f"N={format_size(small.size)}: eager {format_time_us(small.eager.wall_time_us)} vs compiled "
        f"{format_time_us(small.compiled.wall_time_us)} wall: overhead drowns the difference. "
    )
    wall = large.wall_ratio
    if wall is not None:
        said = {"faster": "faster", "slower": "(not faster)", "unclear": ""}[wall.verdict]
        text += f"N={format_size(large.size)}: compiled {ratio_text(wall).plain} {said}".rstrip() + ". "
    verdict = sweep_verdict(pairs)
    return text + verdict[0].upper() + verdict[1:] + "."


def cap_source(get: Lookup) -> str:
    c = get(EXAMPLE_NAME, 1_000_000, "compiled")
    e = get(EXAMPLE_NAME, 1_000_000, "eager")
    if c is None or e is None:
        return ""
    return (
        f"{EXAMPLE_NAME}, a function of a file: eager {_kernels(e)} ({_names(e)}), "
        f"compiled {_kernels(c)} ({_names(c)}); {format_transfers(e)} -> {format_transfers(c)}."
    )


@dataclass(frozen=True)
class DemoStep:
    title: str
    chain: str
    sizes: tuple[int, ...]
    modes: tuple[str, ...]
    caption: Callable[..., str]
    sweep: bool = False
    cpu_sizes: tuple[int, ...] | None = None
    """Sizes on the CPU (a 1e8 sweep takes too long there), when different."""
    source: SourceRef | None = None
    """A function of a file measured instead of the chain (``chain`` then names it)."""

    def sizes_on(self, device: str | None) -> tuple[int, ...]:
        if self.cpu_sizes is not None and (device or "").startswith("cpu"):
            return self.cpu_sizes
        return self.sizes

    def caption_for(self, get: Lookup, device: str | None) -> str:
        if self.sweep:
            return self.caption(get, self.sizes_on(device))
        return self.caption(get)


STEPS: list[DemoStep] = [
    DemoStep("One add, tiny", ADD, (8,), ("eager",), cap_small),
    DemoStep("One add, a million elements", ADD, (1_000_000,), ("eager",), cap_large),
    DemoStep("add + relu, eager", SEED, (1_000_000,), ("eager",), cap_eager),
    DemoStep("add + relu, compiled", SEED, (1_000_000,), ("eager", "compiled"), cap_compiled),
    DemoStep("The sweep", SEED, GPU_SWEEP, ("eager", "compiled"), cap_sweep, sweep=True, cpu_sizes=CPU_SWEEP),
    DemoStep("Your own code", EXAMPLE_NAME, (1_000_000,), ("eager", "compiled"), cap_source, source=EXAMPLE),
]
