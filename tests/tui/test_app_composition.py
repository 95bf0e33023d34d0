"""The app is a composition: its behaviour lives in the screens and panes it shows, not in bases."""

from __future__ import annotations


def test_the_app_inherits_from_no_class_of_the_project_but_itself() -> None:
    from tui.app import KernelTuiApp

    assert [c for c in KernelTuiApp.__mro__ if c.__module__.startswith("tui")] == [KernelTuiApp]


def test_every_palette_command_has_an_owner_that_runs_it() -> None:
    """Each command of the table is an action of the app, the main screen or the chains pane."""
    from tui.app import KernelTuiApp
    from tui.commands import COMMANDS
    from tui.screens.main import MainScreen
    from tui.widgets.chains_pane import ChainsPane

    owners = (KernelTuiApp, MainScreen, ChainsPane)
    missing = [c.action for c in COMMANDS if c.palette and not any(hasattr(o, f"action_{c.action}") for o in owners)]
    assert missing == []
