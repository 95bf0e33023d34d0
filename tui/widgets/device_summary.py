"""The kernel pane's side-by-side summary where ``--device`` lists several devices: one line per
device, a column group per mode (kernels per call, device time, GB/s, device time against the
first device's), the followed device marked.

Why a summary and one kernel table, not a column group per device in the kernel table: the kernel
table already spends an 80-column terminal on one device (name, launches, time, share, bytes,
GB/s), and two devices' kernels rarely match by name (a GPU's fused Triton kernel against a
CPU's ATen loops), so groups side by side would be half empty on a wide terminal and unreadable on
a narrow one. A line per device fits 80 columns for two modes and says at a glance what the
comparison is; the table below is the followed device's, named in the pane's title, and ``d``
moves it to the next. Pure: built from the entries' views.
"""

from __future__ import annotations

from rich.text import Text

from probes.link.protocol import Measurement
from probes.link.summary import format_ratio, format_time_us
from tui.views import FocusView
from tui.widgets.cells import plain

NAME_WIDTH = 24
"""The widest the device column gets (a longer name is cut): the modes' groups need the room."""


def _gbps(m: Measurement) -> str:
    return "-" if not m.gbps else f"{m.gbps:,.0f}" if m.gbps >= 10 else f"{m.gbps:.2f}"


def _cells(m: Measurement | None, first: Measurement | None, with_gbps: bool) -> list[str]:
    """One mode's cells on one device: kernels, device time, GB/s, ratio against the first."""
    if m is None:
        return ["-", "-", *(["-"] if with_gbps else []), "-"]
    versus = "-"
    if first is not None and first is not m and first.device_time_us > 0 and m.device_time_us > 0:
        versus = f"{format_ratio(m.device_time_us / first.device_time_us)}x"
    return [f"{m.kernels_per_call:g}", format_time_us(m.device_time_us), *([_gbps(m)] if with_gbps else []), versus]


def _measurement(view: FocusView, mode: str) -> Measurement | None:
    shown = view.mode(mode)
    return shown.measurement if shown is not None else None


def devices_text(devices: tuple[FocusView, ...], followed: str, width: int) -> Text:
    """The summary at ``width`` cells (GB/s left out where the line would not fit): a header,
    then a line per device, ``▸`` at the one ``followed``. ``vs 1st`` is the device time over the
    first device's: above 1 that device is slower."""
    if len(devices) < 2:
        return Text()
    modes = [view.mode for view in devices[0].modes]
    name_width = min(NAME_WIDTH, max(len("device"), *(len(view.entry) + 2 for view in devices)))
    first = {mode: _measurement(devices[0], mode) for mode in modes}
    for with_gbps in (True, False):
        heads = ["kernels", "dev time", *(["GB/s"] if with_gbps else []), f"vs {devices[0].entry}"]
        rows = [[_cells(_measurement(view, mode), first[mode], with_gbps) for mode in modes] for view in devices]
        widths = [
            [max(len(head), *(len(row[group][i]) for row in rows)) for i, head in enumerate(heads)]
            for group in range(len(modes))
        ]
        group_widths = [max(sum(w) + len(w) - 1, len(mode)) for mode, w in zip(modes, widths, strict=True)]
        if name_width + sum(g + 3 for g in group_widths) <= width or not with_gbps:
            break
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" " * name_width)
    for mode, group in zip(modes, group_widths, strict=True):
        text.append(" │ ", style="dim")
        text.append(mode.ljust(group), style="bold")
    text.append("\n" + "device".ljust(name_width), style="dim")
    for w, group in zip(widths, group_widths, strict=True):
        text.append(" │ ", style="dim")
        text.append(" ".join(head.rjust(wi) for head, wi in zip(heads, w, strict=True)).rjust(group), style="dim")
    for view, row in zip(devices, rows, strict=True):
        text.append("\n")
        mark = "▸ " if view.entry == followed else "  "
        text.append_text(plain((mark + view.entry)[:name_width].ljust(name_width), "bold" if mark.strip() else ""))
        if view.held and all(shown.measurement is None for shown in view.modes):
            text.append(" │ ", style="dim")  # nothing to compare: why, in place of a row of dashes
            text.append_text(plain(view.held, "dim italic"))
            continue
        for cells, w, group in zip(row, widths, group_widths, strict=True):
            text.append(" │ ", style="dim")
            text.append(" ".join(cell.rjust(wi) for cell, wi in zip(cells, w, strict=True)).rjust(group))
    return text
