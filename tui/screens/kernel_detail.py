"""One kernel in full: mangled name, figures, ops, what it is made of (launch, registers, shared
memory, occupancy, Triton's configuration), the call's peak memory, and for a compiled kernel its
generated source."""

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
from probes.link.protocol import KernelRow, LaunchInfo, Measurement
from probes.link.safe_text import inert, inert_line
from probes.link.summary import (
    device_over_wall,
    format_bytes,
    format_gbps,
    format_size,
    format_time_us,
    input_dtypes,
    mode_label,
)
from tui.screens.own_footer import OwnFooter
from tui.widgets.cells import display_name, plain
from tui.widgets.keys_in_order import ScreenKeysInOrder
from tui.widgets.roofline_points import roofline_facts
from tui.widgets.spread import OVER_WALL_MARK, WALL_PENDING, range_text


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
    peak = peak_memory_text(m)
    if peak is not None:
        facts.append(("peak memory", peak))
    over_wall = device_over_wall(m)
    if over_wall is not None:
        facts.append((f"device {OVER_WALL_MARK}", plain(over_wall, "bold yellow")))
    if m.noisy:
        reasons = [r for r in m.noise_reasons if r != over_wall]  # said on its own line above
        facts.append(
            ("noisy", plain("; ".join(reasons) or "the spread between reps is wide", "yellow", one_line=False))
        )
    facts += [("notes" if i == 0 else "", plain(line, "dim", one_line=False)) for i, line in enumerate(m.diagnostics)]
    return facts


def peak_memory_text(m: Measurement) -> Text | None:
    """``8.00 MB per call above its inputs`` (with grad: ``; forward 8.00 MB, backward 12.0 MB``)."""
    if m.peak_memory_bytes is None:
        return None
    text = f"{format_bytes(m.peak_memory_bytes)} per call above its inputs, output included"
    if m.forward_peak_memory_bytes is not None and m.backward_peak_memory_bytes is not None:
        forward, backward = format_bytes(m.forward_peak_memory_bytes), format_bytes(m.backward_peak_memory_bytes)
        text += f"; forward {forward}, backward {backward} above the forward's"
    return Text(text)


def dims(values: list[int]) -> str:
    return " x ".join(str(v) for v in values)


def occupancy_text(info: LaunchInfo) -> Text | None:
    """``19% theoretical: 1 block of 12 warps per SM, limited by registers``."""
    if info.occupancy is None:
        return None
    text = f"{info.occupancy:.0%} theoretical"
    if info.blocks_per_sm is not None and info.block:
        threads = 1
        for dim in info.block:
            threads *= dim
        warps = -(-threads // 32)
        blocks = f"{info.blocks_per_sm} block{'' if info.blocks_per_sm == 1 else 's'}"
        text += f": {blocks} of {warps} warp{'' if warps == 1 else 's'} per SM"
    if info.occupancy_limit:
        text += f", limited by {info.occupancy_limit}"
    return Text(text)


def launch_facts(m: Measurement, row: KernelRow) -> list[tuple[str, Text]]:
    """What the kernel is made of: grid, block, registers, shared memory, occupancy, and for a
    Triton kernel its configuration, spills and the configurations its autotuner timed. On the
    CPU, said plainly that these are a GPU kernel's."""
    info = row.launch
    if info is None:
        if row.kind != "kernel":
            return []
        if m.device.startswith("cpu"):
            threads = f"; torch ran this one on {m.cpu_threads} threads" if m.cpu_threads else ""
            return [("launch", Text(f"grid, block, registers and occupancy are a GPU kernel's{threads}", style="dim"))]
        return [("launch", Text("not recorded for this kernel", style="dim"))]
    facts: list[tuple[str, Text]] = []
    if info.grid or info.block:
        grid = f"grid {dims(info.grid)}" if info.grid else ""
        block = f"block {dims(info.block)}" if info.block else ""
        facts.append(("launch", Text(" · ".join(part for part in (grid, block) if part))))
    if info.registers_per_thread is not None:
        facts.append(("registers", Text(f"{info.registers_per_thread} per thread")))
    if info.shared_memory_bytes is not None:
        facts.append(("shared memory", Text(f"{format_bytes(info.shared_memory_bytes)} per block (static + dynamic)")))
    occupancy = occupancy_text(info)
    if occupancy is not None:
        facts.append(("occupancy", occupancy))
    if info.num_warps is not None:
        parts = [f"{k}={v}" for k, v in info.block_sizes.items()]
        config = ", ".join([*parts, f"num_warps={info.num_warps}", f"num_stages={info.num_stages}"])
        facts.append(("triton", plain(config)))
    if info.spills is not None:
        spills = Text(f"{info.spills} registers per thread", style="bold yellow") if info.spills else Text("none")
        facts.append(("spills", spills))
    for i, trial in enumerate(info.autotune):
        line = plain(f"{trial.config}: {trial.time_ms * 1e3:.1f} µs" + ("  <- chosen" if trial.chosen else ""))
        facts.append(("autotuned" if i == 0 else "", line if trial.chosen else Text(line.plain, style="dim")))
    if info.autotune_cache and not info.autotune:
        facts.append(("autotune", plain(f"cache {info.autotune_cache}: the configurations tried were not timed here")))
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


class KernelDetail(OwnFooter, ScreenKeysInOrder, ModalScreen[None]):
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
            for label, value in launch_facts(m, row):
                facts.add_row(label, value)
            for label, value in roofline_facts(m, row):
                facts.add_row(label, value)
            for label, value in call_facts(m):
                facts.add_row(label, value)
            with VerticalScroll(classes="detail-facts-scroll"):
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
