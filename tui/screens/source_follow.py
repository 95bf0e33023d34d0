"""A function of the user's own file on the main screen: shown read-only, measured on each save.

``kernel-tui model.py:block --input 'x: [N, 64]'`` opens the app on the file: the editor shows the
block's source (read as text and parsed with ``ast`` by ``tui.source_file``, never run here), and
a timer polls the file and its same-folder imports. A save goes through the same path as an edit of
a chain (``LiveSession.edit``, eager rows first, compiled after): the session's text names the
file's version, so each version has rows of its own and the last ones stay, stale, while the new
ones come or when the new version fails.

Trust: a file runs because the user named it on the command line, or confirmed it in a dialog that
shows its path in full. The workspace remembers the last file; opening the workspace offers it in
that dialog and runs nothing until it is confirmed. The code runs only in the worker.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from textual.timer import Timer

from probes.link.protocol import SourceRef
from probes.link.safe_text import inert_line
from tui.source_file import FileWatch, local_path, source_view
from tui.widgets.editor import ChainEditor
from tui.workspace import SourceEntry

if TYPE_CHECKING:
    from tui.screens.main import MainScreen

POLL_S = 0.02
"""How often the file is looked at: a stat per watched file (a hash only when it changed)."""
ON_WORKER = "on the worker machine"


def source_key(ref: SourceRef, version: str) -> str:
    """The session's text for one version of the file: each version is measured (and cached) apart."""
    return f"{ref.label}  # version {version}"


class SourceFollow:
    """The file the main screen shows and measures (the session's ``source``), and its watch."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.session = screen.live.session
        self.watch: FileWatch | None = None
        self.text: str | None = None
        """What the editor shows for the source (its own load of it is no edit)."""
        self._poll: Timer | None = None

    def open(self, ref: SourceRef, *, confirmed: bool) -> None:
        """Show ``ref``'s block and measure it: at once when ``confirmed`` (named on the command
        line, or confirmed in the dialog), else once the user confirms it in the dialog."""
        if not confirmed:
            self.confirm(ref)
            return
        live = self.screen.live
        live.workspace.source = SourceEntry(ref.path, ref.name, list(ref.inputs))
        live.schedule_save()
        self.session.source = ref
        path = local_path(ref)
        self.watch = FileWatch(path) if path.is_file() else None
        self.show()
        if self._poll is None:
            self._poll = self.screen.set_interval(POLL_S, self.poll)
        self.measure_version()

    def open_remembered(self) -> None:
        """Run the file the workspace remembers, once confirmed."""
        entry = self.screen.live.workspace.source
        if entry is None:
            self.screen.message("the workspace remembers no file: start with kernel-tui model.py:block")
            return
        self.open(SourceRef(entry.path, entry.name, list(entry.inputs)), confirmed=False)

    def confirm(self, ref: SourceRef) -> None:
        """Ask before running a file the user did not name on this command line (the path in full)."""
        from tui.screens.dialogs import RunFileDialog  # dialogs: off start-up

        def answered(yes: bool | None) -> None:
            if yes:
                self.open(ref, confirmed=True)
            else:
                self.screen.message(f"not run: {inert_line(ref.label)} (the chains are as they were)", "yellow")

        self.screen.app.push_screen(RunFileDialog(ref), answered)

    def show(self) -> None:
        """The block's source in the editor, read-only (or why it cannot be shown)."""
        ref = self.session.source
        if ref is None:
            return
        view = source_view(ref)
        editor = self.screen.query_one(ChainEditor)
        editor.read_only = True
        editor.line_number_start = view.first_line  # the file's own line numbers, as its errors give
        self.text = view.text
        if editor.text != view.text:
            editor.set_text(view.text)
        if view.problem:
            self.screen.message(f"{inert_line(ref.label)}: {inert_line(view.problem)}", "yellow", of_text=True)

    def measure_version(self) -> None:
        """Measure the file's current version, as an edit of a chain is measured."""
        ref = self.session.source
        if ref is None:
            return
        version = self.watch.version if self.watch is not None else ON_WORKER
        self.screen.loop.apply(self.session.edit(source_key(ref, version), time.monotonic()))
        self.session.why_stale = "the file changed"

    def poll(self) -> None:
        """A save of the file or of a module it imports from its folder: shown and measured."""
        watch = self.watch
        if watch is None or self.session.source is None or not watch.poll():
            return
        self.screen.status.forget_text_message()  # the last version's error, gone with it
        self.show()
        self.measure_version()

    def label(self) -> str | None:
        """What the editor's border names in source mode: the file, the name, read-only (short: the
        editor is a third of the screen's width; typing in it says where to edit)."""
        ref = self.session.source
        return None if ref is None else f"{Path(ref.path).name}:{ref.name} · read-only"

    def typed_read_only(self) -> None:
        ref = self.session.source
        if ref is not None:
            where = Path(ref.path).name
            self.screen.message(f"read-only: edit {inert_line(where)} in your own editor; each save is measured here")

    def leave(self) -> None:
        """Back to the workspace's chains (another chain opened)."""
        self.session.source = None
        self.watch = None
        self.text = None
        if self._poll is not None:
            self._poll.stop()
            self._poll = None
        editor = self.screen.query_one(ChainEditor)
        editor.read_only = False
        editor.line_number_start = 1
