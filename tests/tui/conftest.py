"""Fixtures for the app's tests: an isolated state dir and an app wired to the replay worker."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tui_helpers import SEED_CHAIN, TEST_TIMING, replay_command

from probes.link.settings import Settings


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Never touch the user's real workspace or caches; and no test may leave an internal error
    in the debug log (the app survives one, so a test would not notice otherwise). The app draws
    in true colour, as on most terminals, whatever terminal the tests run in."""
    state = tmp_path / "state"
    monkeypatch.setenv("COLORTERM", "truecolor")  # whatever TERM says here (the 16-colour tests set their own)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("KERNEL_TUI_STATE_DIR", str(state))
    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path / "cache"))
    yield state
    log = state / "debug.log"
    if log.exists():
        assert "internal error" not in log.read_text(), log.read_text()


SETTINGS = {f.name for f in dataclasses.fields(Settings)}


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., object]:
    """An app wired to the replay worker, with a frozen clock and exports under tmp_path."""
    from tui.app import KernelTuiApp

    def factory(**kwargs: object) -> KernelTuiApp:
        """``make_app(device="cpu", focus_size=1000)``: the settings by name, as the command line
        gives them (``Settings``' fields); every other argument is the app's."""
        settings = {name: kwargs.pop(name) for name in SETTINGS if name in kwargs}
        kwargs.setdefault("settings", settings)
        kwargs.setdefault("chain", SEED_CHAIN)
        kwargs.setdefault("worker_command", replay_command())
        kwargs.setdefault("frozen", True)
        kwargs.setdefault("highlight", False)
        kwargs.setdefault("export_dir", tmp_path / "exports")
        kwargs.setdefault("workspace_path", tmp_path / "workspace.json")
        kwargs.setdefault("timing", TEST_TIMING)
        return KernelTuiApp(**kwargs)

    return factory
