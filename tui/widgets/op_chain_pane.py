"""The op chain pane: the ATen ops the chain runs, in order, and where each one ran.

One row per op: its output shape, dtype and bytes (an intermediate between two ops is a
``tmp``), the eager kernel(s) that ran it, and the compiled kernel it fused into; a bracket
joins the ops that one compiled kernel fused, and a fused intermediate is marked as never
written to memory. Under the table: what torch.compile did (graphs, breaks and their reasons,
recompiles, compile time) and, prominently, when a "compiled" run actually ran eager.

Kernels are named exactly as the kernel pane names them: an op is tied to the kernel rows that
list it (the rows the kernel pane shows), so the two panes never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult

from probes.chain.matching import normalize
from probes.link.protocol import Measurement, OpNode
from probes.link.summary import format_bytes, format_size
from tui.views import FocusView
from tui.widgets.cells import display_name, fit_kernel, flex_width, plain, plural, share_width
from tui.widgets.facts import fact_lines
from tui.widgets.pane import Pane, PaneText
from tui.widgets.passes import PASS_STYLES, PASSES, backward_fusion, is_real_op, mentions, op_passes
from tui.widgets.tables import ResultsTable

SHORT_DTYPES = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "float64": "fp64",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
}
SHAPE_MIN_WIDTH = 72
"""The shape column shows from this pane width."""


def short_dtype(dtype: str) -> str:
    name = dtype.removeprefix("torch.")
    return SHORT_DTYPES.get(name, name)


def format_dim(d: int) -> str:
    """1000000 -> 1e6 (exact powers of ten and their multiples), else the number as is."""
    return format_size(d) if d >= 10_000 and "e" in format_size(d) else str(d)


def op_name(op: str) -> str:
    """``aten::_softmax`` and ``softmax`` are the same op for matching kernels to ops."""
    return op.removeprefix("aten::").lstrip("_")


def kernels_per_op(ops: list[OpNode], m: Measurement | None, pass_: str | None = None) -> list[list[str]]:
    """For each op, the names of the kernel rows of ``m`` that ran it, as the kernel pane names them.

    An op that names its own kernels (and they are rows of ``m``) keeps them: two adds in one chain
    each keep their own kernel. Otherwise the op gets the rows that list it among their ops or
    whose fused name lists it, matched in order (so a fused kernel covers every op it lists). With
    ``pass_`` only that pass's rows count: a forward and a backward kernel can share a name, and a
    forward kernel may compute what backward needs (``cpp_fused_add_relu_threshold_backward_0``).
    """
    if m is None:
        return [[] for _ in ops]
    rows = [r for r in m.kernels if pass_ in (None, r.pass_)]
    named = [(display_name(r), {op_name(o) for o in r.ops}, r.name) for r in rows]
    by_raw = {r.name: name for r, (name, _, _) in zip(rows, named, strict=True)}
    by_raw |= {r.short_name: name for r, (name, _, _) in zip(rows, named, strict=True) if r.short_name}
    found = []
    for op in ops:
        own = [
            by_raw[k]
            for k in ([*op.eager_kernels, op.compiled_kernel] if m.mode == "eager" else [op.compiled_kernel])
            if k and k in by_raw
        ]
        if not own:
            own = [name for name, listed, raw in named if op_name(op.op) in listed or mentions(raw, op.op)]
        found.append(list(dict.fromkeys(own)))
    return found


@dataclass(frozen=True)
class OpGroup:
    """The ops of one pass (``None`` without grad) in the order they ran, and for each the eager
    kernels and the compiled kernel of that same pass that ran it."""

    pass_: str | None
    ops: list[OpNode]
    eager: list[list[str]]
    compiled: list[str | None]
    compiled_kernels: int
    """Distinct compiled kernels of the pass (with grad every row of the pass, also those no op
    names, such as the ``ones_like`` that seeds the backward)."""


def op_groups(eager: Measurement | None, compiled: Measurement | None) -> list[OpGroup]:
    """The op chain as the pane shows it: one group without grad; with grad a forward and a
    backward group, each op mapped to kernels of its own pass only. A compiled run's op trace is
    its forward call's: the backward ops are known from the eager run (with eager off the backward
    group has its kernels but no ops)."""
    source = eager or compiled
    ops = [op for op in (source.ops if source else []) if is_real_op(op)]
    grad = any(m is not None and m.grad for m in (eager, compiled))
    ran = compiled if compiled is not None and compiled.ran_compiled else None
    passes = op_passes(ops, eager) if eager is not None else ["forward" if grad else None] * len(ops)
    groups = []
    for pass_ in PASSES if grad else (None,):
        mine = [op for op, p in zip(ops, passes, strict=True) if p == pass_ or (pass_ == "forward" and p is None)]
        names = [n[0] if n else None for n in kernels_per_op(mine, ran, pass_)]
        if grad and ran is not None:
            count = len({r.name for r in ran.kernels if r.pass_ == pass_})
        else:
            count = len({n for n in names if n})
        groups.append(OpGroup(pass_, mine, kernels_per_op(mine, eager, pass_), names, count))
    return groups


def fusion_marks(compiled: list[str | None]) -> list[str]:
    """Bracket characters joining consecutive ops that ran in the same compiled kernel."""
    marks = []
    for i, name in enumerate(compiled):
        if name is None:
            marks.append(" ")
            continue
        same_prev = i > 0 and compiled[i - 1] == name
        same_next = i + 1 < len(compiled) and compiled[i + 1] == name
        marks.append("│" if same_prev and same_next else "┘" if same_prev else "┐" if same_next else "─")
    return marks


def compile_facts(compiled: Measurement, groups: list[OpGroup]) -> list[Text]:
    """``3 ops → 1 kernel`` (with grad ``forward 3 ops → 1 kernel``, ``backward 4 ops → 2 kernels``),
    ``1 graph``, ``0 graph breaks``, ``0 recompiles``, ``compile 1.48 s``."""
    c = compiled.compile
    if c is None:
        return []
    facts = []
    for group in groups:
        if group.compiled_kernels:
            fact = Text()
            if group.pass_:
                fact.append(f"{group.pass_} ", style=f"bold {PASS_STYLES[group.pass_]}".strip())
            ops = plural(len(group.ops), "op") if group.ops else "ops"
            fact.append(f"{ops} → {plural(group.compiled_kernels, 'kernel')}", style="bold green")
            facts.append(fact)
    facts.append(Text(plural(c.graphs, "graph")))
    facts.append(Text(plural(c.graph_breaks, "graph break"), style="bold yellow" if c.graph_breaks else ""))
    facts.append(Text(plural(c.recompiles, "recompile")))
    facts.append(Text(f"compile {c.compile_time_s:.2f} s"))
    return facts


def compile_text(compiled: Measurement | None, groups: list[OpGroup], width: int) -> Text:
    """What the compile did, its facts broken between facts at ``width`` (``0 recompiles`` read
    ``0`` / ``recompiles`` at 120x40), then its graph breaks' reasons."""
    text = Text()
    if compiled is None:
        return text
    if not compiled.ran_compiled:
        text.append("⚠ the compiled run ran eager: ", style="bold red")
        text.append_text(plain(compiled.fallback_reason or "no reason given", "red"))
        text.append("\n")
    c = compiled.compile
    if c is not None:
        text = fact_lines(text.append(f"{compiled.mode}: ", style="bold"), [compile_facts(compiled, groups)], width)
        for reason in c.break_reasons[:4]:
            text.append("\n  break: ", style="yellow")
            text.append_text(plain(reason, "yellow"))
    return text


class OpChainPane(Pane):
    """Renders its ``state`` (the focus view): the eager and the first compiled mode shown."""

    TITLE = "op chain"

    def compose(self) -> ComposeResult:
        yield ResultsTable(id="ops-table", cursor_type="row", zebra_stripes=False)
        yield PaneText(id="compile-info")

    def draw(self, state: FocusView) -> None:
        eager_view = state.mode("eager")
        eager = eager_view.measurement if eager_view else None
        compiled = next((v.measurement for v in state.modes if v.mode != "eager" and v.measurement is not None), None)
        if eager is not None and compiled is not None and normalize(compiled.chain) != normalize(eager.chain):
            compiled = None  # the last text's, shown while this one compiles: its kernels are not these ops'
        stale = state.stale is not None
        width = self.content_size.width
        base = "dim" if stale else ""
        groups = op_groups(eager, compiled)
        ops = [op for g in groups for op in g.ops]
        eager_names = [names for g in groups for names in g.eager]
        compiled_names = [name for g in groups for name in g.compiled]
        with_shape = width >= SHAPE_MIN_WIDTH and self._names_fit(ops, eager_names, compiled_names, width)
        rows = [self._row(g, i, with_shape, base) for g in groups for i in range(len(g.ops))]
        marks = [mark for g in groups for mark in fusion_marks(g.compiled)]
        fitted = self._fit(rows, width, eager is not None, compiled, marks, base)
        at = 0
        for group in groups if ops else ():  # each pass under its label, its note when it has no ops
            if group.pass_ is not None:
                label = Text(group.pass_, style=base or f"bold {PASS_STYLES[group.pass_]}".strip())
                fitted.insert(at, [label])
                at += 1
            if group.pass_ is not None and not group.ops:
                fitted.insert(at, [Text("its ops are traced with eager on", style="dim italic")])
                at += 1
            at += len(group.ops)
        columns = [
            Text("op"),
            *([Text("shape")] if with_shape else []),
            Text("out", justify="right"),
            Text("eager kernel"),
            Text("compiled kernel"),
        ]
        self.query_one("#ops-table", ResultsTable).fill(columns, fitted)
        info = compile_text(compiled, groups, width)
        if compiled is not None and compiled.grad:
            info.append_text(backward_fusion(compiled, groups[-1].ops))
        self.query_one("#compile-info", PaneText).show_text(info)
        title = f"{self.TITLE} · {plain(state.entry).plain}" if state.entry else self.TITLE  # of several devices
        self.set_border(title, "STALE" if stale and ops else "")

    @staticmethod
    def _row(group: OpGroup, i: int, with_shape: bool, base: str) -> list[object]:
        """One op's cells; its output is a ``tmp`` unless it ends its group, green when it never
        reaches memory because the next op of the group fused with it."""
        op, ops, compiled = group.ops[i], group.ops, group.compiled
        fused_away = i + 1 < len(ops) and compiled[i] is not None and compiled[i + 1] == compiled[i]
        out = Text(format_bytes(op.bytes_out), style=base, justify="right")
        if i < len(ops) - 1:
            out.append(" tmp", style="green" if fused_away else "dim")
        shape = "×".join(format_dim(d) for d in op.shape) or "scalar"
        cells: list[object] = [plain(op.op.removeprefix("aten::"), base or "bold")]
        if with_shape:
            cells.append(Text(f"[{shape}] {short_dtype(op.dtype)}", style=base))
        return [*cells, out, group.eager[i], compiled[i]]

    @staticmethod
    def _names_fit(ops: list[OpNode], eager: list[list[str]], compiled: list[str | None], width: int) -> bool:
        """Whether the kernel names stay whole with the shape column shown (else it gives way)."""
        shape = max(
            [len("shape"), *(len(f"[{'×'.join(format_dim(d) for d in op.shape) or 'scalar'}] fp32") for op in ops)]
        )
        names = max([len("eager kernel"), *(len(", ".join(n)) for n in eager)])
        names += max([len("compiled kernel"), *(len(n or "") + 2 for n in compiled)])
        fixed = [len("relu"), shape, len("4.00 MB tmp")]
        return flex_width(fixed, width, 0) - 2 * 2 >= names

    @staticmethod
    def _fit(
        rows: list[list[Any]], width: int, has_eager: bool, compiled: Measurement | None, marks: list[str], base: str
    ) -> list[list[Text]]:
        """Give the two kernel-name columns the width the other columns leave, split between them."""
        if not rows:
            return [[Text("no ops recorded yet", style="dim italic")]]
        fixed = [max(len("op"), *(r[0].cell_len for r in rows))]
        fixed += [max(len("shape"), *(r[1].cell_len for r in rows))] if len(rows[0]) == 5 else []
        fixed += [max(len("out"), *(r[-3].cell_len for r in rows))]
        room = flex_width(fixed, width, 24) - 2 * 2  # two flexible columns, one more padding
        eager_len = max(len("eager kernel"), *(len(", ".join(r[-2])) for r in rows))
        compiled_len = max(len("compiled kernel"), *(len(r[-1] or "") + 2 for r in rows))
        eager_room, compiled_room = share_width(room, [eager_len, compiled_len])
        fitted = []
        for i, row in enumerate(rows):
            cell = Text(style=base)
            name = row[-1]
            if name:
                cell.append(marks[i] + " ", style="cyan")
                cell.append(fit_kernel(name, compiled_room - 2))
            elif compiled is not None:
                cell.append("-" if compiled.ran_compiled else "(ran eager)", style="dim")
            names = row[-2]
            each = max(6, (eager_room - 2 * (len(names) - 1)) // max(1, len(names)))
            eager = ", ".join(fit_kernel(n, each) for n in names) if names else ("-" if has_eager else "")
            fitted.append([*row[:-2], Text(eager, style=base), cell])
        return fitted
