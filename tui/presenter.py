"""What the app shows, derived from the live session: every pane's state for one draw (``panes``),
the device's peak and label, the settings line, the pin's deltas, and the editor's and the status
bar's words.

Pure values, no textual and no torch, like ``tui.session``: each rule is unit-tested in
milliseconds, and the app only hands the results to its widgets.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rich.text import Text

from probes.link.baseline import Delta
from probes.link.protocol import ChainErrorInfo, DeviceInfo, Measurement
from probes.link.settings import Settings
from probes.link.summary import format_size
from tui.baseline_view import baseline_line, pin_deltas
from tui.session import LiveSession
from tui.views import EditorStatus, FocusView, SweepPaneState, SweepView
from tui.workspace import describe_modes


def device_names(session: LiveSession) -> list[str]:
    """The devices the worker has (none while it starts)."""
    ready = session.ready
    return [d.name for d in ready.devices] if ready else []


def device_info(session: LiveSession, name: str | None = None) -> DeviceInfo | None:
    """The worker's facts about ``name`` (the session's device by default), if it has that device."""
    ready = session.ready
    name = session.device if name is None else name
    return next((d for d in ready.devices if d.name == name), None) if ready else None


def device_label(session: LiveSession) -> str:
    """The device for the status bar: its model, with its name where the model does not say it."""
    name = session.device or ""
    device = device_info(session)
    if device is None:
        return name
    return device.label if device.label.lower().startswith(name.split(":")[0]) else f"{device.label} ({name})"


def peak_gbps(session: LiveSession) -> float | None:
    """The measured peak bandwidth of the session's device (None until the worker says it)."""
    device = device_info(session)
    return device.peak_gbps if device else None


def compute_peaks(session: LiveSession) -> dict[str, float]:
    """The measured compute peaks (TFLOP/s per dtype) of the session's device."""
    device = device_info(session)
    return device.compute_peaks_tflops if device else {}


def settings_line(settings: Settings, *, read_only: bool = False) -> str:
    """The status bar's settings: ``both · fp32 · N=1e6 · reps auto``."""
    reps = "auto" if settings.reps is None else str(settings.reps)
    text = f"{describe_modes(settings)} · {settings.dtype} · N={format_size(settings.focus_size)} · reps {reps}"
    return text + (" · read-only" if read_only else "")


def current_results(session: LiveSession, now: float) -> list[Measurement]:
    """The current chain's fresh results as set now: every mode at N, and its sweep."""
    focus = session.focus_view(now)
    found = {(m.mode, m.size): m for v in focus.modes if v.fresh and (m := v.measurement) is not None}
    sweep = session.sweep
    if sweep is not None and sweep.covers(session.chain, session.target(), session.modes(), ()):
        for m in sweep.measurements():
            found.setdefault((m.mode, m.size), m)
    return list(found.values())


def baseline_text(session: LiveSession, pinned: list[Measurement] | None, now: float) -> Text | None:
    """The headline's deltas against the pin (None when the chain has none)."""
    if not pinned:
        return None
    size = session.settings.focus_size
    current = [m for m in current_results(session, now) if m.size == size]
    if not current:
        return Text("vs pin: waiting for this text's results", style="dim magenta")
    return baseline_line(pinned, current)


def sweep_deltas(session: LiveSession, pinned: list[Measurement] | None) -> list[Delta]:
    """The sweep's deltas against the pin (a ``vs pin`` column of the sweep table): only from a
    sweep of the current text and settings, never from one left stale by an edit or a setting."""
    sweep = session.sweep
    if not pinned or sweep is None or not sweep.covers(session.chain, session.target(), session.modes(), ()):
        return []
    return pin_deltas(pinned, sweep.measurements())


def editor_status(session: LiveSession, focus: FocusView) -> str:
    """The editor's word on its text: ``✓``, ``profiling…``, ``edited``, ``✗ error`` or ``empty``."""
    if session.parse_error is not None:
        return "✗ error" if session.text.strip() else "empty"
    return "profiling…" if focus.busy else ("edited" if focus.stale or focus.updating else "✓")


def sweep_hint(*, in_editor: bool) -> str:
    """How to start a sweep from where the focus is (single letters are text in the editor)."""
    return "escape, then s to sweep" if in_editor else "press s to sweep"


def activity_status(session: LiveSession, now: float, *, frozen: bool = False) -> tuple[str, str]:
    """What runs now and for how long, for the status bar (``frozen``: no clock, for snapshots)."""
    activity = session.activity()
    if activity is None:
        return "", ""
    return activity.text, "" if frozen else f"{now - activity.started:.1f}s"


def followed_views(session: LiveSession, now: float) -> tuple[FocusView, SweepView]:
    """The kernel and sweep panes' views of the followed device; where there are several, with
    every device's view beside (the summary's lines, the chart's lines)."""
    followed = session.followed
    focus, sweep = session.focus_view(now, followed), session.sweep_view(followed)
    names = session.entry_names()
    if len(names) < 2:
        return focus, sweep
    devices = tuple(session.focus_view(now, entry) for entry in range(len(names)))
    if sweep.spread:  # one sweep, each point naming its device
        return dataclasses.replace(focus, devices=devices), sweep
    sweeps = tuple((name, session.state.entry_sweep(entry)) for entry, name in enumerate(names))
    return dataclasses.replace(focus, devices=devices), dataclasses.replace(sweep, devices=sweeps)


@dataclass(frozen=True)
class Panes:
    """Every pane's state for one draw."""

    focus: FocusView
    """The kernel pane's and the op chain pane's."""
    baseline: Text | None
    """The kernel pane's headline against the pin."""
    sweep: SweepPaneState
    editor: EditorStatus
    error: ChainErrorInfo | None
    """The error line under the editor (None for an empty text, which is no error)."""
    settings: str


def panes(
    session: LiveSession,
    *,
    name: str,
    pinned: list[Measurement] | None,
    now: float,
    in_editor: bool,
    chart: str = "time",
    read_only: bool = False,
) -> Panes:
    """What every pane shows now, for the chain ``name`` with its pin ``pinned``; the sweep chart
    plots ``chart`` (one of ``tui.workspace.CHART_VIEWS``). With several devices the kernel and
    sweep panes show the followed one's, beside every device's summary and chart line."""
    lead = session.focus_view(now)
    focus, sweep_view = followed_views(session, now)
    settings = session.settings
    sweep = SweepPaneState(
        sweep_view,
        chart,
        peak_gbps(session),
        sweep_hint(in_editor=in_editor),
        sweep_deltas(session, pinned),
    )
    error = session.parse_error if session.text.strip() else None
    return Panes(
        focus,
        baseline_text(session, pinned, now),
        sweep,
        EditorStatus(name, editor_status(session, lead)),
        error,
        settings_line(settings, read_only=read_only),
    )
