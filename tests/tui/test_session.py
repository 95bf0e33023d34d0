"""The live loop without an app: events in, effects and views out, in milliseconds."""

from __future__ import annotations

import dataclasses

import pytest

from probes.link.protocol import (
    ChainErrorInfo,
    DeviceInfo,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
)
from probes.link.settings import Settings
from tui.session import Cancel, LiveSession, Notice, Send, Timing, WakeAt

TIMING = Timing(eager_delay_s=0.03, compile_delay_s=0.5, stale_grace_s=0.35)


def ready(protocol: int = 2) -> WorkerReady:
    return WorkerReady(
        1,
        "2.x",
        [DeviceInfo("cuda:0", "H200", 0, 0, 4000.0), DeviceInfo("cpu", "CPU", 0, 0)],
        "cuda:0",
        protocol=protocol,
    )


def measurement(chain: str, mode: str, size: int = 1_000_000, kernels: float = 1) -> Measurement:
    return Measurement(chain, mode, size, "cuda:0", "fp32", [], [], kernels, 12 * size, 5.0, 9.0, 100, mode != "eager")


def sends(effects: list) -> list[ProfileRequest]:
    return [e.request for e in effects if isinstance(e, Send) and isinstance(e.request, ProfileRequest)]


def answer(session: LiveSession, request: ProfileRequest, now: float, *, done: bool = True) -> list:
    effects = []
    for size in request.sizes:
        for mode in request.modes:
            m = measurement(request.chain, mode, size)
            effects += session.on_event(MeasurementResult(request.id, m), now)
    if done:
        effects += session.on_event(RequestDone(request.id), now)
    return effects


def started(text: str = "(a + b).relu()", **settings: object) -> tuple[LiveSession, ProfileRequest]:
    session = LiveSession(Settings(**settings), text, timing=TIMING)
    [request] = sends(session.worker_ready(ready(), 0.0))
    return session, request


def test_a_loaded_chain_runs_every_mode_at_once_when_the_worker_is_ready() -> None:
    session = LiveSession(Settings(), "(a + b).relu()", timing=TIMING)
    assert session.tick(0.0) == []  # nothing before the worker is ready
    [request] = sends(session.worker_ready(ready(), 0.0))
    assert request.modes == ["eager", "compiled"] and request.sizes == [1_000_000]
    assert request.chain == "(a + b).relu()"
    view = session.focus_view(0.0)
    assert [v.activity for v in view.modes] == ["waiting", "waiting"] and view.busy
    effects = answer(session, request, 0.1)
    assert any(isinstance(e, Notice) and e.text == "profile done" for e in effects)
    view = session.focus_view(0.1)
    assert all(v.fresh for v in view.modes) and view.stale is None and not view.busy


def test_an_edit_measures_eager_then_compiled_in_one_request() -> None:
    """The compile is sent with the eager run (a compile typed over stops within ~10 ms, so it
    holds up no eager rows); the eager rows come first, the old compiled rows stay meanwhile."""
    session, first = started()
    answer(session, first, 0.1)
    effects = session.edit("(a + b).sigmoid()", 1.0)
    assert sends(effects) == [] and WakeAt(1.0 + TIMING.eager_delay_s) in effects
    [both] = sends(session.tick(1.03))
    assert both.modes == ["eager", "compiled"] and both.chain == "(a + b).sigmoid()"
    session.on_event(MeasurementResult(both.id, measurement(both.chain, "eager")), 1.08)
    view = session.focus_view(1.08)
    assert view.mode("eager").fresh and not view.mode("compiled").fresh
    assert view.mode("compiled").activity == "waiting" and view.busy
    assert view.updating and view.stale is None  # within the grace period: no dimming yet
    session.on_event(MeasurementResult(both.id, measurement(both.chain, "compiled")), 1.5)
    session.on_event(RequestDone(both.id), 1.5)
    assert all(v.fresh for v in session.focus_view(1.5).modes)


def test_a_compiled_part_waiting_for_its_worker_to_start_says_so() -> None:
    """While the compile worker starts, a run's eager part is measured and its compiled part waits
    for that worker: the compiled mode says why it waits, and no longer once the worker is up."""
    session, request = started()
    session.compiles_apart = session.compile_worker_starting = True
    session.on_event(
        Progress(request.id, "measuring eager at N=1,000,000", "measuring", "eager", 1_000_000, 1, 2), 0.01
    )
    view = session.focus_view(0.01)
    assert view.mode("eager").activity == "measuring" and view.mode("compiled").activity == "starting"
    session.compile_worker_starting = False
    assert session.focus_view(0.02).mode("compiled").activity == "waiting"


def test_by_default_an_edit_sends_its_eager_run_from_the_edit_itself() -> None:
    """Not from a timer: any timer, however short, fires after the frame that draws the key (20-50
    ms of the event loop), and the eager rows came that much later. A burst's older texts are
    cancelled by the next key, and only the last text's rows are shown."""
    session = LiveSession(Settings(), "(a + b).relu()")
    [first] = sends(session.worker_ready(ready(), 0.0))
    answer(session, first, 0.1)
    [older] = sends(session.edit("(a + b).sin()", 1.0))
    effects = session.edit("(a + b).sin() * 2", 1.001)
    [eager] = sends(effects)
    assert Cancel(older.id) in effects
    assert eager.modes == ["eager"] and eager.chain == "(a + b).sin() * 2"
    answer(session, older, 1.01)  # the cancelled run's late row: cached, never shown for this text
    assert session.focus_view(1.01).mode("eager").measurement.chain != older.chain
    answer(session, eager, 1.02)
    assert session.focus_view(1.02).mode("eager").fresh


def test_where_compiles_run_apart_on_a_gpu_an_edit_compiles_from_the_edit_itself() -> None:
    """A compile in a worker of its own holds up no eager rows: it is sent with the eager run, from
    the edit (a timer, however short, would fire only after the frame that draws the key), until
    typing has wasted one; then it waits, longer each time."""
    session = LiveSession(Settings(), "(a + b).relu()")
    session.compiles_apart = True
    [first] = sends(session.worker_ready(ready(), 0.0))
    answer(session, first, 0.1)
    [both] = sends(session.edit("(a + b).sigmoid()", 1.0))
    assert both.modes == ["eager", "compiled"] and both.chain == "(a + b).sigmoid()"
    [eager] = sends(session.edit("(a + b).tanh()", 1.2))  # typing over that compile wasted it
    assert eager.modes == ["eager"] and session.compile_delay == 2 * Timing().compile_wait_s
    answer(session, eager, 1.25)
    [compiled] = sends(session.tick(1.2 + session.compile_delay))
    assert compiled.modes == ["compiled", "eager"] and compiled.chain == "(a + b).tanh()"  # eager beside it


def test_on_the_cpu_a_compile_waits_for_a_pause_in_a_worker_of_its_own() -> None:
    """There the compile and the measurement would share the cores the measurement times: they
    take turns."""
    session, first = started(device="cpu")
    session.compiles_apart = True
    answer(session, first, 0.1)
    session.edit("(a + b).sigmoid()", 1.0)
    [eager] = sends(session.tick(1.03))
    assert eager.modes == ["eager"]
    answer(session, eager, 1.1)
    assert session.focus_view(1.1).mode("compiled").activity == "after a pause"
    assert sends(session.tick(1.0 + TIMING.compile_delay_s - 0.01)) == []
    [compiled] = sends(session.tick(1.0 + TIMING.compile_delay_s))
    assert compiled.modes == ["compiled"]


def compiling_a_new_chain() -> tuple[LiveSession, ProfileRequest]:
    """A session whose text was edited to ``a * b``: its eager rows are in, its compile runs."""
    session, first = started()
    answer(session, first, 0.1)
    session.edit("a * b", 1.0)
    [both] = sends(session.tick(1.03))
    session.on_event(MeasurementResult(both.id, measurement(both.chain, "eager")), 1.1)
    return session, both


def test_typing_over_a_compile_makes_the_next_compile_wait_longer() -> None:
    session, compiling = compiling_a_new_chain()
    assert session.compile_delay == 0.0
    session.edit("a * c", 1.6)  # typing again while that compile runs: it was wasted
    assert session.compile_delay == 2 * TIMING.compile_wait_s
    [eager] = sends(session.tick(1.6 + TIMING.eager_delay_s))
    assert eager.modes == ["eager"]
    answer(session, eager, 1.64)
    [late] = sends(session.tick(1.6 + session.compile_delay))
    assert late.modes == ["compiled", "eager"]
    answer(session, late, 3.0)
    assert 0 < session.compile_delay < 2 * TIMING.compile_wait_s  # it counted: shorter again


def test_typing_right_after_the_compiled_rows_came_does_not_slow_the_next_compile() -> None:
    session, compiling = compiling_a_new_chain()
    session.on_event(
        MeasurementResult(compiling.id, measurement(compiling.chain, "compiled")), 1.9
    )  # the request's end not yet
    session.edit("a * c", 1.95)
    assert session.compile_delay == 0.0


def test_a_burst_of_keys_sends_one_request_for_the_last_text() -> None:
    session, first = started()
    answer(session, first, 0.1)
    for i, text in enumerate(["(a + b).s", "(a + b).si", "(a + b).sig()"]):
        assert sends(session.edit(text, 1.0 + i * 0.001)) == []
    [request] = sends(session.tick(1.05))
    assert request.chain == "(a + b).sig()" and request.modes == ["eager", "compiled"]


def early_rows(m: Measurement) -> Measurement:
    """``m`` as the worker sends it first under ``early_rows``: every row, no wall time yet."""
    return dataclasses.replace(m, wall_time_us=None, wall_time_us_iqr=None)


def test_compiled_rows_show_before_their_wall_time_then_whole() -> None:
    session, first = started()
    assert first.early_rows  # what the kernel pane shows asks for its compiled rows first
    session.on_event(MeasurementResult(first.id, measurement(first.chain, "eager")), 0.1)
    session.on_event(MeasurementResult(first.id, early_rows(measurement(first.chain, "compiled"))), 0.2)
    view = session.focus_view(0.2)
    assert view.mode("compiled").fresh and view.mode("compiled").measurement.wall_pending
    assert view.busy and session.running()  # its wall time is still to come
    session.on_event(MeasurementResult(first.id, measurement(first.chain, "compiled")), 0.25)
    session.on_event(RequestDone(first.id), 0.25)
    view = session.focus_view(0.25)
    assert view.mode("compiled").fresh and view.mode("compiled").measurement.wall_time_us == 9.0 and not view.busy


def test_rows_whose_run_ended_before_their_wall_time_are_measured_again() -> None:
    """Typing over a run that sent its rows but not yet its wall time cancels it; going back to
    that text measures it again (the worker's compile cache makes that quick), not rows without a
    wall time for good. A cancelled run's rows without a wall time are never kept."""
    session, compiled = compiling_a_new_chain()
    session.on_event(MeasurementResult(compiled.id, early_rows(measurement(compiled.chain, "compiled"))), 1.6)
    assert session.focus_view(1.6).mode("compiled").fresh
    assert Cancel(compiled.id) in session.edit("a * c", 1.7)
    session.on_event(MeasurementResult(compiled.id, early_rows(measurement(compiled.chain, "compiled"))), 1.71)
    session.on_event(RequestDone(compiled.id, cancelled=True), 1.72)
    session.edit("a * b", 2.0)
    assert not session.focus_view(2.0).mode("compiled").fresh
    [again] = sends(session.tick(2.0 + TIMING.eager_delay_s))
    assert again.modes == ["compiled", "eager"] and again.chain == "a * b"


def test_typing_cancels_the_run_of_the_older_text_and_keeps_its_late_rows() -> None:
    session, first = started()
    answer(session, first, 0.1)
    session.edit("a * b", 1.0)
    [old] = sends(session.tick(1.1))
    effects = session.edit("a * c", 1.2)
    assert Cancel(old.id) in effects
    # The cancelled run still delivers a row: it is cached, so going back shows it at once.
    answer(session, old, 1.25)
    session.edit("a * b", 1.3)
    assert session.focus_view(1.3).mode("eager").fresh


def test_stale_rows_are_marked_after_the_grace_period_or_at_once_on_an_error() -> None:
    session, first = started()
    answer(session, first, 0.1)
    session.edit("a * b", 1.0)
    assert session.focus_view(1.1).updating and session.focus_view(1.1).stale is None
    assert session.focus_view(1.01 + TIMING.stale_grace_s).stale == "the chain was edited"
    session.edit("a * ", 2.0)
    view = session.focus_view(2.0)
    assert view.stale == "the chain has an error" and not view.updating
    assert view.mode("eager").measurement is not None  # the last good rows stay on screen
    assert sends(session.tick(5.0)) == []


def test_a_settings_change_re_measures_every_mode_at_once() -> None:
    session, first = started()
    answer(session, first, 0.1)
    changed = dataclasses.replace(session.settings, reps=50)
    effects = session.settings_changed(changed, "reps", 5.0)
    [request] = sends(effects)
    assert request.reps == 50 and request.modes == ["eager", "compiled"]
    assert session.focus_view(5.01 + TIMING.stale_grace_s).stale == "reps changed"
    changed = dataclasses.replace(session.settings, reps=None)  # back: the cached rows are fresh again, nothing is sent
    effects = session.settings_changed(changed, "reps", 6.0)
    assert Cancel(request.id) in effects and sends(effects) == []
    assert all(v.fresh for v in session.focus_view(6.0).modes)


def test_a_failure_shows_for_its_mode_and_the_older_rows_go_stale_at_once() -> None:
    session, first = started()
    answer(session, first, 0.1)
    session.edit("a.nope()", 1.0)
    [request] = sends(session.tick(1.1))
    error = ChainErrorInfo("runtime", "'Tensor' object has no attribute 'nope'")
    effects = session.on_event(RequestFailed(request.id, error, size=1_000_000, mode="eager"), 1.12)
    assert Notice("eager N=1e6: 'Tensor' object has no attribute 'nope'", "bold red", of_text=True) in effects
    session.on_event(RequestDone(request.id), 1.12)
    view = session.focus_view(1.12)
    assert view.mode("eager").failure is not None and view.stale == "the chain was edited"
    assert sends(session.tick(1.2)) == []  # a failed key is not retried on its own


def test_a_sweep_streams_rows_that_also_feed_the_focus_size() -> None:
    session, first = started(sizes=[100, 1_000_000])
    answer(session, first, 0.1)
    session.edit("a + b", 1.0)
    effects = session.start_sweep(1.01)
    [sweep] = sends(effects)
    assert sweep.sizes == [100, 1_000_000] and sweep.modes == ["eager", "compiled"]
    assert sends(session.tick(2.0)) == []  # the sweep covers the focus size: no separate run
    answer(session, sweep, 2.5, done=False)
    view = session.sweep_view()
    assert view.running and len(view.results.results) == 4 and view.stale is None
    sweep_results = view.results
    assert all(v.fresh for v in session.focus_view(2.5).modes)
    session.on_event(RequestDone(sweep.id), 2.6)
    assert not session.sweep_view().running
    session.edit("a - b", 3.0)
    assert session.sweep_view().results is None  # a new text: no sweep yet, not the other text's
    session.edit("a + b", 4.0)
    assert session.sweep_view().results is sweep_results and session.sweep_view().stale is None


def test_stop_cancels_and_holds_until_the_next_change() -> None:
    session, first = started()
    effects = session.stop()
    assert Cancel(first.id) in effects and Notice("cancelled", "yellow") in effects
    assert sends(session.tick(10.0)) == []
    assert session.focus_view(10.0).mode("eager").activity == "held"
    assert session.stop() == [Notice("nothing is running")]
    [again] = sends(session.run_now(11.0))
    assert again.modes == ["eager", "compiled"]


def test_a_held_chain_waits_for_run_now() -> None:
    session = LiveSession(Settings(), "(a + b).relu()", timing=TIMING)
    session.hold("from the workspace file: ctrl+r runs it")
    assert sends(session.worker_ready(ready(), 0.0)) == []
    assert session.focus_view(0.0).held.startswith("from the workspace file")
    changed = dataclasses.replace(session.settings, dtype="bf16")
    assert sends(session.settings_changed(changed, "dtype", 0.5)) == []  # a setting is no confirmation
    assert len(sends(session.run_now(1.0))) == 1


def test_warm_up_after_the_first_eager_rows_and_preempted_by_a_real_run() -> None:
    session, first = started(modes=("eager",))
    effects = answer(session, first, 0.1)
    [warm] = [e.request for e in effects if isinstance(e, Send)]
    assert isinstance(warm, WarmupRequest)
    session.edit("a * b", 1.0)
    effects = session.tick(1.1)
    assert effects[0] == Cancel(warm.id) and sends(effects)[0].chain == "a * b"
    answer(session, sends(effects)[0], 1.2)
    assert not any(isinstance(e, Send) for e in session.tick(2.0))  # once per worker


def test_no_warm_up_from_an_old_worker() -> None:
    session = LiveSession(Settings(modes=("eager",)), "a + b", timing=TIMING)
    [request] = sends(session.worker_ready(ready(protocol=1), 0.0))
    assert not any(isinstance(e, Send) for e in answer(session, request, 0.1))


def test_progress_says_which_mode_compiles() -> None:
    session, first = started()
    session.on_event(
        Progress(first.id, "compiling compiled at N=1,000,000", "compiling", "compiled", 1_000_000, 2, 2), 0.5
    )
    view = session.focus_view(0.5)
    assert view.mode("compiled").activity == "compiling" and view.mode("eager").activity == "waiting"
    assert session.activity().text == "compiling compiled at N=1,000,000 · 0/2 done"


def test_importing_the_compiler_reads_as_compiling_with_what_it_does() -> None:
    """A worker's first compile imports Dynamo and Inductor first (a second or more): the compiled
    block says it is compiling, not waiting, and the status bar says what takes the time."""
    session, first = started()
    session.on_event(
        Progress(first.id, "importing Dynamo and Inductor (once)", "importing", "compiled", 1_000_000, 2, 2), 0.5
    )
    assert session.focus_view(0.5).mode("compiled").activity == "compiling"
    assert session.activity().text == "importing Dynamo and Inductor (once) · 0/2 done"


def test_a_wait_for_a_device_another_process_holds_reads_as_waiting_with_who_holds_it() -> None:
    session, first = started()
    words = "waiting for cpu: kernel-tui (pid 4242) measures there since 12:01:07"
    session.on_event(Progress(first.id, words, "waiting", "eager", 1_000_000, 1, 2), 0.5)
    assert session.focus_view(0.5).mode("eager").activity == "waiting"
    assert session.activity().text == f"{words} · 0/2 done"


def test_an_unavailable_device_falls_back_with_a_notice() -> None:
    session = LiveSession(Settings(device="cuda:3"), "a + b", timing=TIMING)
    effects = session.worker_ready(ready(), 0.0)
    assert Notice("device cuda:3 is not available here; using cuda:0", "yellow") in effects
    assert session.device == "cuda:0" and sends(effects)[0].device is None


@pytest.mark.parametrize("text", ["", "(a +", "a.__class__"])
def test_nothing_runs_for_a_text_that_does_not_parse(text: str) -> None:
    session = LiveSession(Settings(), text, timing=TIMING)
    assert sends(session.worker_ready(ready(), 0.0)) == []
    assert session.parse_error is not None
    said = session.start_sweep(0.0)[0].text
    assert said == "the editor is empty: type a chain first" if not text else "fix the chain first" in said


# -- the worker link lost, and sweeps cut short ---------------------------------------------------


def failed(request: ProfileRequest, kind: str, message: str, **where: object) -> RequestFailed:
    return RequestFailed(request.id, ChainErrorInfo(kind, message), **where)  # type: ignore[arg-type]


def test_a_run_that_lost_the_link_is_measured_again_once_a_worker_is_ready() -> None:
    """The link's failure is not the chain's: no failure is filed for its rows and nothing is
    said here (the status bar says it); the rows are measured when a worker answers again."""
    session, first = started()
    effects = session.on_event(
        failed(first, "link", "the link to the worker stopped answering (nothing for 15 s)"), 1.0
    )
    assert effects == []
    session.worker_lost()  # the replacement failed to start: nothing is sent meanwhile
    session.on_event(RequestDone(first.id), 1.0)
    view = session.focus_view(1.0)
    assert all(v.failure is None for v in view.modes) and view.errors == ()
    assert sends(session.edit("a * b", 2.0)) == []  # the user keeps editing while no worker answers
    [again] = sends(session.worker_ready(ready(), 30.0))
    assert again.chain == "a * b" and again.modes == ["eager", "compiled"]


def test_a_chain_that_loses_the_link_again_is_not_run_forever() -> None:
    session, first = started()
    session.on_event(failed(first, "link", "the link to the worker stopped answering"), 1.0)
    [again] = sends(session.on_event(RequestDone(first.id), 1.0))
    session.on_event(failed(again, "link", "the link to the worker stopped answering"), 20.0)
    assert sends(session.on_event(RequestDone(again.id), 20.0)) == []
    assert all(v.failure is not None for v in session.focus_view(20.0).modes)


def test_a_worker_that_died_in_a_run_is_said_in_its_pane_not_again_in_the_status_bar() -> None:
    session, first = started()
    effects = session.on_event(failed(first, "worker", "the worker was killed by signal 9"), 1.0)
    assert not [e for e in effects if isinstance(e, Notice)]
    session.on_event(RequestDone(first.id), 1.0)
    view = session.focus_view(1.0)
    assert [f.error.message for f in view.errors] == ["the worker was killed by signal 9"]


def test_a_requests_failure_is_none_of_the_rows_it_brought() -> None:
    session, first = started()
    session.on_event(MeasurementResult(first.id, measurement(first.chain, "eager")), 1.0)
    session.on_event(failed(first, "worker", "the worker was killed by signal 9"), 1.1)
    session.on_event(RequestDone(first.id), 1.1)
    eager, compiled = session.focus_view(1.1).modes
    assert eager.fresh and eager.failure is None and compiled.failure is not None


def swept(sizes: list[int]) -> tuple[LiveSession, ProfileRequest]:
    session, first = started(sizes=sizes)
    answer(session, first, 0.1)
    [sweep] = sends(session.start_sweep(1.0))
    return session, sweep


def answer_sizes(session: LiveSession, sweep: ProfileRequest, sizes: list[int], now: float) -> None:
    for size in sizes:
        for mode in sweep.modes:
            session.on_event(MeasurementResult(sweep.id, measurement(sweep.chain, mode, size)), now)


def sweep_line(session: LiveSession) -> str:
    from tui.views import SweepPaneState
    from tui.widgets.sweep_pane import status_line

    return status_line(SweepPaneState(session.sweep_view())).plain


SIZES = [100, 10_000, 1_000_000, 10_000_000, 100_000_000]


def test_a_sweep_gives_its_verdict_once_its_last_size_is_in() -> None:
    session, sweep = swept(SIZES)
    answer_sizes(session, sweep, SIZES[:4], 2.0)
    assert "measuring: 8/10 done" in sweep_line(session) and "per call" not in sweep_line(session)
    session.on_event(Progress(sweep.id, "measuring eager at N=1e8", "measuring", "eager", SIZES[4], 9, 10), 2.5)
    assert session.activity().text.endswith("· 8/10 done")  # one count: the worker's step 9 is under way
    answer_sizes(session, sweep, SIZES[4:], 3.0)
    session.on_event(RequestDone(sweep.id), 3.0)
    assert "per call" in sweep_line(session) and "incomplete" not in sweep_line(session)


def test_a_sweep_stopped_with_ctrl_c_says_which_sizes_are_missing_and_gives_no_verdict() -> None:
    session, sweep = swept(SIZES)
    answer_sizes(session, sweep, SIZES[:3], 2.0)
    assert Cancel(sweep.id) in session.stop()
    session.on_event(RequestDone(sweep.id, cancelled=True), 2.1)
    line = sweep_line(session)
    assert line.startswith("incomplete: 3 of 5 sizes measured, 1e7 and 1e8 missing (stopped")
    assert "per call" not in line and "crossover" not in line


def test_a_sweep_whose_worker_died_says_which_sizes_are_missing_and_gives_no_verdict() -> None:
    session, sweep = swept(SIZES)
    answer_sizes(session, sweep, SIZES[:3], 2.0)
    session.on_event(failed(sweep, "worker", "the worker was killed by signal 9"), 2.5)
    session.on_event(RequestDone(sweep.id), 2.5)
    line = sweep_line(session)
    assert line.startswith("incomplete: 3 of 5 sizes measured, 1e7 and 1e8 missing")
    assert "per call" not in line and line.count("killed by signal 9") == 1
    assert session.focus_view(2.5).errors == ()  # the focus size's rows came: not its failure


def test_a_sweep_whose_link_was_lost_says_so_and_gives_no_verdict() -> None:
    session, sweep = swept(SIZES)
    answer_sizes(session, sweep, SIZES[:4], 2.0)
    session.on_event(failed(sweep, "link", "the connection failed (ssh exit 255)"), 2.5)
    session.on_event(RequestDone(sweep.id), 2.5)
    line = sweep_line(session)
    assert line.startswith("incomplete: 4 of 5 sizes measured, 1e8 missing (the worker was lost")
    assert "per call" not in line and "ssh" not in line  # the status bar says why


def test_a_size_refused_on_its_own_leaves_the_sweep_complete() -> None:
    session, sweep = swept(SIZES)
    answer_sizes(session, sweep, SIZES[:4], 2.0)
    session.on_event(failed(sweep, "memory", "needs 12 GB, 8 GB free", size=SIZES[4]), 2.5)
    session.on_event(RequestDone(sweep.id), 2.5)
    line = sweep_line(session)
    assert "per call" in line.splitlines()[0] and "incomplete" not in line


def test_a_size_whose_input_shape_does_not_exist_is_one_failed_size_the_rest_measured() -> None:
    """The softmax example (``x: [N // 1024, 1024]``) over the default sizes: N=1e2 fails on its
    own, the four others are measured, and the pane says so in those words, with its verdict."""
    session, sweep = swept(SIZES)
    dim = "line 1: input 'x': dim 'N // 1024' is 0 at N=100; dims must be positive"
    session.on_event(failed(sweep, "input", dim, size=SIZES[0]), 2.0)
    answer_sizes(session, sweep, SIZES[1:], 2.5)
    session.on_event(RequestDone(sweep.id), 2.5)
    first, *rest = sweep_line(session).splitlines()
    assert "per call" in first and "4 of 5 sizes measured, 1e2 failed" in first and "incomplete" not in first
    assert rest[-1] == f"✗ N=1e2: {dim}"


# -- ratios pair readings of one request ----------------------------------------------------------


def test_a_compile_mode_changed_after_a_sweep_measures_eager_again_beside_it() -> None:
    """The sweep's eager reading (taken then, under whatever load) is not paired with a fresh
    compiled one: eager is measured again in the compiled request, and until it is in, the
    headline says the two came from separate runs instead of a ratio."""
    from tui.widgets.kernel_pane import headline_text

    session, first = started(sizes=[1_000_000])
    answer(session, first, 0.1)
    [sweep] = sends(session.start_sweep(1.0))
    answer(session, sweep, 2.0)
    changed = dataclasses.replace(session.settings, modes=("eager", "max-autotune"))
    [request] = sends(session.settings_changed(changed, "compile mode", 3.0) + session.tick(3.0))
    assert request.modes == ["max-autotune", "eager"]  # the compile first, eager right after it
    m = measurement(request.chain, "max-autotune")
    session.on_event(MeasurementResult(request.id, m), 3.5)
    view = session.focus_view(3.5)
    assert view.mode("eager").batch == sweep.id and view.mode("max-autotune").batch == request.id
    head = headline_text(view, 200).plain
    assert "ratio unclear: measured in separate runs; measuring eager beside compiled…" in head
    assert "device " not in head  # no figure from the two runs
    assert not session.measured_together(request.chain, ("eager", "max-autotune"))  # compare measures both
    answer(session, request, 4.0)
    view = session.focus_view(4.0)
    assert view.mode("eager").batch == view.mode("max-autotune").batch == request.id
    assert session.measured_together(request.chain, ("eager", "max-autotune"))
    assert "separate runs" not in headline_text(view, 200).plain


def test_where_compiles_take_turns_on_the_cpu_readings_of_two_runs_make_no_ratio() -> None:
    from tui.widgets.kernel_pane import headline_text

    session, first = started(device="cpu")
    session.compiles_apart = True
    answer(session, first, 0.1)
    session.edit("(a + b).sigmoid()", 1.0)
    [eager] = sends(session.tick(1.03))
    answer(session, eager, 1.1)
    [compiled] = sends(session.tick(1.0 + TIMING.compile_delay_s))
    assert compiled.modes == ["compiled"]  # no measurement beside a compile on the CPU's cores
    answer(session, compiled, 2.0)
    head = headline_text(session.focus_view(2.0), 200).plain
    assert "ratio unclear: measured in separate runs, ctrl+r re-runs" in head
    [again] = sends(session.run_now(3.0))
    assert again.modes == ["eager", "compiled"]
    answer(session, again, 4.0)
    assert "separate runs" not in headline_text(session.focus_view(4.0), 200).plain


# -- the same text, the same settings -------------------------------------------------------------


def test_an_empty_editor_is_empty_not_a_chain_with_an_error() -> None:
    session, first = started()
    answer(session, first, 0.1)
    session.edit("", 1.0)
    assert session.focus_view(1.0).stale == "empty"
    assert session.start_sweep(1.1) == [Notice("the editor is empty: type a chain first", "yellow")]
    session.edit("(a +", 2.0)
    assert session.focus_view(2.0).stale == "the chain has an error"


def test_a_sweep_of_other_settings_is_stale_and_another_texts_is_not_shown() -> None:
    session, first = started(sizes=[100, 1_000_000])
    answer(session, first, 0.1)
    [sweep] = sends(session.start_sweep(1.0))
    answer(session, sweep, 2.0)
    changed = dataclasses.replace(session.settings, dtype="bf16")
    session.settings_changed(changed, "dtype", 3.0)
    assert session.sweep_view().stale == "settings changed: s sweeps again"
    session.edit("a * b", 4.0)
    assert session.sweep_view().results is None and session.sweep_view().stale is None


@pytest.mark.parametrize("apart", [False, True])
def test_a_host_bound_wall_ratio_from_two_workers_is_unclear_the_device_ratio_stands(apart: bool) -> None:
    """Where compiles run in a worker of their own, eager and compiled wall times come from two
    processes, whose host speed differs by up to 2x: a host-bound call's wall ratio is no conclusion
    there; its device ratio (the kernels') is."""
    from probes.link.summary import TWO_PROCESSES
    from tui.widgets.kernel_pane import headline_text

    session = LiveSession(Settings(), "(a + b).relu()", timing=TIMING)
    session.compiles_apart = apart
    [request] = sends(session.worker_ready(ready(), 0.0))
    for mode, device_us in (("eager", 10.0), ("compiled", 5.0)):
        m = dataclasses.replace(measurement(request.chain, mode), device_time_us=device_us, wall_time_us=50.0)
        session.on_event(MeasurementResult(request.id, m), 0.1)
    session.on_event(RequestDone(request.id), 0.1)
    view = session.focus_view(0.1)
    head = headline_text(view, 300).plain
    assert view.two_processes == apart and "device 2.00x" in head
    assert (f"wall unclear: {TWO_PROCESSES}" in head) == apart and ("wall no clear difference" in head) != apart


def test_a_sweep_split_between_two_workers_states_no_host_bound_wall_speedup() -> None:
    from tui.widgets.sweep_pane import sweep_rows

    session, first = started(sizes=[100, 1_000_000])
    session.compiles_apart = True
    answer(session, first, 0.1)
    [sweep] = sends(session.start_sweep(1.0))
    answer(session, sweep, 2.0)  # device 5 µs of a 9 µs call: kernels dominate at every size
    view = session.sweep_view()
    assert view.two_processes
    results = view.results
    host_bound = dataclasses.replace(results.results[(100, "compiled")], wall_time_us=50.0)
    results.results[(100, "compiled")] = host_bound
    _, rows = sweep_rows(results, False, None, False, two_processes=view.two_processes)
    speedups = {(row[0].plain, row[1].plain): row[-1].plain for row in rows}
    assert speedups[("1e2", "compiled")] == "unclear" and speedups[("1e6", "compiled")] != "unclear"
