"""What the panes and the status bar are given, derived from a live session without an app."""

from __future__ import annotations

import dataclasses

from test_session import TIMING, answer, measurement, ready, sends, started

from probes.link.protocol import DeviceInfo, Progress, WorkerReady
from probes.link.settings import Settings
from tui import presenter
from tui.baseline_view import pin_record, read_pin
from tui.session import LiveSession


def test_the_device_label_names_the_model_and_the_device_where_the_model_does_not() -> None:
    session, _ = started()
    assert presenter.device_names(session) == ["cuda:0", "cpu"]
    assert presenter.device_label(session) == "H200 (cuda:0)"
    session.settings = dataclasses.replace(session.settings, device="cpu")
    assert presenter.device_label(session) == "CPU"


def test_before_the_worker_is_ready_there_are_no_devices_and_no_peak() -> None:
    session = LiveSession(Settings(device="cuda:1"), "a + b", timing=TIMING)
    assert presenter.device_names(session) == []
    assert presenter.device_label(session) == "cuda:1"
    assert presenter.peak_gbps(session) is None and presenter.compute_peaks(session) == {}


def test_the_peaks_are_the_selected_devices() -> None:
    session = LiveSession(Settings(), "a + b", timing=TIMING)
    devices = [
        DeviceInfo("cuda:0", "H200", 0, 0, 4000.0, compute_peaks_tflops={"fp32": 50.0}),
        DeviceInfo("cpu", "CPU", 0, 0),
    ]
    session.worker_ready(WorkerReady(1, "2.x", devices, "cuda:0", protocol=2), 0.0)
    assert presenter.peak_gbps(session) == 4000.0 and presenter.compute_peaks(session) == {"fp32": 50.0}
    session.settings = dataclasses.replace(session.settings, device="cpu")
    assert presenter.peak_gbps(session) is None and presenter.compute_peaks(session) == {}


def test_the_settings_line_says_modes_dtype_size_reps_and_a_read_only_workspace() -> None:
    settings = Settings(dtype="bf16", focus_size=10_000_000, reps=50)
    assert presenter.settings_line(settings) == "eager+compiled · bf16 · N=1e7 · reps 50"
    assert presenter.settings_line(Settings(), read_only=True).endswith("reps auto · read-only")


def test_the_editor_says_what_its_text_is_waiting_for() -> None:
    session, request = started()
    assert presenter.editor_status(session, session.focus_view(0.0)) == "profiling…"
    answer(session, request, 0.1)
    assert presenter.editor_status(session, session.focus_view(0.1)) == "✓"
    session.edit("(a + b", 1.0)
    assert presenter.editor_status(session, session.focus_view(1.0)) == "✗ error"
    session.edit("", 2.0)
    assert presenter.editor_status(session, session.focus_view(2.0)) == "empty"


def test_an_empty_text_shows_no_error_line() -> None:
    session, _ = started()
    session.edit("", 1.0)
    panes = presenter.panes(session, name="empty", pinned=None, now=1.0, in_editor=True)
    assert panes.error is None and panes.editor.status == "empty"
    session.edit("a +", 2.0)
    assert presenter.panes(session, name="x", pinned=None, now=2.0, in_editor=True).error is not None


def test_the_sweep_hint_says_to_leave_the_editor_first() -> None:
    session, _ = started()
    assert presenter.panes(session, name="c", pinned=None, now=0.0, in_editor=True).sweep.hint.startswith("escape")
    assert presenter.panes(session, name="c", pinned=None, now=0.0, in_editor=False).sweep.hint == "press s to sweep"


def test_the_status_bar_shows_what_runs_with_a_clock_unless_frozen() -> None:
    session, request = started()
    assert presenter.activity_status(session, 1.3) == ("sending", "1.3s")
    session.on_event(Progress(request.id, "measuring eager", step=1, total=2), 1.0)
    assert presenter.activity_status(session, 1.5) == ("measuring eager · 0/2 done", "1.5s")
    assert presenter.activity_status(session, 1.5, frozen=True) == ("measuring eager · 0/2 done", "")
    answer(session, request, 2.0)
    assert presenter.activity_status(session, 2.0) == ("", "")


def test_without_a_pin_there_is_no_baseline_and_no_sweep_deltas() -> None:
    session, request = started()
    answer(session, request, 0.1)
    panes = presenter.panes(session, name="c", pinned=None, now=0.2, in_editor=False)
    assert panes.baseline is None and panes.sweep.baseline == []


def test_a_pinned_result_reads_against_the_current_one_once_it_is_in() -> None:
    session, request = started()
    answer(session, request, 0.1)
    pinned = read_pin(pin_record(presenter.current_results(session, 0.2)))
    assert {(m.mode, m.size) for m in pinned} == {("eager", 1_000_000), ("compiled", 1_000_000)}
    assert str(presenter.baseline_text(session, pinned, 0.2)).startswith("vs pin")
    session.edit("(a * b).relu()", 1.0)
    assert str(presenter.baseline_text(session, pinned, 1.0)) == "vs pin: waiting for this text's results"


def test_the_sweep_shows_deltas_against_the_pin() -> None:
    session, request = started()
    answer(session, request, 0.1)
    effects = session.start_sweep(0.2)
    [sweep] = sends(effects)
    answer(session, sweep, 0.5)
    pinned = [measurement("(a + b).relu()", mode, size) for mode in ("eager", "compiled") for size in sweep.sizes]
    deltas = presenter.sweep_deltas(session, pinned)
    assert deltas and {d.size for d in deltas} == set(sweep.sizes)
    assert presenter.panes(session, name="c", pinned=pinned, now=0.6, in_editor=False).sweep.baseline == deltas


def test_the_panes_carry_the_chain_name_the_chart_and_the_peak() -> None:
    session, _ = started()
    session.worker_ready(ready(), 0.0)
    panes = presenter.panes(session, name="add relu", pinned=None, now=0.0, in_editor=False, chart="gbps")
    assert panes.editor.name == "add relu"
    assert panes.sweep.chart == "gbps" and panes.sweep.peak_gbps == 4000.0
    assert panes.focus == session.focus_view(0.0) and panes.settings == presenter.settings_line(session.settings)


def test_the_pin_is_never_set_against_a_sweep_of_other_settings_or_another_text() -> None:
    """A pin set against a sweep left stale (an earlier text's, or other settings') drew deltas
    such as +5108%: only a sweep of the text and settings now is compared."""
    session, first = started(sizes=[100, 1_000_000])
    answer(session, first, 0.1)
    [sweep] = sends(session.start_sweep(1.0))
    answer(session, sweep, 2.0)
    pinned = read_pin(pin_record(presenter.current_results(session, 2.0)))
    assert presenter.sweep_deltas(session, pinned)  # the sweep now, against the pin
    session.settings_changed(dataclasses.replace(session.settings, reps=50), "reps", 3.0)
    assert session.sweep_view().stale and presenter.sweep_deltas(session, pinned) == []
    changed = dataclasses.replace(session.settings, reps=None)
    session.settings_changed(changed, "reps", 4.0)
    session.edit("a * b", 5.0)
    assert presenter.sweep_deltas(session, pinned) == []
