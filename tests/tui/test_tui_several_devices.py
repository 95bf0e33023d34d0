"""The app on several devices side by side (``--device cpu,b:cpu --host b=COMMAND``).

Two workers stand in for two boxes: the replay worker (fast, the same answers on both) and, in the
end-to-end test, two real CPU workers, one of them reached through ``kernel-tui worker`` as
``ssh BOX kernel-tui worker`` would reach it. A host whose COMMAND exits 255 with ssh's message
stands in for a box that cannot be reached.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import sys
from pathlib import Path

import pytest
from tui_helpers import replay_command, wait_for

from probes.link.settings import parse_device_entries
from tui.screens.exports import export
from tui.widgets.chart import LogChart
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.op_chain_pane import OpChainPane
from tui.widgets.status_bar import StatusBar
from tui.widgets.sweep_pane import DEVICE_MARKERS, SweepPane

DEAD_HOST = "sh -c 'echo \"ssh: connect to host gpu2 port 22: Connection refused\" >&2; exit 255'"
"""A box that cannot be reached: what ssh prints and its exit status."""


SWEPT = ("eager", "compiled")


def table_text(table) -> tuple[list[str], list[list[str]]]:
    return [label.plain for label in table.labels], [
        [cell.plain for cell in table.row_cells(i)] for i in range(table.row_count)
    ]


def both_measured(app, entries: int = 2) -> bool:
    views = [app.session.focus_view(0.0, entry) for entry in range(entries)]
    return all(v.measurement is not None and v.fresh for view in views for v in view.modes)


def headline(app) -> str:
    return str(app.query_one("#headline").render())


def status_text(app) -> str:
    return str(app.query_one(StatusBar).render())


def two_box_app(make_app, devices: str, hosts: dict[str, str], **kwargs: object):
    return make_app(devices=parse_device_entries(devices), hosts=hosts, **kwargs)


async def test_two_boxes_give_two_result_sets_each_named_and_d_switches_the_followed_one(make_app) -> None:
    replay = shlex.join(replay_command())
    app = two_box_app(make_app, "cuda:0,b:cuda:0", {"b": replay})
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: both_measured(app), what="both devices' rows")
        await wait_for(pilot, lambda: "b:cuda:0" in headline(app), what="the side-by-side summary")
        lines = headline(app).splitlines()
        assert any(line.startswith("▸ cuda:0") for line in lines)  # the followed one, marked
        assert any(line.strip().startswith("b:cuda:0") and "1.00x" in line for line in lines)
        assert "cuda:0 (d: next device)" in (app.query_one(KernelPane).shown_title or "")
        await pilot.press("escape", "d")
        await wait_for(
            pilot,
            lambda: "b:cuda:0 (d: next device)" in (app.query_one(KernelPane).shown_title or ""),
            what="the kernel pane following b",
        )
        assert "b:cuda:0" in (app.query_one(SweepPane).shown_title or "")
        assert "b:cuda:0" in (app.query_one(OpChainPane).shown_title or "")
        # said, though a worker's news may have come after it
        assert "the kernel and sweep panes follow b:cuda:0" in [text for text, _ in app.main.status.said]
        await pilot.press("ctrl+q")


async def test_the_sweep_chart_draws_a_line_per_device_named_in_its_legend(make_app) -> None:
    replay = shlex.join(replay_command())
    app = two_box_app(make_app, "cuda:0,b:cuda:0", {"b": replay}, sizes=(100, 10_000, 1_000_000))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: both_measured(app), what="both devices' rows")
        await pilot.press("escape", "s")
        session = app.session

        def swept() -> bool:
            other = session.state.entry_sweep(1)
            return session.sweep is not None and other is not None and len(other.results) == 6

        await wait_for(pilot, swept, what="both devices' sweeps")
        chart = app.query_one(LogChart)
        await wait_for(pilot, lambda: len({s.label for s in chart.series}) >= 3, what="the chart drawing both devices")
        assert {s.label for s in chart.series} >= {"cuda:0 eager", "b:cuda:0 eager", "b:cuda:0 compiled"}
        legend = str(chart.render()).splitlines()[0]
        assert "● cuda:0" in legend and "◆ b:cuda:0" in legend
        await pilot.press("ctrl+q")


async def test_a_box_that_cannot_be_reached_is_one_line_naming_it_and_the_other_goes_on(make_app) -> None:
    app = two_box_app(make_app, "cuda:0,gpu2:cuda:0", {"gpu2": DEAD_HOST})
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: "gpu2:cuda:0: " in status_text(app), what="the dead box's line")
        lines = [line for line in status_text(app).splitlines() if "gpu2" in line]
        assert len(lines) == 1 and "Connection refused" in lines[0]
        await wait_for(pilot, lambda: both_measured(app, entries=1), what="the first device's rows")
        assert app.session.focus_view(0.0, 1).modes[0].measurement is None
        await pilot.press("ctrl+q")


def test_the_devices_and_hosts_are_kept_in_the_workspace(make_app, tmp_path: Path) -> None:
    path = tmp_path / "workspace.json"
    first = two_box_app(make_app, "cpu,b:cpu", {"b": "ssh b kernel-tui worker"}, workspace_path=path, spread=True)
    first.store.save()
    first.store.release()
    again = make_app(workspace_path=path)
    assert [str(entry) for entry in again.fleet.entries] == ["cpu", "b:cpu"]
    assert again.workspace.hosts == {"b": "ssh b kernel-tui worker"}
    assert again.workspace.settings.device == "cpu"
    assert again.workspace.settings.spread and again.session.state.spread
    again.store.release()


def test_a_workspace_files_host_never_given_here_is_not_started(make_app, tmp_path: Path) -> None:
    """A host's command is code: one a workspace file brings runs only once given as --host."""
    from tui import workspace as ws

    path = tmp_path / "shared.json"
    shared = ws.Workspace.default()
    shared.take_fleet(parse_device_entries("cpu,evil:cpu"), {"evil": "touch /tmp/owned"})
    ws.save(shared, path)
    app = make_app(workspace_path=path)
    assert [str(entry) for entry in app.fleet.entries] == ["cpu"]
    assert any("evil='touch /tmp/owned'" in notice and "--host" in notice for notice in app.store.notices)
    app.store.release()
    given = make_app(workspace_path=path, hosts={"evil": "touch /tmp/owned"})
    assert [str(entry) for entry in given.fleet.entries] == ["cpu", "evil:cpu"]
    given.store.release()


def test_one_device_keeps_one_bridge_and_the_workspace_its_one_device(make_app) -> None:
    app = make_app(devices=parse_device_entries("cpu"))
    assert len(app.fleet.bridges) == 1 and not app.fleet.several
    assert (app.workspace.devices, app.workspace.settings.device) == ([], "cpu")
    app.store.release()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device", "cpu,b:cpu"], "unknown host 'b': define it with --host b=COMMAND"),
        (["--host", "b"], "--host: 'b' is not NAME=COMMAND"),
        (["--device", "cpu,cpu"], "--device: a device is named twice"),
        (
            ["--device", "cpu,b:cuda", "--host", "b=ssh b kernel-tui worker", "--spread"],
            "--spread: the devices share one sweep, so they must be of one kind: cpu and cuda are mixed",
        ),
    ],
)
def test_a_bad_device_list_or_host_is_one_usage_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    import tui.__main__
    from tui.__main__ import main

    monkeypatch.setattr(tui.__main__, "_start_workers", lambda command: (None, None))
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--workspace", str(tmp_path / "w.json")])
    assert exc.value.code == 2
    reason = capsys.readouterr().err.strip().splitlines()[-1]  # after the usage
    assert reason.startswith("kernel-tui: error: ") and message in reason


@pytest.mark.slow
@pytest.mark.e2e
async def test_two_local_workers_stand_in_for_two_boxes(make_app, tmp_path: Path) -> None:
    worker = shlex.join([sys.executable, "-P", "-m", "tui", "worker"])
    app = two_box_app(
        make_app, "cpu,b:cpu", {"b": worker}, worker_command=None, modes=("eager",), focus_size=1000, reps=3
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: both_measured(app), timeout=180, what="both workers' rows")
        await wait_for(pilot, lambda: "b:cpu" in headline(app), what="the summary")
        lines = headline(app).splitlines()
        assert any(line.startswith("▸ cpu") for line in lines) and any("b:cpu" in line for line in lines)
        for entry in (0, 1):
            (view,) = app.session.focus_view(0.0, entry).modes
            assert view.measurement is not None and view.measurement.kernels_per_call == 2
        await pilot.press("ctrl+q")


async def test_exports_hold_every_devices_rows_each_naming_its_box(make_app) -> None:
    replay = shlex.join(replay_command())
    app = two_box_app(make_app, "cuda:0,b:cuda:0", {"b": replay})
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: both_measured(app), what="both devices' rows")
        csv_path = export(app.main, "csv")
        json_path = export(app.main, "json")
        await pilot.press("ctrl+q")
    assert csv_path is not None and json_path is not None
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert {row["host"] for row in rows} == {"", "b"}  # this machine's worker, and box b's
    assert {row["mode"] for row in rows if row["host"] == "b"} == {row["mode"] for row in rows if not row["host"]}
    report = json.loads(json_path.read_text())
    assert [(d["host"], d["device"]) for d in report["devices"]] == [(None, "cuda:0"), ("b", "cuda:0")]
    assert {m.get("host") for m in report["results"]} == {None, "b"}


async def test_a_first_box_that_cannot_be_reached_holds_up_no_other_and_gets_the_request_when_back(
    make_app, tmp_path: Path
) -> None:
    """The lead is the first device whose worker answers: the second measures while the first is
    down, and the first, once it answers, is sent what the live size lacks there."""
    back = tmp_path / "reachable"
    script = tmp_path / "ssh_gpu2.sh"
    script.write_text(f"test -e {shlex.quote(str(back))} && exec {shlex.join(replay_command())}\n{DEAD_HOST}\n")
    app = two_box_app(make_app, "gpu2:cuda:0,cuda:0", {"gpu2": f"sh {shlex.quote(str(script))}"})
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: "gpu2:cuda:0: " in status_text(app), what="the dead box's line")
        await wait_for(
            pilot, lambda: all(v.fresh for v in app.session.focus_view(0.0, 1).modes), what="the second's rows"
        )
        lines = [line for line in status_text(app).splitlines() if "gpu2" in line]
        assert len(lines) == 1 and "Connection refused" in lines[0]
        assert all(v.measurement is None for v in app.session.focus_view(0.0, 0).modes)
        back.touch()
        await pilot.press("escape", "ctrl+r")  # the dead box is tried again at once
        await wait_for(pilot, lambda: both_measured(app), what="the first's rows, once it answers")
        assert app.session.lead == 0
        await pilot.press("ctrl+q")


async def test_a_spread_sweep_is_shared_out_and_shown_as_one_each_point_naming_its_device(make_app) -> None:
    replay = shlex.join(replay_command())
    sizes = (100, 10_000, 1_000_000)
    app = two_box_app(make_app, "cuda:0,b:cuda:0", {"b": replay}, sizes=sizes, spread=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: both_measured(app, entries=1), what="the first device's rows")
        await pilot.press("escape", "s")
        session = app.session

        def swept() -> bool:
            view = session.sweep_view()
            return view.results is not None and len(view.results.results) == 6 and not view.running

        await wait_for(pilot, swept, what="the spread sweep")
        sent = session.state.sweeps[session.state.chain]
        measured = {0: set(), 1: set()}
        for entry, rid in sent.parts:
            part = session.state.entries[entry].sweeps[rid]
            measured[entry] |= set(part.results)
        assert measured[0] and measured[1] and not measured[0] & measured[1]  # each pair once, on one device
        view = session.sweep_view()
        assert [m.size for m in view.results.measurements()] == [n for n in sizes for _ in range(2)]
        assert view.results.measured_by == {pair: e for e, pairs in measured.items() for pair in pairs}
        marker = {pair: DEVICE_MARKERS[entry] for pair, entry in view.results.measured_by.items()}
        labels, rows = table_text(app.query_one("#sweep-table"))  # 80 columns: a row per size, a mark per time
        assert labels[:3] == ["N", "eager", "compiled"] and len(rows) == 3
        for size, row in zip(sizes, rows, strict=True):
            assert row[1].endswith(marker[(size, "eager")]) and row[2].endswith(marker[(size, "compiled")])
        legend = str(app.query_one(LogChart).render()).splitlines()[0]
        assert "● cuda:0" in legend and "◆ b:cuda:0" in legend
        await pilot.resize_terminal(160, 50)
        await wait_for(pilot, lambda: "on" in table_text(app.query_one("#sweep-table"))[0], what="the wide table")
        labels, rows = table_text(app.query_one("#sweep-table"))  # a row per size and mode, with its device
        named = {"●": "● cuda:0", "◆": "◆ b:cuda:0"}
        assert [row[labels.index("on")] for row in rows] == [named[marker[(n, m)]] for n in sizes for m in SWEPT]
        await pilot.press("ctrl+q")


async def test_a_spread_device_other_than_the_lead_says_it_measures_its_share_not_waiting(
    make_app, tmp_path: Path
) -> None:
    """With --spread the size measured on every edit goes to the lead alone: the other device's
    summary line and kernel pane say so, where they would otherwise wait for rows that never come.
    Box b answers only once the lead's rows are in, so that the first device leads."""
    opened = tmp_path / "b-answers"
    script = tmp_path / "ssh_b.sh"
    script.write_text(
        f"while [ ! -e {shlex.quote(str(opened))} ]; do sleep 0.05; done\nexec {shlex.join(replay_command())}\n"
    )
    app = two_box_app(make_app, "cuda:0,b:cuda:0", {"b": f"sh {shlex.quote(str(script))}"}, spread=True)
    share = "this device measures only its share of the sweep (--spread)"
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: both_measured(app, entries=1), what="the lead's rows")
        opened.touch()
        await wait_for(pilot, lambda: app.session.state.entries[1].ready is not None, what="b's worker")
        await wait_for(pilot, lambda: share in headline(app), what="the summary's line for b")
        [line] = [line for line in headline(app).splitlines() if line.strip().startswith("b:cuda:0")]
        assert share in line and " - " not in line  # no row of dashes
        await pilot.press("escape", "d")
        await wait_for(
            pilot,
            lambda: any(line.startswith(share) for line in headline(app).splitlines()),
            what="b's own headline",
        )
        assert app.session.followed == 1 and "runs on cuda:0" in headline(app)
        pane = app.query_one(KernelPane)
        notes = " ".join(str(block.query_one(".mode-note").render()) for block in pane.blocks)
        assert "waiting" not in notes and "no results yet" not in headline(app)
        await pilot.press("ctrl+q")
