"""What the action mixins may use of the app: Textual's ``App`` and the members declared here.

Each mixin of ``tui.actions`` is typed against ``AppHost`` and never imports ``tui.app``, which
composes them into ``KernelTuiApp``: the type checker checks every mixin against this one
declaration, and checks the app against each mixin it inherits. At run time ``AppHost`` is
``object``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.app import App

    from probes.link.protocol import Measurement
    from probes.link.settings import Settings
    from tui.bridge import WorkerBridge
    from tui.screens.compare import CompareScreen
    from tui.session import Effect, LiveSession
    from tui.workspace import Workspace
    from tui.workspace_file import WorkspaceFile


class AppState(Protocol):
    """The app's own state and helpers that the actions share."""

    session: LiveSession
    workspace: Workspace
    store: WorkspaceFile
    bridge: WorkerBridge
    export_dir: Path
    unsaved: bool
    """Edits not written to the workspace file yet (read-only, a failed save, or not yet due)."""
    autosave: bool
    marked: int | None
    """The chain marked for compare (space in the chains pane)."""

    @property
    def closing(self) -> bool: ...

    def message(self, text: str, style: str = "", *, of_text: bool = False) -> None: ...

    def forget_text_message(self) -> None: ...

    def apply(self, effects: list[Effect]) -> None: ...

    def render_panes(self) -> None: ...

    def settings_changed(self, what: str, settings: Settings) -> None: ...

    def still_timing(self, results: list[Measurement], then: str) -> bool: ...

    def schedule_save(self) -> None: ...

    def save_workspace(self) -> bool: ...

    def begin_shutdown(self) -> None: ...

    def retry_link(self) -> None: ...

    def show_chains(self) -> None: ...

    def open_chain(self, index: int) -> None: ...

    def compare_chains(self, other: int) -> CompareScreen | None: ...

    def show_view(self, view: str) -> None: ...

    def pinned(self) -> list[Measurement] | None: ...


if TYPE_CHECKING:

    class AppHost(App[int], AppState):
        """The app as its action mixins see it."""

else:
    AppHost = object
