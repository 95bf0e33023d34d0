"""Fixtures for the app's tests: an isolated state dir and an app wired to the replay worker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tui_helpers import SEED_CHAIN, TEST_TIMING, replay_command


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


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., object]:
    """An app wired to the replay worker, with a frozen clock and exports under tmp_path."""
    from tui.app import KernelTuiApp

    def factory(**kwargs: object) -> KernelTuiApp:
        kwargs.setdefault("chain", SEED_CHAIN)
        kwargs.setdefault("worker_command", replay_command())
        kwargs.setdefault("frozen", True)
        kwargs.setdefault("highlight", False)
        kwargs.setdefault("export_dir", tmp_path / "exports")
        kwargs.setdefault("workspace_path", tmp_path / "workspace.json")
        kwargs.setdefault("timing", TEST_TIMING)
        return KernelTuiApp(**kwargs)

    return factory
