"""The op chain pane: the ATen ops the chain runs, in order, and where each one ran.

One row per op: its output shape, dtype and bytes (an intermediate between two ops is a
``tmp``), the eager kernel(s) that ran it, and the compiled kernel it fused into; a bracket
joins the ops that one compiled kernel fused, and a fused intermediate is marked as never
written to memory. Under the table: what torch.compile did (graphs, breaks and their reasons,
recompiles, compile time) and, prominently, when a "compiled" run actually ran eager.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from probes.protocol import Measurement, OpNode
from probes.summary import format_bytes, format_size
from tui.widgets.kernel_pane import fit_kernel
from tui.widgets.tables import fill_table


SHORT_DTYPES = {
    "float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float64": "fp64", "int64": "i64",
    "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
}  # fmt: skip


def short_dtype(dtype: str) -> str:
    name = dtype.removeprefix("torch.")
    return SHORT_DTYPES.get(name, name)


def format_dim(d: int) -> str:
    """1000000 -> 1e6 (exact powers of ten and their multiples), else the number as is."""
    return format_size(d) if d >= 10_000 and "e" in format_size(d) else str(d)


def _fusion_marks(compiled: list[str | None]) -> list[str]:
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


class OpChainPane(Vertical):
    def compose(self) -> ComposeResult:
        table = DataTable(id="ops-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static(id="compile-info")

    def on_mount(self) -> None:
        self.border_title = "op chain"

    @staticmethod
    def _columns(with_shape: bool) -> list[Text]:
        shape = [Text("shape")] if with_shape else []
        return [Text("op"), *shape, Text("out", justify="right"), Text("eager kernel"), Text("compiled kernel")]

    def show(self, eager: Measurement | None, compiled: Measurement | None, *, stale: bool) -> None:
        table = self.query_one("#ops-table", DataTable)
        width = self.content_size.width or 86
        wide = width >= 72  # room for the shape column
        if width >= 86:
            eager_width, compiled_width = 22, 40
        elif wide:
            eager_width, compiled_width = 14, 22
        else:
            eager_width, compiled_width = max(12, (width - 26) // 2), max(14, (width - 22) // 2)
        rows = []
        info = self.query_one("#compile-info", Static)
        source = eager or compiled
        ops: list[OpNode] = list(source.ops) if source else []
        compiled_ops = list(compiled.ops) if compiled and compiled.ran_compiled else []
        aligned = len(compiled_ops) == len(ops) and all(a.op == b.op for a, b in zip(ops, compiled_ops))
        compiled_names: list[str | None] = [c.compiled_kernel for c in compiled_ops] if aligned else [None] * len(ops)
        if compiled is not None and compiled.ran_compiled and not any(compiled_names):
            compiled_names = self._names_from_rows(compiled, ops)
        marks = _fusion_marks(compiled_names)
        base = "dim" if stale else ""
        for i, op in enumerate(ops):
            last = i == len(ops) - 1
            fused_away = (
                not last and compiled_names[i] is not None and i + 1 < len(ops) and compiled_names[i + 1] == compiled_names[i]
            )
            out = Text(format_bytes(op.bytes_out), style=base, justify="right")
            if not last:
                out.append(" tmp", style="dim" if not fused_away else "green")
            shape = "×".join(format_dim(d) for d in op.shape) or "scalar"
            unique = list(dict.fromkeys(op.eager_kernels))
            eager_kernels = ", ".join(fit_kernel(k, eager_width) for k in unique) if unique else ("-" if eager else "")
            compiled_cell = Text(style=base)
            if compiled_names[i]:
                compiled_cell.append(marks[i] + " ", style="cyan")
                compiled_cell.append(fit_kernel(compiled_names[i] or "", compiled_width))
            elif compiled is not None:
                compiled_cell.append("-" if compiled.ran_compiled else "(ran eager)", style="dim")
            cells = [Text(op.op.removeprefix("aten::"), style=base or "bold")]
            if wide:
                cells.append(Text(f"[{shape}] {short_dtype(op.dtype)}", style=base))
            cells += [out, Text(eager_kernels, style=base), compiled_cell]
            rows.append(cells)
        if not ops:
            rows.append([Text("no ops recorded yet", style="dim italic")])
        fill_table(table, self._columns(wide), rows)
        info.update(self._compile_text(compiled, ops, compiled_names))
        self.border_subtitle = "STALE" if stale and ops else ""

    @staticmethod
    def _names_from_rows(compiled: Measurement, ops: list[OpNode]) -> list[str | None]:
        """When the ops carry no kernel, map them through the kernel rows' op lists, in order."""
        names: list[str | None] = []
        rows = [(row.short_name, [o.removeprefix("aten::") for o in row.ops]) for row in compiled.kernels]
        start = 0
        for op in ops:
            short = op.op.removeprefix("aten::")
            found = None
            for j in range(start, len(rows)):
                if short in rows[j][1]:
                    found, start = rows[j][0], j
                    break
            names.append(found)
        return names

    @staticmethod
    def _compile_text(compiled: Measurement | None, ops: list[OpNode], names: list[str | None]) -> Text:
        text = Text()
        if compiled is None:
            return text
        if not compiled.ran_compiled:
            text.append("⚠ the compiled run ran eager: ", style="bold red")
            text.append(compiled.fallback_reason or "no reason given", style="red")
            text.append("\n")
        c = compiled.compile
        if c is not None:
            text.append(f"{compiled.mode}: ", style="bold")
            fused = {n for n in names if n}
            if fused:
                text.append(f"{len(ops)} ops → {len(fused)} kernel{'s' if len(fused) != 1 else ''}", style="bold green")
                text.append(" · ")
            text.append(f"{c.graphs} graph{'s' if c.graphs != 1 else ''} · ")
            text.append(
                f"{c.graph_breaks} graph break{'s' if c.graph_breaks != 1 else ''}",
                style="bold yellow" if c.graph_breaks else "",
            )
            text.append(f" · {c.recompiles} recompile{'s' if c.recompiles != 1 else ''}")
            text.append(f" · compile {c.compile_time_s:.2f} s")
            for reason in c.break_reasons[:4]:
                text.append(f"\n  break: {reason}", style="yellow")
        return text
