"""One kernel in full: mangled name, figures, ops, and for a compiled kernel its generated source."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from probes.link.kernel_names import strip_graph_prefix
from probes.link.protocol import KernelRow, Measurement
from probes.link.safe_text import inert, inert_line
from probes.link.summary import format_bytes, format_gbps, format_size, format_time_us, input_dtypes, mode_label
from tui.widgets.cells import display_name, plain
from tui.widgets.keys_in_order import ScreenKeysInOrder
from tui.widgets.roofline_points import roofline_facts
from tui.widgets.spread import WALL_PENDING, range_text


def call_facts(m: Measurement) -> list[tuple[str, Text]]:
    """The whole call's times with their spread, why they are noisy, and what torch said."""
    facts = [
        (
            "call device",
            Text(f"{format_time_us(m.device_time_us)} ({range_text(m.device_time_us, m.device_time_us_iqr)})"),
        ),
        (
            "call wall",
            Text(WALL_PENDING, style="dim")
            if m.wall_pending
            else Text(f"{format_time_us(m.wall_time_us)} ({range_text(m.wall_time_us, m.wall_time_us_iqr)})"),
        ),
    ]
    if m.noisy:
        facts.append(
            ("noisy", plain("; ".join(m.noise_reasons) or "the spread between reps is wide", "yellow", one_line=False))
        )
    facts += [("notes" if i == 0 else "", plain(line, "dim", one_line=False)) for i, line in enumerate(m.diagnostics)]
    return facts


def generated_source(m: Measurement, row: KernelRow) -> tuple[str, str] | None:
    """(source, lexer) of a compiled kernel: Triton is Python, Inductor's CPU kernels are C++."""
    if m.compile is None:
        return None
    sources = m.compile.generated_source
    for key in (strip_graph_prefix(row.name), strip_graph_prefix(row.short_name), row.name, row.short_name):
        if key in sources:
            name = key
            break
    else:
        return None
    lexer = "cpp" if name.startswith("cpp_") or 'extern "C"' in sources[name] else "python"
    return sources[name], lexer


class KernelDetail(ScreenKeysInOrder, ModalScreen[None]):
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close")]

    def __init__(self, measurement: Measurement, row: KernelRow) -> None:
        super().__init__()
        self.measurement = measurement
        self.row = row
        self.source = generated_source(measurement, row)

    def full_name_text(self) -> str:
        return inert_line(self.row.name)

    def compose(self) -> ComposeResult:
        m, row = self.measurement, self.row
        with Vertical(classes="detail"):
            yield Static(Text(display_name(row), style="bold"), classes="detail-title")
            facts = Table.grid(padding=(0, 2))
            facts.add_column(style="dim", no_wrap=True)
            facts.add_column()
            facts.add_row("full name", plain(row.name))
            facts.add_row("kind", row.kind)
            facts.add_row("mode", plain(f"{mode_label(m)} at N={format_size(m.size)} ({input_dtypes(m)}, {m.device})"))
            if row.pass_:
                facts.add_row("pass", row.pass_)
            facts.add_row("launches/call", f"{row.launches_per_call:g}")
            facts.add_row(
                "µs/launch",
                f"{row.device_time_us:.3f} (median of the profiled launches; "
                f"{range_text(row.device_time_us, row.device_time_us_iqr)})",
            )
            facts.add_row("share", f"{row.share:.1%} of the call's device time")
            facts.add_row("bytes/call", format_bytes(row.bytes))
            facts.add_row(
                "bandwidth",
                f"{format_gbps(row.gbps)}"
                + (f" ({row.pct_of_peak:.0f}% of peak)" if row.pct_of_peak is not None else ""),
            )
            facts.add_row("ops", plain(", ".join(row.ops) or "-"))
            for label, value in roofline_facts(m, row):
                facts.add_row(label, value)
            for label, value in call_facts(m):
                facts.add_row(label, value)
            yield Static(facts, classes="detail-facts")
            source = self.source
            with VerticalScroll(classes="detail-source"):
                if source is not None:
                    text, lexer = source
                    yield Static(Syntax(inert(text), lexer, theme="monokai", line_numbers=True, word_wrap=False))
                elif m.mode != "eager":
                    yield Static(Text("no generated source was recorded for this kernel", style="dim italic"))
                else:
                    yield Static(Text("eager kernels are ATen's own: no generated source", style="dim italic"))
            yield Static("escape: close", classes="dialog-hint")
