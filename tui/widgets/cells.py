"""How figures and names become table cells: shortening, widths, and outside text made inert.

Pure functions (no widget state), shared by the kernel, op chain, sweep and compare views.
Kernel names, chain text and messages come from outside (the worker, a workspace file, a report):
they pass through ``probes.link.safe_text`` and are rendered as ``Text``, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from probes.link.protocol import KernelRow
from probes.link.safe_text import inert, inert_line

CELL_PADDING = 2
"""A table's column takes its width plus one cell of padding on each side (``RowsTable`` lays its
columns out so, as DataTable does its own)."""


def text_key(content: Text | str) -> tuple[object, ...]:
    """What a text shows, comparable: a widget given the same key again need not redraw."""
    if isinstance(content, str):
        return (content,)
    spans = tuple((span.start, span.end, str(span.style)) for span in content.spans)
    return (content.plain, str(content.style), spans, content.justify, content.overflow, content.no_wrap, content.end)


def plain(text: str, style: str = "", *, one_line: bool = True) -> Text:
    """Outside text as a ``Text``: control characters shown as escapes, never parsed as markup."""
    return Text(inert_line(text) if one_line else inert(text), style=style)


def fit(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` cells keeping its head and its (more telling) tail."""
    if len(text) <= width:
        return text
    if width <= 2:
        return (text[:1] + "…")[-width:] if width > 0 else ""
    head = max(1, min(width // 3, width - 2))
    return text[:head] + "…" + text[-(width - head - 1) :]


def fit_kernel(name: str, width: int) -> str:
    """Shorten a kernel name keeping what tells kernels apart: the template detail, or the tail.

    ``vectorized_elementwise_kernel<CUDAFunctor_add<float>>`` at 26 cells becomes
    ``v…<CUDAFunctor_add<float>>``; ``triton_poi_fused_add_relu_0`` keeps ``…fused_add_relu_0``.
    """
    if len(name) <= width:
        return name
    if width <= 2:
        return fit(name, width)
    base, sep, detail = name.partition("<")
    if sep and detail.endswith(">"):
        inner = detail[:-1]
        room = width - len(inner) - 3
        if room >= 1:
            return base[:room] + "…<" + inner + ">"
        return "…" + name[-(width - 1) :]
    head = min(max(1, width // 4), 8)
    return name[:head] + "…" + name[-(width - head - 1) :] if width > head + 2 else "…" + name[-(width - 1) :]


def flex_width(fixed: Sequence[int], available: int, minimum: int) -> int:
    """The width left for one flexible column once the ``fixed`` columns (their content widths)
    and every column's padding are taken from ``available``; at least ``minimum``."""
    used = sum(fixed) + CELL_PADDING * (len(fixed) + 1)
    return max(minimum, available - used)


def display_name(row: KernelRow) -> str:
    """The row's readable name, made inert; never empty (older recordings may lack a short name)."""
    if row.short_name:
        return inert_line(row.short_name)
    from probes.link.kernel_names import short_name

    return inert_line(short_name(row.name) or row.name[:60] or "(unnamed kernel)")


def plural(count: float, word: str) -> str:
    """``1 kernel``, ``3 kernels``, ``0.5 kernels``."""
    return f"{count:g} {word}{'' if count == 1 else 's'}"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def gbps_cell(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2f}"


def share_width(total: int, needs: list[int]) -> list[int]:
    """Split ``total`` cells between columns or tables by need: the smaller needs are met first (a
    short name stays whole), the rest share what is left; spare cells are spread evenly."""
    widths = [0] * len(needs)
    left = total
    for k, i in enumerate(sorted(range(len(needs)), key=needs.__getitem__)):
        widths[i] = min(needs[i], left // (len(needs) - k))
        left -= widths[i]
    for k in range(len(widths)):
        widths[k] += left // len(widths) + (1 if k < left % len(widths) else 0)
    return widths
