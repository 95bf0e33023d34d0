"""Forward and backward apart: per-pass kernel counts, bytes and times, and which backward ops a
compiled kernel fused.

With grad on, the worker tags every kernel row with its pass (``KernelRow.pass_``) and reports
forward and backward device times (``Measurement.forward_time_us`` / ``backward_time_us``). These
pure helpers split a measurement by pass for the kernel pane, the sweep and the op chain pane; a
measurement without grad (every replayed recording made before grad existed) gives nothing here.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from rich.text import Text

from probes.link.protocol import KernelRow, Measurement, OpNode
from probes.link.summary import Ratio, format_time_us, format_transfers, ratio
from tui.widgets.cells import plural
from tui.widgets.spread import ratio_text

PASSES = ("forward", "backward")
SHORT = {"forward": "fwd", "backward": "bwd"}
PASS_STYLES = {"forward": "", "backward": "cyan"}


@dataclass(frozen=True)
class PassTotals:
    name: str
    kernels: float
    bytes: int | None
    """None when a kernel of the pass has unknown bytes (a partial sum is never shown as the whole)."""
    time_us: float


def pass_totals(m: Measurement) -> list[PassTotals]:
    """Forward then backward, for a grad measurement; [] otherwise."""
    if not m.grad:
        return []
    totals = []
    for name in PASSES:
        rows = [r for r in m.kernels if r.pass_ == name]
        known = [r.bytes for r in rows if r.bytes is not None]
        nbytes = sum(known) if len(known) == len(rows) else None
        reported = m.forward_time_us if name == "forward" else m.backward_time_us
        time_us = reported if reported is not None else sum(r.time_per_call_us for r in rows)
        totals.append(PassTotals(name, sum(r.launches_per_call for r in rows), nbytes, time_us))
    return totals


def transfers_text(m: Measurement, nbytes: int | None) -> str:
    """``nbytes`` in array-sized transfers of ``m`` (``3N``), as the headline counts them."""
    return format_transfers(dataclasses.replace(m, bytes_per_call=nbytes))


def ordered_rows(m: Measurement) -> list[KernelRow]:
    """Kernel rows (forward first, then backward, each in the engine's order), then transfers."""
    kernels = m.kernels
    if m.grad:
        kernels = sorted(kernels, key=lambda r: PASSES.index(r.pass_) if r.pass_ in PASSES else len(PASSES))
    return [*kernels, *m.transfers]


def pass_cell(row: KernelRow) -> Text:
    return Text(SHORT.get(row.pass_ or "", "-"), style=PASS_STYLES.get(row.pass_ or "", "dim"))


def pass_facts(m: Measurement) -> list[Text]:
    """``fwd 3 kernels · 3N · 23.7 ms``, then ``bwd 4 kernels · 4N · 15.3 ms``: one fact per pass,
    so that a title too narrow for both breaks between them, not inside ``15.3 ms`` (none without
    grad)."""
    facts = []
    for p in pass_totals(m):
        fact = Text().append(SHORT[p.name], style=f"bold {PASS_STYLES[p.name]}".strip())
        fact.append(f" {plural(p.kernels, 'kernel')} · {transfers_text(m, p.bytes)} · {format_time_us(p.time_us)}")
        facts.append(fact)
    return facts


PASS_COLUMNS = ("kern f+b", "bytes f+b", "fwd", "bwd", "wall")
"""The sweep's figure columns with grad: forward + backward counts and bytes, each pass's time."""


def pass_cells(m: Measurement) -> list[str]:
    """The first four of ``PASS_COLUMNS`` for one measurement (a row without grad has no split)."""
    totals = pass_totals(m)
    if not totals:
        return [f"{m.kernels_per_call:g}", format_transfers(m), "-", "-"]
    fwd, bwd = totals
    return [
        f"{fwd.kernels:g}+{bwd.kernels:g}",
        f"{transfers_text(m, fwd.bytes)}+{transfers_text(m, bwd.bytes)}",
        format_time_us(fwd.time_us),
        format_time_us(bwd.time_us),
    ]


def pass_comparisons(eager: Measurement, compiled: Measurement) -> list[Text]:
    """Per pass, eager -> compiled: kernels, transfers, device time and their ratio (one fact each)."""
    facts = []
    for e, c in zip(pass_totals(eager), pass_totals(compiled), strict=False):
        text = Text().append(f"{e.name} ", style=f"bold {PASS_STYLES[e.name]}".strip())
        text.append(
            f"{e.kernels:g} -> {plural(c.kernels, 'kernel')}, {transfers_text(eager, e.bytes)} -> "
            f"{transfers_text(compiled, c.bytes)}, {format_time_us(e.time_us)} -> {format_time_us(c.time_us)}"
        )
        if e.time_us > 0 and c.time_us > 0:
            text.append(" ")
            text.append_text(ratio_text(pass_ratio(eager, compiled, e.time_us, c.time_us), short=True))
        facts.append(text)
    return facts


def pass_ratio(eager: Measurement, compiled: Measurement, e_us: float, c_us: float) -> Ratio | None:
    """The eager/compiled ratio of one pass, with the relative interval of the whole call's device
    time (the worker measures the spread per call, not per pass)."""
    whole = ratio(eager, compiled, "device")
    if whole is None or whole.value <= 0 or c_us <= 0:
        return None
    value = e_us / c_us
    return Ratio(value, value * whole.low / whole.value, value * whole.high / whole.value)


# -- the op chain: which backward ops fused ----------------------------------------------------


def is_real_op(op: OpNode) -> bool:
    """The profiler's own markers (``_record_function_enter_new``) are no ops of the chain."""
    return bool(op.dtype or op.bytes_out or op.bytes_in or op.eager_kernels)


def op_passes(ops: list[OpNode], eager: Measurement | None) -> list[str | None]:
    """Each op's pass, from the eager kernel rows that ran it (None without grad or a row).

    A training step runs its forward ops, then its backward ops; a kernel name can be in both
    (``aten::mm``): the first ops to launch it take the forward row's launches, and from the first
    op that only the backward can have run, every op is backward."""
    if eager is None or not eager.grad:
        return [None] * len(ops)
    forward_left: Counter[str] = Counter()
    known: set[str] = set()
    for row in eager.kernels:
        for name in {row.name, row.short_name} - {""}:
            known.add(name)
            if row.pass_ == "forward":
                forward_left[name] += round(row.launches_per_call)
    passes: list[str | None] = []
    in_backward = False
    for op in ops:
        kernels = [k for k in op.eager_kernels if k in known]
        if kernels and not in_backward and all(forward_left[k] > 0 for k in kernels):
            forward_left.subtract(kernels)
        elif kernels:
            in_backward = True
        passes.append("backward" if in_backward else "forward" if kernels else None)
    return passes


def mentions(kernel: str, op: str) -> bool:
    """Whether a fused kernel's name lists ``op`` (``cpp_fused_expand_threshold_backward_0`` lists
    ``threshold_backward``): Inductor names a fused kernel after the ops it fused."""
    name = op.removeprefix("aten::").lstrip("_")
    return bool(name) and f"_{name}_" in f"_{kernel}_"


def backward_fusion(compiled: Measurement, backward_ops: list[OpNode]) -> Text:
    """A line per compiled backward kernel that fused several ops, ``bwd
    cpp_fused_expand_threshold_backward_0 fused expand + threshold_backward`` (empty otherwise)."""
    text = Text()
    if not compiled.grad or not compiled.ran_compiled:
        return text
    names = [op.op.removeprefix("aten::") for op in backward_ops]
    for row in compiled.kernels:
        if row.pass_ != "backward":
            continue
        fused = [op for op in names if mentions(row.name, op)] or [o.removeprefix("aten::") for o in row.ops]
        if len(fused) > 1 or "fused" in row.name:
            text.append("\n  ")
            text.append(f"{SHORT['backward']} {row.short_name or row.name}", style=PASS_STYLES["backward"])
            text.append(" fused " + " + ".join(dict.fromkeys(fused)) if fused else "")
    return text
