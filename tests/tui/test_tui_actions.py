"""Pilot tests of every action: toggles, dialogs, chains, sweep, views, exports, help, palette."""

from __future__ import annotations

import csv
import json

import pytest
from textual.widgets import Input
from tui_helpers import SEED_CHAIN, focus_done, recorded, sweep_done, wait_for

from probes.protocol import ProfileReport
from probes.summary import comparisons, crossover, format_gbps, format_size
from tui.app import KernelTuiApp
from tui.screens.dialogs import ConfirmDialog, InputDialog
from tui.screens.help import HelpScreen
from tui.screens.kernel_detail import KernelDetail
from tui.widgets.chains_pane import ChainsPane
from tui.widgets.editor import ChainEditor
from tui.widgets.status_bar import StatusBar


async def started(pilot, app) -> None:  # noqa: ANN001
    await wait_for(pilot, lambda: focus_done(app), what="first results")
    await pilot.press("escape")
    await pilot.pause()


def requested_modes(app) -> list[str]:  # noqa: ANN001
    return app.workspace.settings.request_modes()


async def test_mode_toggle_cycles_both_eager_compiled(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert requested_modes(app) == ["eager", "compiled"]
        await pilot.press("m")
        await wait_for(pilot, lambda: focus_done(app) and app.pending_focus.key.modes == ("eager",), what="eager run")
        assert app.query_one("#mode-eager").display and not app.query_one("#mode-compiled").display
        assert "eager 2 kernels / 5N" in str(app.query_one("#headline").render())
        await pilot.press("m")
        await wait_for(pilot, lambda: focus_done(app) and app.pending_focus.key.modes == ("compiled",), what="compiled")
        assert app.query_one("#mode-compiled").display and not app.query_one("#mode-eager").display
        assert "compiled 1 kernel / 3N" in str(app.query_one("#headline").render())
        await pilot.press("m")
        assert requested_modes(app) == ["eager", "compiled"]
        assert "eager+compiled" in app.query_one(StatusBar).info.settings


async def test_compile_mode_cycles_and_reports_missing_recordings(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "max-autotune"]
        await wait_for(pilot, lambda: app.pending_focus.key.modes == ("eager", "max-autotune") and app.pending_focus.done,
                       what="max-autotune run")  # fmt: skip
        assert app.query_one("#mode-max-autotune").display
        assert app.query_one("#table-max-autotune").row_count >= 1
        assert "max-autotune" in str(app.query_one("#headline").render())
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "reduce-overhead"]
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "compiled"]


async def test_dtype_cycles(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("t")
        assert app.workspace.settings.dtype == "bf16"
        await wait_for(pilot, lambda: app.pending_focus.key.dtype == "bf16" and app.pending_focus.done, what="bf16 run")
        assert "STALE" in str(app.query_one("#headline").render())  # fp32 results, marked stale
        await pilot.press("t", "t")
        assert app.workspace.settings.dtype == "fp32"
        await pilot.pause(0.3)
        assert "STALE" not in str(app.query_one("#headline").render())  # the cached fp32 results are current again


async def test_device_cycles_through_the_workers_devices(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        assert app.devices() == ["cuda:0"]
        await pilot.press("d")
        assert app.workspace.settings.device == "cuda:0"
        assert "device: cuda:0" in app.query_one(StatusBar).info.message


async def test_unknown_device_from_the_command_line_falls_back(make_app) -> None:
    app = make_app(device="cuda:7")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        assert app.workspace.settings.device is None
        assert any("cuda:7 is not available" in text for text, _ in app.messages)


async def test_sizes_dialog_validates_and_applies(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, InputDialog)
        field = app.screen.query_one(Input)
        field.value = "1e2, lots"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, InputDialog)  # kept open with the reason
        assert "not a size" in str(app.screen.query_one("#dialog-error").render())
        field.value = "1e2,1e4,1e6"
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, InputDialog)
        assert app.workspace.settings.sizes == [100, 10_000, 1_000_000]
        await pilot.press("z", "escape")
        assert app.workspace.settings.sizes == [100, 10_000, 1_000_000]


async def test_focus_size_and_reps_dialogs(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("n")
        await pilot.pause()
        app.screen.query_one(Input).value = "1e7"
        await pilot.press("enter")
        await wait_for(pilot, lambda: focus_done(app) and app.shown_focus.key.sizes == (10_000_000,), what="1e7 run")
        assert "N=1e7" in app.query_one("#kernels").border_title
        await pilot.press("r")
        await pilot.pause()
        app.screen.query_one(Input).value = "0"
        await pilot.press("enter")
        await pilot.pause()
        assert "between 1 and 10000" in str(app.screen.query_one("#dialog-error").render())
        app.screen.query_one(Input).value = "50"
        await pilot.press("enter")
        await pilot.pause()
        assert app.workspace.settings.reps == 50
        assert "reps 50" in app.query_one(StatusBar).info.settings


async def test_sweep_streams_rows_and_calls_out_the_crossover(make_app) -> None:
    from tui_helpers import replay_command

    app = make_app(worker_command=replay_command(delay=0.15))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        seen_partial = []
        await pilot.press("s")
        table = app.query_one("#sweep-table")

        def progressed() -> bool:
            if 0 < table.row_count < 10:
                seen_partial.append(table.row_count)
            return sweep_done(app)

        await wait_for(pilot, progressed, timeout=30, what="sweep")
        assert seen_partial, "rows should stream in before the sweep ends"
        assert table.row_count == 10
        expected = crossover(comparisons(recorded("sweep").results))
        assert expected is not None
        assert f"faster per call from N = {format_size(expected)} up" in str(app.query_one("#crossover").render())
        chart = app.query_one("#sweep-chart")
        assert [s.label for s in chart.series] == ["eager", "compiled"]
        assert f"crossover {format_size(expected)}" in str(chart.render())
        await pilot.press("g")  # device time
        assert app.workspace.settings.chart == "device"
        await pilot.press("g")  # GB/s with the peak line
        assert app.workspace.settings.chart == "gbps"
        assert chart.hlines and f"peak {format_gbps(recorded().peak_gbps)}" in str(chart.render())
        await pilot.press("g")
        assert app.workspace.settings.chart == "time"


async def test_sweep_refuses_a_broken_chain(make_app) -> None:
    app = make_app(chain="(a + ")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready is not None, what="ready")
        await pilot.press("escape", "s")
        await pilot.pause()
        assert app.pending_sweep is None
        assert "fix the chain first" in app.query_one(StatusBar).info.message


async def test_stop_cancels_the_running_request(make_app) -> None:
    from tui_helpers import replay_command

    app = make_app(worker_command=replay_command(delay=0.5))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready is not None and app.active is not None, what="running")
        rs = app.active
        await pilot.press("escape", "x")
        await pilot.pause()
        assert rs.cancelled and app.active is None
        assert "cancelled" in app.query_one(StatusBar).info.message


async def test_compact_views_cycle(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        main = app.query_one("#main")
        assert main.has_class("-compact")
        assert app.query_one("#kernels").display and not app.query_one("#ops").styles.display == "block"
        assert not app.query_one(ChainsPane).styles.display == "block"
        await pilot.press("v")
        assert main.has_class("-view-ops") and app.query_one("#ops").styles.display == "block"
        await pilot.press("v")
        assert main.has_class("-view-sweep")
        await pilot.press("v")
        assert main.has_class("-view-kernels")
        await pilot.press("l")
        assert app.query_one(ChainsPane).styles.display == "block"
        await pilot.press("escape", "l")


async def test_wide_layout_shows_everything(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert not app.query_one("#main").has_class("-compact")
        for pane in ("#chains", "#editor", "#ops", "#kernels", "#sweep"):
            assert app.query_one(pane).region.area > 0, pane


async def test_chains_add_rename_duplicate_delete_and_select(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        pane = app.query_one(ChainsPane)
        pane.focus()
        count = len(app.workspace.chains)
        await pilot.press("y")  # duplicate
        assert len(app.workspace.chains) == count + 1
        assert app.workspace.chain.name == "add_relu_copy"
        assert app.workspace.chain.text == SEED_CHAIN
        pane.focus()
        await pilot.press("r")  # rename
        await pilot.pause()
        assert isinstance(app.screen, InputDialog)
        app.screen.query_one(Input).value = "fused"
        await pilot.press("enter")
        await pilot.pause()
        assert app.workspace.chain.name == "fused"
        assert "fused" in app.query_one(ChainEditor).border_title
        pane.focus()
        await pilot.press("n")  # new, empty, editor focused
        await pilot.pause()
        assert app.workspace.chain.text == "" and isinstance(app.focused, ChainEditor)
        await pilot.press("a", "space", "+", "space", "b")
        assert app.workspace.chain.text == "a + b"
        pane.focus()
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await pilot.pause()
        assert len(app.workspace.chains) == count + 1
        assert all(c.text != "a + b" or c.name == "add" for c in app.workspace.chains)
        # Select the first chain with the keyboard: it opens in the editor.
        pane.focus()
        pane.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(ChainEditor).text == app.workspace.chains[0].text


async def test_workspace_autosaves_and_restores(tmp_path, make_app) -> None:
    path = tmp_path / "ws.json"
    app = make_app(workspace_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("t")  # bf16
        app.query_one(ChainEditor).focus()
        await pilot.press("end", "space", "*", "space", "c")
        await pilot.pause(1.3)  # the autosave delay
        assert path.exists()
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        await pilot.press("ctrl+q")
    data = json.loads(path.read_text())
    assert data["settings"]["dtype"] == "bf16"
    again = make_app(workspace_path=path, chain=None)
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert again.query_one(ChainEditor).text == SEED_CHAIN + " * c"
        assert again.workspace.settings.dtype == "bf16"
        await pilot.press("ctrl+q")


async def test_default_workspace_lives_in_the_state_dir(_isolated_state, make_app) -> None:
    app = make_app(workspace_path=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("q")
    assert (_isolated_state / "workspace.json").exists()


async def test_unreadable_workspace_is_set_aside_with_a_warning(tmp_path, make_app) -> None:
    path = tmp_path / "ws.json"
    path.write_text("{not json")
    app = make_app(workspace_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert any("unreadable" in text for text, _ in app.messages)
        assert (tmp_path / "ws.json.bad").read_text() == "{not json"
        await pilot.press("ctrl+q")


@pytest.mark.parametrize(("key", "suffix"), [("J", ".json"), ("C", ".csv"), ("T", ".trace.json"), ("S", ".svg")])
async def test_exports(make_app, tmp_path, key: str, suffix: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press(key)
        await pilot.pause(0.3)
        path = app.last_export
        assert path is not None and path.name.endswith(suffix) and path.parent == tmp_path / "exports"
        assert str(path) in app.query_one(StatusBar).info.message
        text = path.read_text()
    if suffix == ".json":
        report = ProfileReport.from_json(text)
        assert {m.mode for m in report.results} == {"eager", "compiled"}
        assert report.device == "cuda:0"
    elif suffix == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        assert {r["mode"] for r in rows} == {"eager", "compiled"}
        assert any(r["short_name"] == "triton_poi_fused_add_relu_0" for r in rows)
    elif suffix == ".trace.json":
        trace = json.loads(text)
        kernels = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        assert len(kernels) == 3  # 2 eager launches + 1 compiled
    else:
        assert text.startswith("<svg")


async def test_export_with_no_results_says_so(make_app) -> None:
    app = make_app(chain="(a +")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready is not None, what="ready")
        await pilot.press("escape", "J")
        await pilot.pause()
        assert app.last_export is None
        assert "nothing to export" in app.query_one(StatusBar).info.message


async def test_kernel_detail_shows_full_name_and_generated_source(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        app.query_one("#table-compiled").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, KernelDetail)
        assert app.screen.row.name == "triton_poi_fused_add_relu_0"
        source, lexer = app.screen.source
        assert "def triton_poi_fused_add_relu_0" in source and lexer == "python"
        await pilot.press("escape")
        app.query_one("#table-eager").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.row.name.startswith("void at::native::vectorized_elementwise_kernel")
        assert app.screen.source is None
        assert "void at::native::vectorized_elementwise_kernel" in app.screen.full_name_text()
        await pilot.press("escape")
        assert not isinstance(app.screen, KernelDetail)


async def test_help_lists_every_binding(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = {b.action for _, group in app.screen.groups for b in group}
        for binding in KernelTuiApp.BINDINGS:
            assert binding.action in listed or binding.action in ("help_key", "quit_key"), binding.action
        for binding in ChainsPane.BINDINGS:
            assert binding.action in listed
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        app.query_one(ChainEditor).focus()
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_command_palette_has_every_action(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        commands = list(app.get_system_commands(app.screen))
        titles = [c.title for c in commands]
        callbacks = {getattr(c.callback, "__name__", "") for c in commands}
        for binding in KernelTuiApp.BINDINGS + ChainsPane.BINDINGS:
            action = binding.action.removeprefix("app.")
            if action in ("help_key", "quit_key", "quit"):
                continue
            assert f"action_{action}" in callbacks, action
        assert "Quit" in titles
        # And the palette itself runs them: open it, search, pick.
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Dtype: bf16":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert app.workspace.settings.dtype == "bf16"


async def test_letter_keys_type_in_the_editor_and_hide_from_the_footer(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        assert app.focused is editor
        assert app.check_action("sweep", ()) is False
        await pilot.press("end", "s")
        assert editor.text.endswith("s") and app.pending_sweep is None
        await pilot.press("escape")
        assert app.check_action("sweep", ()) is True


async def test_ctrl_r_retries_a_worker_that_did_not_start(make_app, tmp_path) -> None:
    flag = tmp_path / "second-try"
    from tui_helpers import recording

    # Fails the first time, starts the replay worker the second time.
    script = (
        "import pathlib, runpy, sys\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if not flag.exists():\n    flag.write_text('x'); sys.exit(3)\n"
        f"sys.argv = ['replay', {str(recording())!r}]\n"
        "runpy.run_module('probes.replay', run_name='__main__')\n"
    )
    import sys

    app = make_app(worker_command=[sys.executable, "-c", script])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.query_one(StatusBar).info.worker_state == "failed", what="failure")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: focus_done(app), what="results after the retry")
        assert "compiled 1 kernel" in str(app.query_one("#headline").render())


async def test_graph_breaks_and_declared_inputs_and_transfers(make_app) -> None:
    """Recorded chains beyond the seed: break reasons, bf16 declared inputs, memcpy rows apart."""
    app = make_app(chain="torch.nonzero(a > 0)")
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app) and len(app.shown_focus.results) == 2, what="nonzero")
        assert "graph breaks" in str(app.query_one("#mode-note-compiled").render())
        assert "2 graph breaks" in str(app.query_one("#compile-info").render())
    chain = "x: [N, 1024] bf16\nw: [1024, 1024] bf16\nF.gelu(x @ w)"
    app = make_app(chain=chain, focus_size=100_000)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app) and len(app.shown_focus.results) == 2, what="matmul")
        block = app.query_one("#mode-eager")
        kinds = [row.kind for row in block.rows]
        assert kinds[-1] in ("memcpy", "memset") and kinds.count("kernel") == 2  # transfers last, apart
        table = app.query_one("#table-eager")
        assert f"({kinds[-1]})" in str(table.get_row_at(table.row_count - 1)[0])
        ops = app.query_one("#ops-table")
        assert any("bf16" in str(ops.get_row_at(i)[1]) for i in range(ops.row_count))


async def test_a_compiled_run_that_ran_eager_says_so(make_app) -> None:
    """fallback_reason is shown prominently, never as a compiled result."""
    import dataclasses

    from tui.results import ResultSet, RunKey

    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        rs = app.shown_focus
        compiled = rs.at(1_000_000, "compiled")
        fell_back = dataclasses.replace(compiled, ran_compiled=False, fallback_reason="recompile limit reached")
        fake = ResultSet(rs.key, rs.text, "focus", "x", dict(rs.results), done=True)
        fake.results[(1_000_000, "compiled")] = fell_back
        app.shown_focus = fake
        app.refresh_panes()
        await pilot.pause()
        assert "ran eager, not compiled: recompile limit reached" in str(app.query_one("#mode-note-compiled").render())
        assert "compiled (ran eager!)" in str(app.query_one("#headline").render())
        assert "the compiled run ran eager" in str(app.query_one("#compile-info").render())
        assert RunKey  # (imported for the record)


def test_editor_highlighting_falls_back_without_tree_sitter(monkeypatch) -> None:
    from tui.widgets import editor

    monkeypatch.setattr(editor, "python_highlighting_available", lambda: False)
    assert editor.ChainEditor("a + b").language is None
    monkeypatch.setattr(editor, "python_highlighting_available", lambda: True)
    assert editor.ChainEditor("a + b", highlight=False).language is None
