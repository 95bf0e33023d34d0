"""Forward and backward apart: per-pass kernel counts, bytes and times, and which backward ops a
compiled kernel fused.

With grad on, the worker tags every kernel row with its pass (``KernelRow.pass_``) and reports
forward and backward device times (``Measurement.forward_time_us`` / ``backward_time_us``). These
pure helpers split a measurement by pass for the kernel pane, the sweep and the op chain pane; a
measurement without grad (every replayed recording made before grad existed) gives nothing here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rich.text import Text

from probes.link.protocol import KernelRow, Measurement, OpNode
from probes.link.summary import Ratio, format_time_us, format_transfers, ratio
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


def _kernels(count: float) -> str:
    return f"{count:g} kernel{'' if count == 1 else 's'}"


def pass_facts(m: Measurement) -> list[Text]:
    """``fwd 3 kernels · 3N · 23.7 ms``, then ``bwd 4 kernels · 4N · 15.3 ms``: one fact per pass,
    so that a title too narrow for both breaks between them, not inside ``15.3 ms`` (none without
    grad)."""
    facts = []
    for p in pass_totals(m):
        fact = Text().append(SHORT[p.name], style=f"bold {PASS_STYLES[p.name]}".strip())
        fact.append(f" {_kernels(p.kernels)} · {transfers_text(m, p.bytes)} · {format_time_us(p.time_us)}")
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
            f"{e.kernels:g} -> {_kernels(c.kernels)}, {transfers_text(eager, e.bytes)} -> "
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
    """Each op's pass, from the eager kernel rows that ran it (None without grad or a row)."""
    if eager is None or not eager.grad:
        return [None] * len(ops)
    by_name = {r.name: r.pass_ for r in eager.kernels} | {r.short_name: r.pass_ for r in eager.kernels}
    return [next((by_name[k] for k in op.eager_kernels if by_name.get(k)), None) for op in ops]


def split_ops(ops: list[OpNode], eager: Measurement | None) -> tuple[list[OpNode], int | None]:
    """The chain's real ops, forward first, then backward; and where backward starts (None: no
    backward op is known)."""
    ops = [op for op in ops if is_real_op(op)]
    passes = op_passes(ops, eager)
    forward = [op for op, p in zip(ops, passes, strict=False) if p != "backward"]
    backward = [op for op, p in zip(ops, passes, strict=False) if p == "backward"]
    return forward + backward, (len(forward) if backward else None)


def mentions(kernel: str, op: str) -> bool:
    """Whether a fused kernel's name lists ``op`` (``cpp_fused_expand_threshold_backward_0`` lists
    ``threshold_backward``): Inductor names a fused kernel after the ops it fused."""
    name = op.removeprefix("aten::").lstrip("_")
    return bool(name) and f"_{name}_" in f"_{kernel}_"


def backward_fusion(compiled: Measurement, eager: Measurement | None) -> Text:
    """``backward: 4 ops -> 2 kernels · cpp_fused_expand_threshold_backward_0 fused expand +
    threshold_backward`` for a compiled grad measurement (empty otherwise)."""
    rows = [r for r in compiled.kernels if r.pass_ == "backward"]
    if not compiled.grad or not compiled.ran_compiled:
        return Text()
    ops, start = split_ops(eager.ops, eager) if eager is not None else ([], None)
    backward_ops = [op.op.removeprefix("aten::") for op in ops[start:]] if start is not None else []
    text = Text("backward", style="bold cyan")
    if backward_ops:
        text.append(f": {len(backward_ops)} ops eager -> {_kernels(sum(r.launches_per_call for r in rows))} compiled")
    else:
        text.append(f": {_kernels(sum(r.launches_per_call for r in rows))} compiled")
    for row in rows:
        fused = [op for op in backward_ops if mentions(row.name, op)] or [o.removeprefix("aten::") for o in row.ops]
        if len(fused) > 1 or "fused" in row.name:
            text.append("\n  ")
            text.append(row.short_name or row.name, style="cyan")
            text.append(" fused " + " + ".join(dict.fromkeys(fused)) if fused else "")
    return text
