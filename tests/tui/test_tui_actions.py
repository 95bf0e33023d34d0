"""Pilot tests of every action: toggles, dialogs, chains, sweep, views, exports, help, palette."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import stat
import sys
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Footer, Input
from tui_helpers import SEED_CHAIN, focus_done, focus_view, recorded, recording, settled, shown, sweep_done, wait_for

from probes.link.protocol import ProfileReport
from probes.link.summary import comparisons, crossover, format_gbps, format_size
from tui import commands, presenter
from tui.screens.dialogs import ConfirmDialog, InputDialog
from tui.screens.help import HelpScreen
from tui.screens.kernel_detail import KernelDetail
from tui.widgets.chains_pane import ChainsPane
from tui.widgets.editor import ChainEditor
from tui.widgets.status_bar import StatusBar


async def started(pilot, app) -> None:
    await wait_for(pilot, lambda: focus_done(app), what="first results")
    await pilot.press("escape")
    await pilot.pause()


def requested_modes(app) -> list[str]:
    return list(app.workspace.settings.modes)


def headline(app) -> str:
    return str(app.query_one("#headline").render())


async def test_mode_toggle_cycles_both_eager_compiled_static_dynamic(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert requested_modes(app) == ["eager", "compiled"]
        await pilot.press("m")
        await wait_for(pilot, lambda: requested_modes(app) == ["eager"] and focus_done(app), what="eager")
        assert app.query_one("#mode-eager").display and not app.query_one("#mode-compiled").display
        assert "eager 2 kernels / 5N" in headline(app)
        await pilot.press("m")
        await wait_for(pilot, lambda: requested_modes(app) == ["compiled"] and focus_done(app), what="compiled")
        assert app.query_one("#mode-compiled").display and not app.query_one("#mode-eager").display
        assert "compiled 1 kernel / 3N" in headline(app)
        await pilot.press("m")
        assert requested_modes(app) == ["compiled", "dynamic"]
        assert "compiled vs dynamic" in app.query_one(StatusBar).info.settings
        await pilot.press("m")
        assert requested_modes(app) == ["eager", "compiled"]
        assert "eager+compiled" in app.query_one(StatusBar).info.settings


async def test_compile_mode_cycles_and_reports_missing_recordings(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "max-autotune"]
        await wait_for(pilot, lambda: focus_done(app), what="max-autotune run")
        assert app.query_one("#mode-max-autotune").display
        assert app.query_one("#table-max-autotune").row_count >= 1
        assert "max-autotune" in headline(app)
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "reduce-overhead"]
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "dynamic"]
        await wait_for(pilot, lambda: settled(app), what="dynamic: not recorded")
        assert "no recording of this chain in dynamic" in str(app.query_one("#mode-note-dynamic").render())
        await pilot.press("c")
        assert requested_modes(app) == ["eager", "compiled"]


async def test_dtype_change_re_measures_and_marks_the_old_rows_stale(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        fp32 = shown(app, "eager")
        await pilot.press("t")
        assert app.workspace.settings.dtype == "bf16"
        await wait_for(pilot, lambda: settled(app), what="bf16 run")  # not recorded in bf16
        assert shown(app, "eager") is fp32
        assert "STALE" in headline(app) and "dtype changed" in headline(app)
        await pilot.press("t", "t")
        assert app.workspace.settings.dtype == "fp32"
        await wait_for(pilot, lambda: "STALE" not in headline(app), what="cached fp32 rows")  # current again


async def test_every_setting_change_re_measures_or_marks_stale(make_app) -> None:
    """reps, N, dtype, modes and compile mode each change what a measurement means."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        sent: list = []
        send = app.bridge.send
        app.bridge.send = lambda request, reply_to=None: (sent.append(request), send(request, reply_to))
        for key, value in (("r", "50"), ("n", "1e4")):
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the dialog")
            app.screen.query_one(Input).value = value
            await pilot.press("enter")
            await wait_for(pilot, lambda: settled(app), what=f"{key} re-measured")
            assert sent and sent[-1].chain == SEED_CHAIN
            view = focus_view(app)
            assert all(v.fresh for v in view.modes) or view.stale is not None
        assert sent[0].reps == 50 and sent[-1].sizes == [10_000]


async def test_device_cycles_through_the_workers_devices(make_app) -> None:
    worker = [sys.executable, str(Path(__file__).with_name("two_devices.py")), str(recording())]
    app = make_app(worker_command=worker)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        assert presenter.device_names(app.session) == ["cuda:0", "cpu"]
        assert shown(app, "eager").device == "cuda:0"
        await pilot.press("d")
        assert app.workspace.settings.device == "cpu"
        await wait_for(pilot, lambda: focus_done(app), what="the cpu rows")
        assert shown(app, "eager").device == "cpu" and "· cpu" in app.query_one("#kernels").border_title
        assert any(text == "device: cpu" for text, _ in app.main.status.said)
        await pilot.press("d")
        assert app.workspace.settings.device == "cuda:0"
        await wait_for(pilot, lambda: focus_done(app) and shown(app, "eager").device == "cuda:0", what="back")


async def test_one_device_says_so(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("d")
        assert "only device" in app.query_one(StatusBar).info.message


async def test_unknown_device_from_the_command_line_falls_back(make_app) -> None:
    app = make_app(device="cuda:7")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        assert app.workspace.settings.device is None
        assert any("cuda:7 is not available" in text for text, _ in app.main.status.said)


async def test_sizes_dialog_validates_and_applies(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("z")
        await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the dialog")
        field = app.screen.query_one(Input)
        field.value = "1e2, lots"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "not a size" in str(app.screen.query_one("#dialog-error").render()), what="why")
        assert isinstance(app.screen, InputDialog)  # kept open with the reason
        field.value = "1e2,1e4,1e6"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, InputDialog), what="applied")
        assert app.workspace.settings.sizes == (100, 10_000, 1_000_000)
        await pilot.press("z", "escape")
        assert app.workspace.settings.sizes == (100, 10_000, 1_000_000)


async def test_focus_size_and_reps_dialogs(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the dialog")
        app.screen.query_one(Input).value = "1e7"
        await pilot.press("enter")
        await wait_for(pilot, lambda: focus_done(app) and shown(app, "eager").size == 10_000_000, what="1e7 run")
        assert "N=1e7" in app.query_one("#kernels").border_title
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the dialog")
        app.screen.query_one(Input).value = "0"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: "between 1 and 10000" in str(app.screen.query_one("#dialog-error").render()), what="why"
        )
        app.screen.query_one(Input).value = "50"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.workspace.settings.reps == 50, what="applied")
        assert "reps 50" in app.query_one(StatusBar).info.settings


async def test_sweep_streams_rows_and_calls_out_the_crossover(make_app) -> None:
    from tui_helpers import replay_command

    app = make_app(worker_command=replay_command(delay=0.15))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        seen_partial = []
        await pilot.press("s")
        table = app.query_one("#sweep-table")

        partial_verdicts = []
        counts = []  # (the sweep pane's steps done, the status bar's), read together as a frame shows them

        def progressed() -> bool:
            pane = re.search(r"(\d+/\d+) done", str(app.query_one("#crossover").render()))
            bar = re.search(r"(\d+/\d+) done", app.query_one(StatusBar).info.activity)
            if pane and bar:
                counts.append((pane.group(1), bar.group(1)))
            if 0 < table.row_count < 10:
                seen_partial.append(table.row_count)
                line = str(app.query_one("#crossover").render())
                if "faster per call" in line or "crossover" in str(app.query_one("#sweep-chart").render()):
                    partial_verdicts.append(line)
            return sweep_done(app)

        await wait_for(pilot, progressed, timeout=30, what="sweep")
        await wait_for(pilot, lambda: table.row_count == 10, what="every row")
        assert seen_partial, "rows should stream in before the sweep ends"
        assert counts and all(pane == bar for pane, bar in counts), counts  # one count of the steps
        assert not partial_verdicts, f"a verdict on part of the sizes: {partial_verdicts[0]}"
        expected = crossover(comparisons(recorded("sweep").results))
        assert expected is not None
        assert f"faster per call from N = {format_size(expected)} up" in str(app.query_one("#crossover").render())
        chart = app.query_one("#sweep-chart")
        assert [s.label for s in chart.series] == ["eager", "compiled"]
        assert f"crossover {format_size(expected)}" in str(chart.render())
        time_points = chart.series[0].points
        await pilot.press("g")  # device time: other points
        assert app.workspace.chart == "device"
        assert chart.series[0].points != time_points
        assert chart.series[0].points == [(m.size, m.device_time_us) for m in recorded().results if m.mode == "eager"]
        await pilot.press("g")  # GB/s with the peak line
        assert app.workspace.chart == "gbps"
        assert chart.hlines and f"peak {format_gbps(recorded().peak_gbps)}" in str(chart.render())
        await pilot.press("g")
        assert app.workspace.chart == "time"


async def test_sweep_refuses_a_broken_chain(make_app) -> None:
    app = make_app(chain="(a + ")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session.ready is not None, what="ready")
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: "fix the chain first" in app.query_one(StatusBar).info.message, what="why")
        assert app.session.sweep is None


async def test_stop_cancels_the_running_request_and_holds(make_app, tmp_path) -> None:
    from tui_helpers import replay_command

    # The compiled results wait for a file never made: the request runs until it is stopped.
    app = make_app(worker_command=replay_command(hold_compiled=tmp_path / "never"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session.running(), what="running")
        run = next(iter(app.session.book.runs.values()))
        await pilot.press("escape", "x")
        await wait_for(pilot, lambda: run.cancelled and not app.session.running(), what="cancelled")
        assert "cancelled" in app.query_one(StatusBar).info.message
        assert "ctrl+r measures" in str(app.query_one("#mode-note-compiled").render())
        await pilot.press("x")
        assert "nothing is running" in app.query_one(StatusBar).info.message


async def test_compact_views_cycle_and_v_is_only_a_key_where_panes_are_hidden(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        main = app.query_one("#main")
        assert main.has_class("-compact")
        assert app.query_one("#kernels").display and app.query_one("#ops").styles.display != "block"
        assert app.query_one(ChainsPane).styles.display != "block"
        await pilot.press("v")
        assert main.has_class("-view-ops") and app.query_one("#ops").styles.display == "block"
        await pilot.press("v")
        assert main.has_class("-view-sweep")
        await pilot.press("v")
        assert main.has_class("-view-kernels")
        await pilot.press("l")
        assert app.query_one(ChainsPane).styles.display == "block"
        await pilot.press("escape", "l")
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        await pilot.press("v")  # every pane is on screen: the key does nothing here
        assert app.query_one("#main").has_class("-view-kernels")
        assert "every pane is on screen" not in app.query_one(StatusBar).info.message
        app.main.action_cycle_view()  # as the palette runs it
        assert "every pane is on screen" in app.query_one(StatusBar).info.message


PANE_IDS = ("chains", "editor", "ops", "kernels", "sweep")


def footer_words(app) -> list[str]:
    from textual.widgets._footer import FooterKey

    return [key.description for key in app.screen.query(FooterKey) if key.display]


async def test_each_screen_over_the_main_one_shows_only_its_own_keys(make_app) -> None:
    """Help, a dialog, the kernel detail and the palette each have a footer of their own: none
    offers the main screen's keys (which do nothing there), and the palette's says esc closes it."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert "Sweep" in footer_words(app)
        for key, screen, words in (
            ("f1", HelpScreen, ["Close"]),
            ("z", InputDialog, ["Cancel"]),
            ("enter", KernelDetail, ["Close"]),
            ("ctrl+p", CommandPalette, ["Exit the command palette"]),
        ):
            await pilot.press(key)
            await wait_for(pilot, lambda screen=screen: isinstance(app.screen, screen), what=f"{key}'s screen")
            await wait_for(pilot, lambda words=words: footer_words(app) == words, what=f"{words} alone in the footer")
            await pilot.press("s")  # the main screen's sweep: not run from over it
            assert app.session.sweep is None
            await pilot.press("escape")
            await wait_for(pilot, lambda screen=screen: not isinstance(app.screen, screen), what=f"{key}'s closed")
            await wait_for(pilot, lambda: "Sweep" in footer_words(app), what="the main footer back")


async def test_layout_follows_the_terminal_size_both_ways(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        main = app.query_one("#main")
        assert main.has_class("-compact")
        await wait_for(pilot, lambda: "View" in footer_words(app), what="v View in the footer of a compact screen")
        await pilot.resize_terminal(220, 60)
        await wait_for(pilot, lambda: not main.has_class("-compact"), what="the wide layout")
        for pane in ("#chains", "#editor", "#ops", "#kernels", "#sweep"):
            assert app.query_one(pane).region.area > 0, pane
        await wait_for(
            pilot,
            lambda: "View" not in footer_words(app) and "Sweep" in footer_words(app),
            what="no View in the footer where every pane is on screen",
        )
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: main.has_class("-compact"), what="the compact layout")
        await wait_for(pilot, lambda: "View" in footer_words(app), what="v View back in the footer")


async def test_wide_layout_shows_everything_and_names_whole(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        assert not app.query_one("#main").has_class("-compact")
        for pane in ("#chains", "#editor", "#ops", "#kernels", "#sweep"):
            assert app.query_one(pane).region.area > 0, pane
        names = [row.short_name for mode in ("eager", "compiled") for row in shown(app, mode).kernels]
        cells = [
            app.query_one(f"#table-{mode}").row_cells(i)[0].plain
            for mode in ("eager", "compiled")
            for i in range(app.query_one(f"#table-{mode}").row_count)
        ]
        assert cells == names  # room enough at 160 columns: no name is elided
        assert app.query_one("#sweep").region.height <= 4  # no sweep yet: it takes little room


async def test_a_long_chain_is_listed_on_its_two_lines_cut_with_an_ellipsis(make_app) -> None:
    """The chains pane lists each chain as its name and its first line: a first line wider than
    the pane is cut with an ellipsis, not wrapped onto a third line that pushes the others out."""
    long = "(a + b).sigmoid() * 3 + (a * b).tanh()"
    app = make_app(chain=long)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(ChainsPane)
        await wait_for(pilot, lambda: pane.virtual_size.height > 0, what="the chains listed")
        count = len(app.workspace.chains)
        assert pane.content_size.width < len(long)
        assert pane.virtual_size.height == 2 * count
        lines = [pane.render_line(y).text.rstrip() for y in range(2 * count)]
        cut = [line for line in lines if line.endswith("…") and long.startswith(line[:-1].strip())]
        assert len(cut) == 1 and len(cut[0].strip()) > 10


async def test_the_palette_names_each_chain_by_the_line_the_chains_pane_lists(make_app) -> None:
    """A chain whose text opens with a blank line is described by its first line with text, in the
    chains pane and in the palette alike."""
    app = make_app(chain="(a + b).relu()")
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        editor = app.query_one(ChainEditor)
        app.screen.set_focus(editor)
        editor.move_cursor((0, 0))
        await pilot.press("enter")  # a blank line above the chain
        await wait_for(pilot, lambda: app.workspace.chain.text.startswith("\n"), what="the edit kept")
        described = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert described[f"Open chain: {app.workspace.chain.name}"] == "(a + b).relu()"
        pane = app.query_one(ChainsPane)
        lines = [pane.render_line(y).text.strip() for y in range(pane.virtual_size.height)]
        assert "(a + b).relu()" in lines


async def test_chains_pane_keys_mean_one_thing(make_app) -> None:
    """In the chains pane, x/n/r keep their global meaning; the pane's own keys are a, f2, y, delete."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        pane = app.query_one(ChainsPane)
        app.screen.set_focus(pane)
        count = len(app.workspace.chains)
        await pilot.press("x")
        assert len(app.workspace.chains) == count and not isinstance(app.screen, ConfirmDialog)
        assert "nothing is running" in app.query_one(StatusBar).info.message
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the N dialog")
        assert app.screen.id == "size-dialog" and len(app.workspace.chains) == count
        await pilot.press("escape")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the reps dialog")
        assert app.screen.id == "reps-dialog"
        await pilot.press("escape")
    global_keys = {
        k for c in commands.COMMANDS if c.where in ("anywhere", "outside the editor") for k in c.keys.split(",")
    }
    pane_keys = {k for c in commands.commands("chains pane") for k in c.keys.split(",")}
    assert not global_keys & pane_keys


async def test_chains_add_rename_duplicate_delete_and_select(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        pane = app.query_one(ChainsPane)
        app.screen.set_focus(pane)
        count = len(app.workspace.chains)
        await pilot.press("y")  # duplicate
        assert len(app.workspace.chains) == count + 1
        assert app.workspace.chain.name == "add_relu_copy"
        assert app.workspace.chain.text == SEED_CHAIN
        app.screen.set_focus(pane)
        await pilot.press("f2")  # rename
        await wait_for(pilot, lambda: isinstance(app.screen, InputDialog), what="the rename dialog")
        app.screen.query_one(Input).value = "fused"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.workspace.chain.name == "fused", what="renamed")
        assert "fused" in app.query_one(ChainEditor).border_title
        app.screen.set_focus(pane)
        await pilot.press("a")  # add: new, empty, editor focused
        await wait_for(pilot, lambda: isinstance(app.focused, ChainEditor), what="the editor")
        assert app.workspace.chain.text == ""
        await pilot.press("a", "space", "+", "space", "b")
        await wait_for(pilot, lambda: app.workspace.chain.text == "a + b", what="typed")
        assert app.workspace.chain.name == "chain"  # typing names nothing
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.workspace.chain.name == "add_2", what="named after its op: a seed is add")
        assert ("add_2", "a + b") in pane.state.chains  # shown in the chains pane
        app.screen.set_focus(pane)
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="asked")
        await pilot.press("y")
        await wait_for(pilot, lambda: len(app.workspace.chains) == count + 1, what="deleted")
        assert all(c.text != "a + b" or c.name == "add" for c in app.workspace.chains)
        # Select the first chain with the keyboard: it opens in the editor.
        app.screen.set_focus(pane)
        pane.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one(ChainEditor).text == app.workspace.chains[0].text, what="opened")


async def test_a_chain_keeps_its_name_through_an_edit(make_app) -> None:
    """The seed ``add_relu`` edited into another chain is still ``add_relu``: in the workspace, the
    editor's title and the chains pane; and a new chain, once named, keeps its name as it is edited."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        editor = app.query_one(ChainEditor)
        app.screen.set_focus(editor)
        editor.text = "(a * b).sin().sum()"  # an edit, as a paste over the whole text is
        await wait_for(pilot, lambda: app.workspace.chain.text == "(a * b).sin().sum()", what="typed")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.focused is not editor, what="the editor left")
        assert app.workspace.chain.name == "add_relu" and "add_relu" in editor.border_title
        assert ("add_relu", "(a * b).sin().sum()") in app.query_one(ChainsPane).state.chains
        app.screen.set_focus(app.query_one(ChainsPane))
        await pilot.press("a", *"a.exp()", "escape")
        await wait_for(pilot, lambda: app.workspace.chain.name == "exp", what="the new chain named")
        app.screen.set_focus(editor)
        await pilot.press("end", *".cos()", "escape")
        await wait_for(pilot, lambda: app.workspace.chain.text == "a.exp().cos()", what="edited")
        assert app.workspace.chain.name == "exp"


async def test_workspace_autosaves_and_restores(tmp_path, make_app) -> None:
    path = tmp_path / "ws.json"
    app = make_app(workspace_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("t", "g")  # bf16, device-time chart
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("end", "space", "*", "space", "c")
        await wait_for(pilot, lambda: path.exists() and "* c" in path.read_text(), timeout=5, what="the autosave")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        await pilot.press("ctrl+q")
    data = json.loads(path.read_text())
    assert data["settings"]["dtype"] == "bf16" and data["settings"]["chart"] == "device"
    again = make_app(workspace_path=path, chain=None)
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert again.query_one(ChainEditor).text == SEED_CHAIN + " * c"
        assert again.workspace.settings.dtype == "bf16"
        assert again.workspace.chart == "device"
        await pilot.press("ctrl+q")


async def test_default_workspace_lives_in_the_state_dir(_isolated_state, make_app) -> None:
    app = make_app(workspace_path=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("q")
    assert (_isolated_state / "workspace.json").exists()


@pytest.mark.parametrize(("key", "suffix"), [("J", ".json"), ("C", ".csv"), ("T", ".trace.json"), ("S", ".svg")])
async def test_exports(make_app, tmp_path, key: str, suffix: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press(key)
        await wait_for(pilot, lambda: app.main.last_export is not None, what="the export")
        path = app.main.last_export
        assert path.name.endswith(suffix) and path.parent == tmp_path / "exports"
        assert str(path) in app.query_one(StatusBar).info.message
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
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
        await wait_for(pilot, lambda: app.session.ready is not None, what="ready")
        await pilot.press("escape", "J")
        await wait_for(pilot, lambda: "nothing to export" in app.query_one(StatusBar).info.message, what="why")
        assert app.main.last_export is None


async def test_kernel_detail_shows_full_name_and_generated_source(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        app.screen.set_focus(app.query_one("#table-compiled"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the detail")
        assert app.screen.row.name == "triton_poi_fused_add_relu_0"
        source, lexer = app.screen.source
        assert "def triton_poi_fused_add_relu_0" in source and lexer == "python"
        await pilot.press("escape")
        app.screen.set_focus(app.query_one("#table-eager"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the detail")
        assert app.screen.row.name.startswith("void at::native::vectorized_elementwise_kernel")
        assert app.screen.source is None
        assert "void at::native::vectorized_elementwise_kernel" in app.screen.full_name_text()
        await pilot.press("escape")
        assert not isinstance(app.screen, KernelDetail)


async def test_help_is_generated_from_the_command_table(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        listed = {(keys, where) for keys, _, where in app.screen.rows}
        for c in commands.COMMANDS:
            assert (c.key_text(), c.where) in listed, c
        for binding in app.BINDINGS + ChainsPane.BINDINGS:
            assert any(c.keys == binding.key for c in commands.COMMANDS), binding
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        app.screen.set_focus(app.query_one(ChainEditor))
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help from the editor")


async def test_command_palette_has_every_action(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        palette = list(app.get_system_commands(app.screen))
        titles = [c.title for c in palette]
        callbacks = {getattr(c.callback, "__name__", "") for c in palette}
        for c in commands.COMMANDS:
            if c.palette:
                assert f"action_{c.action}" in callbacks and c.title in titles, c.action
        assert titles.count("Quit") == 1
        # And the palette itself runs them: open it, search, pick.
        await pilot.press("ctrl+p")
        for ch in "Dtype: bf16":
            await pilot.press(ch if ch != " " else "space")

        def matched() -> bool:
            found = app.screen.query(CommandList)
            return (
                bool(found)
                and found.first().option_count > 0
                and "bf16" in str(found.first().get_option_at_index(0).prompt)
            )

        await wait_for(pilot, matched, what="the palette's match")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.workspace.settings.dtype == "bf16", what="the palette's command")


async def test_letter_keys_type_in_the_editor_and_hide_from_the_footer(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        assert app.focused is editor
        assert app.main.check_action("sweep", ()) is False
        assert app.main.check_action("help", ()) is True and app.main.check_action("quit", ()) is True
        await pilot.press("end", "s")
        assert editor.text.endswith("s") and app.session.sweep is None
        assert "escape, then s" in str(app.query_one("#crossover").render())
        await pilot.press("escape")
        assert app.main.check_action("sweep", ()) is True
        assert "press s to sweep" in str(app.query_one("#crossover").render())


async def test_the_first_keys_do_what_the_screen_says(make_app) -> None:
    """The app starts in the editor (typing a chain is the main use) and says so under it: a
    letter types; after escape, the footer's keys work, ``enter Detail`` among them on a table."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        assert app.focused is editor and "esc: letter keys" in str(editor.border_subtitle)
        assert "Sweep" not in footer_words(app) and "Results" in footer_words(app)
        await pilot.press("s")
        assert editor.text == SEED_CHAIN + "s" and app.session.sweep is None
        await pilot.press("backspace", "escape")
        await wait_for(pilot, lambda: "esc: letter keys" not in str(editor.border_subtitle), what="the hint gone")
        await wait_for(pilot, lambda: "Detail" in footer_words(app), what="enter Detail on the kernel table")
        assert footer_words(app)[0] == "Detail" and "Sweep" in footer_words(app)
        await pilot.press("s")
        await wait_for(pilot, lambda: app.session.sweep is not None, what="the sweep the footer offers")


async def test_tab_visits_every_pane_in_reading_order(make_app) -> None:
    """Chains, editor, op chain, kernels (each table), sweep, and round again; an empty sweep pane
    is a stop too (``s`` works there), and a pane with tables is not a stop besides them."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        app.screen.set_focus(app.query_one(ChainsPane))
        visited = []
        for _ in range(7):
            focused = app.focused
            assert focused is not None
            pane = next(n.id for n in focused.ancestors_with_self if n.id in PANE_IDS)
            visited.append(pane if pane != "kernels" else focused.id)
            await pilot.press("tab")
        assert visited == ["chains", "editor", "ops", "table-eager", "table-compiled", "sweep", "chains"]


async def test_the_palette_key_ends_the_footer_where_keys_overflow_it(make_app) -> None:
    """At 80 columns the chains pane's keys overflow the footer; the palette key, docked at its
    right, covers its last cell (a margin there showed a letter of the keys beneath it)."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "l")
        await wait_for(pilot, lambda: isinstance(app.focused, ChainsPane), what="the chains pane")
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert footer.virtual_size.width > footer.size.width, "the keys no longer overflow: the test shows nothing"
        last_cell, _ = app.screen.get_widget_at(footer.region.right - 1, footer.region.y)
        assert getattr(last_cell, "key", None) == "ctrl+p"


async def test_ctrl_r_retries_a_worker_that_did_not_start(make_app, tmp_path) -> None:
    flag = tmp_path / "second-try"
    # Fails the first time, starts the replay worker the second time.
    script = (
        "import pathlib, runpy, sys\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if not flag.exists():\n    flag.write_text('x'); sys.exit(3)\n"
        f"sys.argv = ['replay', {str(recording())!r}]\n"
        "runpy.run_module('probes.link.replay', run_name='__main__')\n"
    )
    app = make_app(worker_command=[sys.executable, "-c", script])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.query_one(StatusBar).info.worker_state == "failed", what="failure")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: focus_done(app), what="results after the retry")
        assert "compiled 1 kernel" in headline(app)


async def test_graph_breaks_and_declared_inputs_and_transfers(make_app) -> None:
    """Recorded chains beyond the seed: break reasons, bf16 declared inputs, memcpy rows apart."""
    app = make_app(chain="torch.nonzero(a > 0)")
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="nonzero")
        assert "graph breaks" in str(app.query_one("#mode-note-compiled").render())
        assert "2 graph breaks" in str(app.query_one("#compile-info").render())
    chain = "x: [N, 1024] bf16\nw: [1024, 1024] bf16\nF.gelu(x @ w)"
    app = make_app(chain=chain, focus_size=100_000)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="matmul")
        block = app.query_one("#mode-eager")
        kinds = [row.kind for row in block.rows]
        assert kinds[-1] in ("memcpy", "memset") and kinds.count("kernel") == 2  # transfers last, apart
        table = app.query_one("#table-eager")
        assert f"({kinds[-1]})" in table.row_cells(table.row_count - 1)[0].plain
        assert "2 kernels" in str(app.query_one("#mode-title-eager").render())


async def test_a_compiled_run_that_ran_eager_says_so(make_app) -> None:
    """fallback_reason is shown prominently, never as a compiled result."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, app)
        key = app.session.focus_keys()["compiled"]
        compiled = app.session.book.cache[key]
        app.session.book.cache[key] = dataclasses.replace(
            compiled, ran_compiled=False, fallback_reason="recompile limit reached"
        )
        app.main.loop.render_panes()
        await wait_for(
            pilot, lambda: "recompile limit" in str(app.query_one("#mode-note-compiled").render()), what="note"
        )
        assert "ran eager, not compiled: recompile limit reached" in str(app.query_one("#mode-note-compiled").render())
        assert "compiled (ran eager!)" in headline(app)
        assert "the compiled run ran eager" in str(app.query_one("#compile-info").render())


async def test_editor_highlighting_falls_back_without_tree_sitter(monkeypatch) -> None:
    """Highlighted where tree-sitter and its Python grammar are there; plain text, the cursor
    where it was, where either is missing (Textual's own fallback, or no grammar)."""
    from textual import widgets
    from textual.app import App

    from tui.widgets.editor import ChainEditor

    text_area = sys.modules[widgets.TextArea.__module__]

    async def highlighting(highlight: bool | None = None) -> tuple[bool, str | None]:
        app = App()
        async with app.run_test() as pilot:
            await app.mount(ChainEditor("(a + b).relu()", highlight=highlight))
            editor = app.query_one(ChainEditor)
            await pilot.pause()
            await pilot.pause()
            assert editor.cursor_location == (0, 14)
            return editor.highlighted, editor.language

    assert await highlighting(False) == (False, None)
    if not getattr(text_area, "TREE_SITTER", False):
        pytest.skip("tree-sitter is not installed here")
    assert await highlighting() == (True, "python")
    monkeypatch.setattr(text_area, "get_language", lambda name: None)  # no Python grammar
    assert await highlighting() == (False, None)
    monkeypatch.setattr(text_area, "TREE_SITTER", False)  # no tree-sitter at all
    assert (await highlighting())[0] is False


async def test_a_status_message_never_runs_into_the_device_name(make_app) -> None:
    """At 100 columns a memory refusal that just fitted read ``CPU (2 cores)N=1e10: ...``: a
    message shares the line only with a gap before it, else it takes a line of its own."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot, app)
        bar = app.query_one(StatusBar)
        device = bar.info.device
        assert device
        for length in range(40, 100):
            message = "N=1e10: " + "m" * (length - 8)
            bar.set(message=message)
            first, *rest = str(bar.render()).split("\n")
            if message in first:
                before = first[: first.index(message)]
                assert before.endswith("  ") and device.split()[0] in before, (length, first)
            else:
                assert message in " ".join(line.strip() for line in rest), (length, rest)
