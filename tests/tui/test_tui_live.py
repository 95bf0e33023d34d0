"""Pilot tests of the live loop against the replay worker: start-up, edits, errors, staleness."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tui_helpers import (
    LONG_CHAIN,
    SEED_CHAIN,
    TEST_TIMING,
    focus_done,
    focus_view,
    recording,
    replay_command,
    settled,
    shown,
    wait_for,
)

from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.kernel_pane import KernelPane, KernelTable
from tui.widgets.status_bar import StatusBar


def headline(app) -> str:
    return str(app.query_one("#headline").render())


def kernel_names(app, mode: str) -> list[str]:
    table = app.query_one(f"#table-{mode}", KernelTable)
    return [table.row_cells(i)[0].plain for i in range(table.row_count)]


async def replace_text(pilot, app, text: str) -> None:
    editor = app.query_one(ChainEditor)
    editor.focus()
    editor.select_all()
    await pilot.press("backspace")
    for ch in text:
        await pilot.press({" ": "space", "\n": "enter"}.get(ch, ch))


def replay_once_open(gate: Path) -> list[str]:
    """A replay worker that starts once the test creates ``gate``."""
    return [
        sys.executable,
        "-c",
        "import os, time, runpy, sys\n"
        "while not os.path.exists(sys.argv[2]): time.sleep(0.01)\n"
        "sys.argv = ['replay', sys.argv[1]]; runpy.run_module('probes.link.replay', run_name='__main__')",
        str(recording()),
        str(gate),
    ]


async def test_first_frame_before_the_worker_is_ready(make_app, tmp_path: Path) -> None:
    """The UI is up (status: starting worker) while the worker still imports torch."""
    gate = tmp_path / "go"  # the worker starts once the test has seen the first frame
    app = make_app(worker_command=replay_once_open(gate))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        status = app.query_one(StatusBar).info
        assert status.worker_state == "starting"
        assert "starting worker" in str(app.query_one(StatusBar).render())
        assert app.query_one(ChainEditor).text == SEED_CHAIN
        gate.touch()
        await wait_for(pilot, lambda: focus_done(app), what="first results")
        assert app.query_one(StatusBar).info.worker_state == "ready"
        assert "NVIDIA H200" in app.query_one(StatusBar).info.device


async def test_compiled_rows_that_wait_for_the_compile_worker_say_so(make_app, tmp_path: Path) -> None:
    """The first eager rows come while the compile worker still starts; the compiled block says
    what it waits for, then shows its rows once that worker has started."""
    gate = tmp_path / "go"
    app = make_app(compile_worker=True)
    held = app.bridge.workers.compiler
    held.command = replay_once_open(gate)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_view(app).mode("eager").fresh, what="eager rows")
        assert app.bridge.workers.compiler is held and held.state == "starting"
        note = app.query_one("#mode-note-compiled")
        assert "waiting for the compile worker to start" in str(note.render())
        gate.touch()
        await wait_for(pilot, lambda: focus_done(app), what="compiled rows")
        assert "waiting for the compile worker" not in str(note.render())
        assert kernel_names(app, "compiled")[0].endswith("fused_add_relu_0")


async def test_seed_chain_profiles_on_start(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        line = headline(app)
        assert "eager 2 kernels / 5N -> compiled 1 kernel / 3N" in line
        assert "STALE" not in line
        assert len(kernel_names(app, "eager")) == 2
        block = app.query_one("#mode-compiled")
        assert [row.short_name for row in block.rows] == ["triton_poi_fused_add_relu_0"]
        assert kernel_names(app, "compiled")[0].endswith("fused_add_relu_0")
        # The op chain pane shows add -> relu, fused into the one compiled kernel.
        ops = app.query_one("#ops-table")
        assert ops.row_count == 2
        assert "triton_poi_fused_add_relu_0" in ops.row_cells(0)[-1].plain
        assert "2 ops → 1 kernel" in str(app.query_one("#compile-info").render())


async def test_the_op_chain_pairs_ops_only_with_their_own_chains_compiled_kernels(make_app, tmp_path) -> None:
    """While a new text compiles, the last text's compiled rows stay on screen (marked stale after
    the grace period); the op chain pane paired the new text's ops with that compile's kernels
    (`tanh ─ cpp_fused_add_relu_0`, "3 ops → 1 kernel" of a 2-op compile), seen in a terminal."""
    from tui_helpers import replay_command

    # The compiled results wait for this file, so the eager-only state lasts as long as the test looks.
    go_ahead = tmp_path / "send-compiled"
    app = make_app(worker_command=replay_command(hold_compiled=go_ahead))
    async with app.run_test(size=(120, 40)) as pilot:
        go_ahead.touch()
        await wait_for(pilot, lambda: focus_done(app), what="results")
        go_ahead.unlink()
        app.query_one(ChainEditor).load_text("(a * b).sum()")

        def new_eager_only() -> bool:
            view = focus_view(app)
            return view.mode("eager").fresh and not view.mode("compiled").fresh

        await wait_for(pilot, new_eager_only, what="the new text's eager rows, before its compiled ones")
        await pilot.pause()
        ops = app.query_one("#ops-table")
        assert [ops.row_cells(i)[0].plain for i in range(ops.row_count)] == ["mul", "sum"]
        assert not any("fused" in ops.row_cells(i)[-1].plain for i in range(ops.row_count))
        assert str(app.query_one("#compile-info").render()).strip() == ""
        go_ahead.touch()
        await wait_for(pilot, lambda: focus_done(app), what="the compiled rows")
        await pilot.pause()
        assert any("mul_sum" in ops.row_cells(i)[-1].plain for i in range(ops.row_count))


async def test_compiled_rows_show_while_their_wall_time_is_timed(make_app, tmp_path) -> None:
    """A new text's compiled rows show as soon as the worker has profiled them: kernels and device
    time, the wall time "timing…" (no ratio of it in the headline, no pin or export of it) until it
    comes."""
    from tui_helpers import recorded, replay_command

    from probes.link.summary import format_time_us

    # The wall times wait for this file, so the rows-only state lasts as long as the test looks.
    go_ahead = tmp_path / "send-wall-times"
    app = make_app(worker_command=replay_command(hold_wall_time=go_ahead))
    async with app.run_test(size=(120, 40)) as pilot:
        go_ahead.touch()
        await wait_for(pilot, lambda: focus_done(app), what="results")
        go_ahead.unlink()
        app.query_one(ChainEditor).load_text("(a * b).sum()")

        def rows_without_wall_time() -> bool:
            m = shown(app, "compiled")
            return m is not None and m.chain == "(a * b).sum()" and m.wall_pending

        await wait_for(pilot, rows_without_wall_time, what="compiled rows before their wall time")
        await pilot.pause()
        title = str(app.query_one("#mode-title-compiled").render())
        assert "wall timing…" in title and "device" in title
        assert "mul_sum" in kernel_names(app, "compiled")[0]
        assert "device" in headline(app) and "wall" not in headline(app)
        await pilot.press("escape", "p")  # a pin keeps its figures: not before the wall time
        assert "wall time is being timed" in app.main.status.said[-1][0] and app.workspace.pins == {}
        await pilot.press("J")  # nor a report, whose wall column would be empty for good
        assert "export in a moment" in app.main.status.said[-1][0] and not list(app.export_dir.glob("*.json"))
        go_ahead.touch()
        await wait_for(pilot, lambda: focus_done(app), what="the wall time")
        await pilot.pause()
        whole = next(m for m in recorded("mul_sum").results if m.mode == "compiled" and m.size == 1_000_000)
        title = str(app.query_one("#mode-title-compiled").render())
        assert f"wall {format_time_us(whole.wall_time_us)}" in title and "timing" not in title
        await pilot.press("p")
        assert app.main.status.said[-1][0].startswith("pinned")
        await pilot.press("J")
        assert len(list(app.export_dir.glob("*.json"))) == 1


async def test_the_status_bar_clock_ticks_without_laying_the_screen_out(make_app, tmp_path) -> None:
    """While a request runs, the bar's clock and spinner change ten times a second: each is a
    repaint of the bar, not a layout of the whole screen (10-15 ms of the event loop on the H200
    box, which a result arriving meanwhile waited for). A message that needs lines of its own
    still lays the screen out."""
    from tui_helpers import replay_command

    # The compiled results wait for this file: the replay worker says nothing more meanwhile.
    go_ahead = tmp_path / "send-compiled"
    app = make_app(worker_command=replay_command(hold_compiled=go_ahead), frozen=False)
    async with app.run_test(size=(120, 40)) as pilot:
        bar = app.query_one(StatusBar)
        await wait_for(pilot, lambda: "compiled at" in bar.info.activity, what="the compiled step running")
        ticks = bar.info.spin + 1  # past the step's own draw and the eager rows' before it
        await wait_for(pilot, lambda: bar.info.spin > ticks, what="the clock past the step's draw")
        await pilot.pause()
        screen, layouts = app.screen, []
        lay_out = screen._refresh_layout

        def counted(*args, **kwargs):
            layouts.append(bar.info.spin)
            return lay_out(*args, **kwargs)

        screen._refresh_layout = counted
        start = bar.info.spin
        await wait_for(pilot, lambda: bar.info.spin >= start + 5, what="five ticks of the clock")
        assert layouts == [] and bar.size.height == 1
        go_ahead.touch()
        await wait_for(pilot, lambda: settled(app), what="the request's end")
        app.main.message("a message too long for one line: " + "word " * 40, "red")
        await wait_for(pilot, lambda: bar.size.height > 1, what="the message on lines of its own")


async def test_broken_chain_shows_inline_error_and_stale_mark_then_fix(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        good = shown(app, "eager")
        editor = app.query_one(ChainEditor)
        editor.focus()
        editor.move_cursor((0, len(editor.text)))
        await pilot.press("backspace")  # "(a + b).relu(" : unclosed
        await pilot.pause()
        error = app.query_one(ChainErrorLine)
        assert error.has_class("-shown")
        assert "line 1, col" in str(error.render()) and "never closed" in str(error.render())
        assert shown(app, "eager") is good  # the last good result stays...
        assert "STALE" in headline(app)  # ...marked stale
        assert kernel_names(app, "eager")  # rows still on screen
        await pilot.press(")")
        await wait_for(pilot, lambda: "STALE" not in headline(app), what="fresh results")
        assert not error.has_class("-shown")
        assert "compiled 1 kernel" in headline(app)


async def test_rejected_construct_is_named_inline(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await replace_text(pilot, app, "a.__class__")
        await pilot.pause()
        text = str(app.query_one(ChainErrorLine).render())
        assert "__class__" in text and "not allowed" in text
        assert "Traceback" not in text


async def test_unrecorded_chain_fails_in_plain_words_and_keeps_last_result(make_app) -> None:
    """A chain the worker cannot measure: message in the kernel pane and status bar, old rows stale."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        good = shown(app, "eager")
        await replace_text(pilot, app, "a * b")
        await wait_for(pilot, lambda: app.session.text == "a * b" and settled(app), what="failed request")
        assert shown(app, "eager") is good
        assert "STALE" in headline(app)
        assert "no recording of this chain" in str(app.query_one("#mode-note-eager").render())
        assert "no recording" in app.query_one(StatusBar).info.message
        await pilot.press("space")  # the same chain: its failure still holds
        await wait_for(pilot, lambda: app.session.text == "a * b ", what="a space")
        assert "no recording" in app.query_one(StatusBar).info.message
        await pilot.press("+")  # another chain (not one to run): the failure's message goes
        await wait_for(pilot, lambda: app.session.text == "a * b +", what="another chain")
        assert "no recording" not in app.query_one(StatusBar).info.message


async def test_typing_sends_the_last_text_and_cancels_the_older_ones(make_app) -> None:
    """Whitespace changes send nothing; typing ends with one request for the final text (eager,
    then compiled), and a request of an older text still running is cancelled before the next one
    goes out."""
    app = make_app()
    sent: list[tuple[str, str, tuple[str, ...]]] = []
    cancelled: list[str] = []
    overlapping: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        send, cancel = app.bridge.send, app.bridge.cancel

        def spy_send(request, reply_to=None):
            chain = getattr(request, "chain", "")
            sent.append((request.id, chain, tuple(getattr(request, "modes", ()))))
            if chain:  # whatever still runs for another text was cancelled before this one went out
                others = [
                    r for r in app.session.book.runs.values() if r.request.id != request.id and r.request.chain != chain
                ]
                overlapping.extend(r.request.id for r in others if not r.cancelled)
            return send(request, reply_to)

        def spy_cancel(request_id: str) -> None:
            cancelled.append(request_id)
            cancel(request_id)

        app.bridge.send, app.bridge.cancel = spy_send, spy_cancel
        await replace_text(pilot, app, "(a+b).relu()")  # the same chain spelled differently: cached
        await wait_for(pilot, lambda: app.session.text == "(a+b).relu()" and focus_done(app), what="same chain")
        assert not any(chain == "(a+b).relu()" for _, chain, _ in sent)
        final_text = "x: [N]\nx * 2"
        await replace_text(pilot, app, final_text)  # "x", "x:", ... are broken or other texts, key by key
        await wait_for(pilot, lambda: app.session.text == final_text and settled(app), what="the last text")
        final = [(rid, modes) for rid, chain, modes in sent if chain == final_text]
        assert [modes for _, modes in final] == [("eager", "compiled")]
        assert overlapping == []
        assert not any(rid in cancelled for rid, _ in final)


async def test_an_edits_request_reaches_the_worker_before_the_edit_is_drawn(make_app, monkeypatch) -> None:
    """The worker measures while the app draws: an edit's request is written to the worker's pipe
    before the panes are drawn for that edit (a draw is 10-40 ms of layout, which the new rows
    would otherwise wait behind)."""
    import dataclasses

    from probes.link.running_worker import RunningWorker
    from tui.screens.live_loop import LiveLoop

    final = SEED_CHAIN + " * 2"
    order: list[str] = []
    write, draw = RunningWorker.send, LiveLoop._draw

    async def spy_write(self, message):
        if getattr(message, "chain", "") == final:
            order.append("written")
        await write(self, message)

    def spy_draw(self):
        if self.session.text == final:
            order.append("drawn")
        draw(self)

    monkeypatch.setattr(RunningWorker, "send", spy_write)
    monkeypatch.setattr(LiveLoop, "_draw", spy_draw)
    app = make_app(timing=dataclasses.replace(TEST_TIMING, eager_delay_s=0.0))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        app.query_one(ChainEditor).focus()
        await pilot.press("end", "space", "asterisk", "space", "2")
        await wait_for(pilot, lambda: app.session.text == final and settled(app), what="the edit's run")
        assert order[:2] == ["written", "drawn"]


async def test_a_runs_steps_that_arrive_together_are_drawn_once(make_app, monkeypatch) -> None:
    """Events read in one go (a run's steps, then its rows) are all taken into the session and
    drawn in one frame: drawn one by one, the rows behind them waited for each step's draw."""
    from probes.link.protocol import Progress
    from tui.bridge import WorkerEvent
    from tui.screens.live_loop import LiveLoop

    draws: list[LiveLoop] = []
    draw = LiveLoop._draw

    def spy_draw(self):
        draws.append(self)
        draw(self)

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        monkeypatch.setattr(LiveLoop, "_draw", spy_draw)
        for step in ("peak", "measuring", "compiling"):
            app.main.post_message(WorkerEvent(Progress("a-run", step)))
        await wait_for(pilot, lambda: bool(draws), what="the draw")
        assert len(draws) == 1


async def test_a_cache_hit_repaints_what_changed_not_the_whole_panes(make_app) -> None:
    """Each key and each result assigns the panes' state; a pane that repainted itself then (or
    set an unchanged border title) re-rendered ~70% of the screen per frame. The rows change, the
    panes around them are not repainted."""
    from tui.widgets.op_chain_pane import OpChainPane
    from tui.widgets.sweep_pane import SweepPane

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        panes = [app.query_one(KernelPane), app.query_one(OpChainPane), app.query_one(SweepPane)]
        repainted: list[str] = []
        for pane in panes:
            refresh = pane.refresh

            def spy(*regions, _pane=pane, _refresh=refresh, **kwargs):
                if not regions and kwargs.get("repaint", True):
                    repainted.append(type(_pane).__name__)
                return _refresh(*regions, **kwargs)

            pane.refresh = spy
        app.query_one(ChainEditor).load_text("(a+b).relu()")  # the same chain spelled otherwise: a hit
        await wait_for(pilot, lambda: app.session.text == "(a+b).relu()" and focus_done(app), what="the hit")
        assert kernel_names(app, "eager") and repainted == []


async def test_a_key_that_changes_no_text_of_the_panes_lays_none_of_them_out(make_app) -> None:
    """The panes draw on every key. A text set again, or a width set again, laid the whole screen
    out again (~2 ms a text on the 2-core machine), and a text added to the chain list rebuilt the
    list. A space typed (the same chain) changes nothing in the panes: none of them asks for a layout."""
    from tui.widgets.chains_pane import ChainsPane
    from tui.widgets.op_chain_pane import OpChainPane
    from tui.widgets.sweep_pane import SweepPane

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        laid_out: list[str] = []
        for pane in (app.query_one(KernelPane), app.query_one(OpChainPane), app.query_one(SweepPane)):
            for widget in [pane, *pane.query("*")]:
                refresh = widget.refresh

                def spy(*regions, _widget=widget, _refresh=refresh, **kwargs):
                    if kwargs.get("layout"):
                        laid_out.append(f"{type(_widget).__name__}#{_widget.id}")
                    return _refresh(*regions, **kwargs)

                widget.refresh = spy
        chains = app.query_one(ChainsPane)
        rebuilt: list[int] = []
        clear = chains.clear_options
        chains.clear_options = lambda: (rebuilt.append(1), clear())[1]
        app.query_one(ChainEditor).focus()
        await pilot.press("end", "space")
        await wait_for(pilot, lambda: app.session.text == SEED_CHAIN + " " and focus_done(app), what="the edit")
        await pilot.pause()
        assert laid_out == []
        assert rebuilt == [] and (SEED_CHAIN + " ").strip() in str(chains.get_option_at_index(0).prompt)
        await pilot.press("x")  # an error now: the list's line of the chain follows the text
        await wait_for(pilot, lambda: app.session.text.endswith("x"), what="the edit")
        assert rebuilt == [] and str(chains.get_option_at_index(0).prompt).endswith(SEED_CHAIN + " x")


async def test_newer_run_cancels_the_running_one(make_app, tmp_path) -> None:
    """A run still streaming is cancelled (in the worker too) when a newer one starts."""
    from tui_helpers import replay_command

    go_ahead = tmp_path / "send-compiled"  # still streaming when the sweep starts
    app = make_app(worker_command=replay_command(hold_compiled=go_ahead))
    cancelled: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        original = app.bridge.workers.cancel

        async def spy(request_id: str) -> None:
            cancelled.append(request_id)
            await original(request_id)

        app.bridge.workers.cancel = spy
        await wait_for(pilot, lambda: app.session.running(), what="a running request")
        first = next(iter(app.session.book.runs.values()))
        await pilot.press("escape")
        await pilot.press("s")  # the sweep replaces the running focus run
        await wait_for(pilot, lambda: cancelled, what="a cancel")
        assert cancelled == [first.request.id]
        assert first.cancelled
        go_ahead.touch()
        await wait_for(
            pilot,
            lambda: app.session.sweep is not None and len(app.session.sweep.results) >= 2,
            timeout=30,
            what="sweep rows",
        )


async def test_worker_crash_is_a_message_and_the_worker_restarts(make_app, tmp_path) -> None:
    from tui_helpers import replay_command

    go_ahead = tmp_path / "send-compiled"  # the request is in flight until the test creates it
    app = make_app(worker_command=replay_command(hold_compiled=go_ahead))
    async with app.run_test(size=(120, 40)) as pilot:
        # Kill it while a request is in flight (the worker has sent its first progress event).
        await wait_for(pilot, lambda: any(r.progress for r in app.session.book.runs.values()), what="a running request")
        client = app.bridge.workers.primary
        pid = client.pid
        await client.kill_worker()
        await wait_for(pilot, lambda: settled(app), what="the failure")
        failures = [v.failure for v in focus_view(app).modes if v.failure]
        assert failures and all(f.error.kind == "worker" for f in failures), (failures, app.main.status.said)
        await wait_for(pilot, lambda: client.state == "ready" and client.pid not in (None, pid), what="restart")
        await wait_for(pilot, lambda: "restarted" in app.query_one(StatusBar).info.message, what="the restart said")
        assert app.is_running  # never an exit
        # And it works again.
        go_ahead.touch()
        await pilot.press("escape", "ctrl+r")
        await wait_for(
            pilot,
            lambda: focus_done(app) and "compiled 1 kernel" in headline(app),
            timeout=30,
            what="results after restart",
        )


async def test_an_idle_worker_that_dies_is_said_and_replaced_with_the_rows_kept(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), timeout=30, what="the first rows")
        rows = headline(app)
        client = app.bridge.workers.primary
        pid = client.pid
        await client.kill_worker()
        await wait_for(pilot, lambda: client.state == "ready" and client.pid not in (None, pid), what="a new worker")
        assert "killed by signal 9; replaced by a new worker" in app.query_one(StatusBar).info.message
        assert headline(app) == rows and not [v.failure for v in focus_view(app).modes if v.failure]


async def test_worker_that_cannot_start_is_reported(make_app) -> None:
    app = make_app(worker_command=[sys.executable, "-c", "import sys; sys.exit(3)"])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.query_one(StatusBar).info.worker_state == "failed", what="failure")
        assert "failed: the worker exited (code 3)" in app.query_one(StatusBar).info.worker_why
        assert app.is_running


async def test_quit_closes_the_worker(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        process = app.bridge.workers.primary._worker
        assert process is not None and process.returncode is None
        await pilot.press("escape", "q")
    assert process.returncode is not None  # quitting waited for the worker to go (briefly)


async def test_quitting_kills_the_worker_before_it_saves(make_app) -> None:
    """The worker dies (a CUDA context takes a while) while the app saves and takes itself down."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        process = app.bridge.workers.primary._worker
        seen_at_save: list[bool] = []
        save = app.save_workspace

        def spy_save() -> bool:
            seen_at_save.append(app.bridge.workers.primary._closing)
            return save()

        app.save_workspace = spy_save
        await pilot.press("escape", "q")
    assert seen_at_save and seen_at_save[0], "the worker was told to die before the save"
    assert process.returncode is not None


async def test_quitting_mid_request_does_not_wait_for_the_worker(make_app) -> None:
    """A worker busy with a request (a compile, a sweep) is killed at once: no grace to wait out,
    and the request is not waited for (its replayed result takes a minute)."""
    import time

    from tui_helpers import replay_command

    app = make_app(worker_command=replay_command(delay=60.0))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session.running() and app.bridge.workers.primary.state == "busy", what="busy")
        process = app.bridge.workers.primary._worker
        started = time.monotonic()
        await pilot.press("ctrl+q")
    assert process.returncode is not None
    assert time.monotonic() - started < 30


async def test_ctrl_q_quits_from_the_editor(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        process = app.bridge.workers.primary._worker
        assert isinstance(app.focused, ChainEditor)
        await pilot.press("ctrl+q")
    assert process.returncode is not None


async def test_kernel_pane_is_a_kernel_pane(make_app) -> None:
    """Transfers (memcpy/memset) are apart from kernels; the compiled block shows compile facts."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        title = str(app.query_one("#mode-title-compiled").render())
        assert "1 kernel" in title and "3N" in title and "compile" in title
        pane = app.query_one(KernelPane)
        assert pane.border_title.startswith("kernels · N=1e6 · fp32 · cuda:0")


@pytest.mark.parametrize("width", [160, 200, 240])
async def test_side_by_side_kernel_tables_share_one_set_of_columns(make_app, width: int) -> None:
    """Eager and compiled tables next to each other are read across: the same headers in both,
    whatever chain's rows they show (at 200 columns the eager table had ``launch µs/launch …
    %peak ops`` beside the compiled table's ``n µs … %pk``), every kernel name whole."""
    app = make_app()
    seen = []
    async with app.run_test(size=(width, 50)) as pilot:
        for chain in (SEED_CHAIN, "(a * b).sum()"):
            app.query_one(ChainEditor).text = chain
            await wait_for(
                pilot, lambda chain=chain: focus_done(app) and shown(app, "compiled").chain == chain, what=chain
            )
            await pilot.pause()
            assert not app.query_one(KernelPane).stacked
            tables = [app.query_one(f"#table-{mode}", KernelTable) for mode in ("eager", "compiled")]
            seen += [[label.plain for label in table.labels][1:] for table in tables]
            names = [table.row_cells(i)[0].plain for table in tables for i in range(table.row_count)]
            assert names and not any("…" in name for name in names)
    assert all(headers == seen[0] for headers in seen)


async def test_a_kernel_table_that_scrolls_cuts_none_of_its_columns(make_app) -> None:
    """A table of more rows than it shows gets a scrollbar beside its columns, not over its last
    one (the ops column read ``sigmoi`` beside a 2-cell scrollbar)."""
    app = make_app(chain=LONG_CHAIN, worker_command=replay_command("cpu_long"), device="cpu", focus_size=10_000)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.pause()
        table = app.query_one("#table-eager", KernelTable)
        assert table.row_count == 12 and table.max_scroll_y > 0
        columns = sum(column.get_render_width(table) for column in table.columns.values())
        assert table.scrollable_content_region.width >= columns


async def test_progress_and_elapsed_time_show_while_running(make_app, tmp_path) -> None:
    """A slow run (a compile) shows what runs, steps done of all and a ticking clock, not a frozen screen."""
    from tui_helpers import replay_command

    go_ahead = tmp_path / "send-compiled"  # a "compile" that lasts until the test has seen it run
    app = make_app(worker_command=replay_command(hold_compiled=go_ahead), frozen=False)
    async with app.run_test(size=(120, 40)) as pilot:

        def compiled_step() -> bool:
            activity = app.session.activity()
            return activity is not None and "compiled at N=1,000,000 · " in activity.text

        await wait_for(pilot, compiled_step, timeout=20, what="the compiled step")

        def on_the_bar() -> bool:
            info = app.query_one(StatusBar).info
            return "compiled at N=1,000,000 · " in info.activity and info.elapsed.endswith("s")

        await wait_for(pilot, on_the_bar, what="the compiled step and its clock on the bar")
        first = app.query_one(StatusBar).info.elapsed
        await wait_for(pilot, lambda: app.query_one(StatusBar).info.elapsed != first, what="the clock ticking")
        await wait_for(
            pilot,
            lambda: "measuring" in str(app.query_one("#mode-note-compiled").render()),
            what="the compiled block saying what runs",
        )  # drawn with the step
        assert "profiling" in app.query_one(ChainEditor).border_subtitle
        go_ahead.touch()
        await wait_for(pilot, lambda: focus_done(app), what="done")
        assert app.query_one(StatusBar).info.activity == ""
        assert "profile done in" in app.query_one(StatusBar).info.message


@pytest.mark.slow  # the whole corpus through the app: a layout per text
async def test_escape_attempts_and_garbage_are_inline_messages(make_app) -> None:
    """Every refused construct (the escape corpus) and odd input: a plain message, never a crash."""
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[1] / "data" / "escape_corpus.txt"
    lines = [
        line.replace("\\n", "\n")
        for line in corpus.read_text().splitlines()
        if line.strip() and not line.startswith("# ")
    ]
    lines += ["\t(a +", "ａ + b", "a" * 5000, "(" * 500, "a +\n\n\n", "😀", "\x00"]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        error = app.query_one(ChainErrorLine)
        for text in lines:
            editor.load_text(text)
            await pilot.pause()
            assert app.session.parse_error is not None, text
            assert error.has_class("-shown"), text
            rendered = str(error.render())
            assert "Traceback" not in rendered
            assert "STALE" in headline(app)
        assert app.is_running
