"""The command line (`kernel-tui [CHAIN] [--device ...]`), and what the app imports."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tui_helpers import recording, wait_for

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_importing_the_app_does_not_import_torch() -> None:
    result = run_python(
        "import sys; import tui.__main__, tui.app, tui.export, tui.workspace; "
        "from tui.app import KernelTuiApp; KernelTuiApp(worker_command=['true'], autosave=False); "
        "print('torch' in sys.modules)"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_the_workers_start_before_the_app_imports_its_libraries(tmp_path: Path) -> None:
    """Whatever the app imports before it starts its workers delays their torch import, and so the
    first rows, as much (asyncio and the protocol's dataclasses are the large ones)."""
    code = (
        "import sys, tui.__main__ as m\n"
        "def start(command):\n"
        "    names = ('asyncio', 'probes.link.protocol', 'probes.link.summary', 'textual', 'rich')\n"
        "    print(sorted(name for name in names if name in sys.modules))\n"
        "    raise SystemExit(0)\n"
        "m._start_workers = start\n"
        "m.main(['(a + b).relu()', '--sizes', '1e2,1e4'])\n"
    )
    env = os.environ | {"KERNEL_TUI_STATE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


class FakeEarlyWorker:
    def __init__(self) -> None:
        self.killed = False

    def kill(self) -> None:
        self.killed = True


@pytest.mark.parametrize("argv", [["--sizes", "1e2,lots"], ["--n", "0"]])
def test_a_bad_argument_read_after_the_workers_started_stops_them(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.__main__

    started = [FakeEarlyWorker(), FakeEarlyWorker()]
    monkeypatch.setattr(tui.__main__, "_start_workers", lambda command: tuple(started))
    with pytest.raises(SystemExit) as exc:
        tui.__main__.main(argv)
    assert exc.value.code == 2
    assert all(worker.killed for worker in started)


def test_profile_subcommand_does_not_import_textual(tmp_path: Path) -> None:
    result = run_python(
        "import sys; from tui.__main__ import main; "
        "code = main(['profile', 'a +* b']); print(code, 'textual' in sys.modules)"
    )
    assert result.returncode == 0, result.stderr
    code, textual = result.stdout.split()
    assert code == "2"  # the chain is rejected as bad input, headless
    assert textual == "False"
    assert "invalid syntax" in result.stderr


@pytest.mark.parametrize(("users", "expected"), [(None, "240"), ("30", "30")])
def test_the_app_draws_up_to_240_frames_a_second_unless_the_user_says_otherwise(
    users: str | None, expected: str, tmp_path: Path
) -> None:
    """At Textual's default of 60 a change waits up to two frames (33 ms) to be drawn."""
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"} | {"KERNEL_TUI_STATE_DIR": str(tmp_path)}
    if users is not None:
        env["TEXTUAL_FPS"] = users
    code = (
        "import tui.__main__ as m\n"
        "build = m.build_app\n"
        "def build_and_report(argv, **kwargs):\n"
        "    app = build(argv, **kwargs)\n"
        "    import textual.constants\n"
        "    print(textual.constants.MAX_FPS)\n"
        "    type(app).run = lambda self, *args, **kwargs: 0\n"
        "    return app\n"
        "m.build_app, m._start_workers = build_and_report, lambda command: (None, None)\n"
        "m.main(['--worker-cmd', 'true'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def captured_app(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Run main() with App.run replaced: returns the app it would have run (and starts no worker:
    these tests read what the app was given)."""
    import tui.__main__
    from tui.app import KernelTuiApp

    seen: dict = {}
    monkeypatch.setattr(tui.__main__, "_start_workers", lambda command: (None, None))
    monkeypatch.setenv("KERNEL_TUI_FAST_PATHS", "-start_screen")  # built at once: its worker link is read

    def fake_run(self, *args, **kwargs):
        seen["app"] = self
        return 0

    monkeypatch.setattr(KernelTuiApp, "run", fake_run)
    return seen


def test_chain_and_settings_from_the_command_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tui.__main__ import main

    seen = captured_app(monkeypatch)
    rc = main(
        [
            "x * 2",
            "--device",
            "cpu",
            "--sizes",
            "1e3,1M",
            "--dtype",
            "bf16",
            "--modes",
            "eager",
            "--n",
            "1e4",
            "--reps",
            "30",
            "--workspace",
            str(tmp_path / "w.json"),
            "--worker-cmd",
            "ssh gpu-box python -m probes.engine.worker",
        ]
    )
    assert rc == 0
    app = seen["app"]
    s = app.workspace.settings
    assert app.workspace.chain.text == "x * 2"
    assert (s.device, s.sizes, s.dtype, s.modes, s.focus_size, s.reps) == (
        "cpu",
        (1000, 1_000_000),
        "bf16",
        ("eager",),
        10_000,
        30,
    )
    assert app.store.path == tmp_path / "w.json"
    assert app.bridge.workers.primary.command == ["ssh", "gpu-box", "python", "-m", "probes.engine.worker"]


@pytest.mark.parametrize(
    ("flags", "spread"),
    [
        ([], True),
        (["--device", "cpu,b:cpu"], False),
        (["--device", "cpu,b:cpu", "--spread"], True),
    ],
    ids=["kept-with-the-saved-devices", "a-device-list-without-it-measures-side-by-side", "given-again"],
)
def test_spread_is_kept_with_the_device_list_it_was_given_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: list[str], spread: bool
) -> None:
    from tui import workspace as ws
    from tui.__main__ import main

    path = tmp_path / "w.json"
    saved = ws.Workspace.default()
    saved.settings = dataclasses.replace(saved.settings, spread=True)
    saved.devices, saved.hosts = ["cpu", "b:cpu"], {"b": "true"}
    ws.save(saved, path)
    seen = captured_app(monkeypatch)
    assert main([*flags, "--workspace", str(path), "--worker-cmd", "true"]) == 0
    app = seen["app"]
    assert app.workspace.settings.spread is spread and app.workspace.devices == ["cpu", "b:cpu"]


def test_replay_option_uses_the_replay_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.__main__ import main

    seen = captured_app(monkeypatch)
    assert main(["(a + b).relu()", "--replay", str(recording())]) == 0
    command = seen["app"].bridge.workers.primary.command
    assert command[command.index("-m") + 1] == "probes.link.replay"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sizes", "1e2,lots"], "not a size"),
        (["--n", "0"], "is not positive"),
        (["--reps", "0"], "between 1 and 10000"),
        (["--dtype", "fp8"], "--dtype: unknown dtype 'fp8'"),
        (["--modes", "both"], "unknown mode 'both'"),
        (["--modes", "eager,compiled,dynamic"], "one or two modes"),
        (["--device", "tpu"], "unknown device 'tpu'"),
        (["--export-dir", __file__], "is not a folder"),
        (["--replay", "/nonexistent.json"], "no such file"),
        (["--worker-cmd", "ssh 'unclosed"], "--worker-cmd"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_the_chain_argument_splits_into_lines_outside_its_strings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tui.__main__ import main

    seen = captured_app(monkeypatch)
    assert (
        main(["x: [N]; torch.einsum('i;j', x)", "--workspace", str(tmp_path / "w.json"), "--worker-cmd", "true"]) == 0
    )
    assert seen["app"].workspace.chain.text == "x: [N]\ntorch.einsum('i;j', x)"


def test_the_chain_argument_is_selected_not_duplicated(tmp_path: Path) -> None:
    from tui import workspace as ws
    from tui.workspace_file import open_workspace

    path = tmp_path / "w.json"
    w = ws.Workspace.default()
    ws.save(w, path)
    loaded = open_workspace(path)
    assert loaded.notices == []
    index = loaded.workspace.select_text("(a+b).relu()")
    assert loaded.workspace.chains[index].name == "add_relu" and len(loaded.workspace.chains) == len(w.chains)
    index = loaded.workspace.select_text("a - b")
    assert (
        loaded.workspace.chains[index].name == "sub" and len(loaded.workspace.chains) == len(w.chains) + 1
    )  # named after its op
    loaded.release()


def test_bad_settings_are_repaired_in_a_read_only_session(tmp_path: Path) -> None:
    from tui.workspace_file import open_workspace

    path = tmp_path / "w.json"
    path.write_text(
        json.dumps({"chains": [{"name": "x", "text": "a"}], "settings": {"dtype": "fp8", "sizes": [], "reps": -1}})
    )
    loaded = open_workspace(path)
    s = loaded.workspace.settings
    assert s.dtype == "fp32" and s.sizes and s.reps is None
    assert loaded.read_only and "dtype" in loaded.read_only  # saving would lose 'fp8': the file is left as it is
    loaded.release()


@pytest.mark.parametrize(
    ("modes", "toggle", "compile_mode"),
    [
        ("eager", "eager", "compiled"),
        ("eager,max-autotune", "both", "max-autotune"),
        ("compiled,dynamic", "static+dynamic", "compiled"),
    ],
)
def test_the_app_takes_the_mode_names_of_the_headless_command(
    modes: str, toggle: str, compile_mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tui.__main__ import main

    seen = captured_app(monkeypatch)
    assert main(["--modes", modes, "--workspace", str(tmp_path / "w.json"), "--worker-cmd", "true"]) == 0
    workspace = seen["app"].workspace
    assert (workspace.toggle, workspace.compile_mode) == (toggle, compile_mode)
    assert workspace.settings.modes == tuple(modes.split(","))


def test_help_lists_the_commands_and_the_same_mode_names(capsys: pytest.CaptureFixture[str]) -> None:
    from probes.cli import build_parser as profile_parser
    from probes.link.settings import MODES
    from tui.__main__ import main

    with pytest.raises(SystemExit):
        main(["--help"])
    app_help = " ".join(capsys.readouterr().out.split())
    assert "kernel-tui profile" in app_help and "kernel-tui demo" in app_help
    profile_help = " ".join(profile_parser().format_help().split())
    for mode in MODES:
        assert mode in app_help and mode in profile_help


@pytest.mark.parametrize(("typed", "meant"), [("profle", "profile"), ("porfile", "profile"), ("dmeo", "demo")])
def test_a_mistyped_command_suggests_the_right_one(typed: str, meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main([typed, "(a + b).relu()"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean 'kernel-tui {meant}'" in err


def test_a_chain_is_not_taken_for_a_mistyped_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tui.__main__ import main

    seen = captured_app(monkeypatch)
    assert main(["a", "--workspace", str(tmp_path / "w.json"), "--worker-cmd", "true"]) == 0
    assert seen["app"].workspace.chain.text == "a"


def test_exports_go_where_asked_with_the_full_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tui.__main__ import main

    monkeypatch.chdir(tmp_path)
    seen = captured_app(monkeypatch)
    assert main(["--export-dir", "out", "--workspace", str(tmp_path / "w.json"), "--worker-cmd", "true"]) == 0
    assert seen["app"].export_dir == tmp_path / "out"


def test_exports_default_to_the_current_directory_unless_it_is_the_source_checkout(tmp_path: Path) -> None:
    """``make run`` starts in the checkout: exports there would pile up among the sources."""
    import platformdirs

    from tui.export_dir import default_export_dir, source_checkout

    checkout = tmp_path / "kernel-tui"
    (checkout / "tui").mkdir(parents=True)
    assert default_export_dir(tmp_path, checkout) == tmp_path
    data_exports = platformdirs.user_data_path("kernel-tui") / "exports"
    assert default_export_dir(checkout, checkout) == data_exports
    assert default_export_dir(checkout / "tui", checkout) == data_exports
    assert source_checkout() == ROOT  # the tests run from a checkout
    assert default_export_dir(ROOT) == data_exports


def sweep_title(app) -> str:
    from tui.widgets.sweep_pane import SweepPane

    return app.query_one(SweepPane).shown_title or ""


async def test_sizes_alone_set_the_sweep_and_the_live_size_and_both_are_on_screen(tmp_path: Path) -> None:
    """``--sizes 1e3,1e4`` without ``--n``: the live view measures 1e3, the first of them."""
    from tui.__main__ import build_app
    from tui.widgets.kernel_pane import KernelPane
    from tui.widgets.status_bar import StatusBar

    argv = ["(a + b).relu()", "--sizes", "1e3,1e4", "--replay", str(recording()), "--workspace", str(tmp_path / "w")]
    app = build_app(argv)
    sent = []
    send = app.bridge.send
    app.bridge.send = lambda request, reply_to=None: (sent.append(request), send(request, reply_to))[1]
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: bool(sent), what="the first request")
        assert [request.sizes for request in sent] == [[1000]]
        await wait_for(pilot, lambda: "N=1e3" in str(app.query_one(StatusBar).render()), what="N on screen")
        assert "N=1e3" in (app.query_one(KernelPane).shown_title or "")
        assert "N=1e3,1e4" in sweep_title(app)
        await pilot.press("ctrl+q")


async def test_a_restored_workspace_shows_the_sweep_sizes_it_brings(make_app, tmp_path: Path) -> None:
    """Sizes typed in one run come back in the next: on screen, never silently."""
    from tui import workspace as ws

    path = tmp_path / "workspace.json"
    saved = ws.Workspace.default()
    saved.settings = dataclasses.replace(saved.settings, sizes=(100, 10**5))
    ws.save(saved, path)
    app = make_app(workspace_path=path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: "N=1e2,1e5" in sweep_title(app), what="the sizes in the sweep's title")
        await pilot.press("ctrl+q")


@pytest.mark.slow
async def test_kernel_tui_worker_is_a_worker_the_app_can_reach_through_worker_cmd(tmp_path: Path) -> None:
    """``--worker-cmd "ssh BOX kernel-tui worker"``: the subcommand speaks the worker's protocol on
    stdin/stdout, answers a request and is gone once its client closes."""
    from probes.link.client import WorkerClient
    from probes.link.protocol import MeasurementResult, ProfileRequest, RequestDone

    client = WorkerClient(
        [sys.executable, "-P", "-m", "tui", "worker"], env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")}
    )
    try:
        ready = await asyncio.wait_for(client.start(), 120)
        assert any(device.name == "cpu" for device in ready.devices)
        pid = client.pid
        request = ProfileRequest(client.new_id(), "(a + b).relu()", sizes=[1000], modes=["eager"], device="cpu", reps=3)

        async def gather() -> list[object]:
            return [event async for event in client.request(request)]

        events = await asyncio.wait_for(gather(), 120)
        (result,) = [e for e in events if isinstance(e, MeasurementResult)]
        assert result.measurement.kernels_per_call == 2 and isinstance(events[-1], RequestDone)
    finally:
        await client.close()
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_kernel_tui_worker_help_lists_the_workers_flags() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "tui", "worker", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "usage:" in done.stdout and "--stuck-s" in done.stdout
