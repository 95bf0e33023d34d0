"""Source actions: a function of the user's own file, shown read-only and measured on each save.

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

from textual.timer import Timer

from probes.link.protocol import SourceRef
from probes.link.safe_text import inert_line
from tui.actions.host import AppHost
from tui.source_file import FileWatch, local_path, source_view
from tui.widgets.editor import ChainEditor
from tui.workspace import SourceEntry

POLL_S = 0.02
"""How often the file is looked at: a stat per watched file (a hash only when it changed)."""
ON_WORKER = "on the worker machine"


def source_key(ref: SourceRef, version: str) -> str:
    """The session's text for one version of the file: each version is measured (and cached) apart."""
    return f"{ref.label}  # version {version}"


class SourceActions(AppHost):
    source_watch: FileWatch | None = None
    source_text: str | None = None
    """What the editor shows for the source (its own load of it is no edit)."""
    _source_poll: Timer | None = None

    def open_source(self, ref: SourceRef, *, confirmed: bool) -> None:
        """Show ``ref``'s block and measure it: at once when ``confirmed`` (named on the command
        line, or confirmed in the dialog), else once the user confirms it in the dialog."""
        if not confirmed:
            self.confirm_source(ref)
            return
        self.workspace.source = SourceEntry(ref.path, ref.name, list(ref.inputs))
        self.schedule_save()
        self.session.source = ref
        path = local_path(ref)
        self.source_watch = FileWatch(path) if path.is_file() else None
        self.show_source()
        if self._source_poll is None:
            self._source_poll = self.set_interval(POLL_S, self.poll_source)
        self.measure_source_version()

    def confirm_source(self, ref: SourceRef) -> None:
        """Ask before running a file the user did not name on this command line (the path in full)."""
        from tui.screens.dialogs import RunFileDialog  # dialogs: off start-up

        def answered(yes: bool | None) -> None:
            if yes:
                self.open_source(ref, confirmed=True)
            else:
                self.message(f"not run: {inert_line(ref.label)} (the chains are as they were)", "yellow")

        self.push_screen(RunFileDialog(ref), answered)

    def show_source(self) -> None:
        """The block's source in the editor, read-only (or why it cannot be shown)."""
        ref = self.session.source
        if ref is None:
            return
        view = source_view(ref)
        editor = self.query_one(ChainEditor)
        editor.read_only = True
        editor.line_number_start = view.first_line  # the file's own line numbers, as its errors give
        self.source_text = view.text
        if editor.text != view.text:
            editor.set_text(view.text)
        if view.problem:
            self.message(f"{inert_line(ref.label)}: {inert_line(view.problem)}", "yellow", of_text=True)

    def measure_source_version(self) -> None:
        """Measure the file's current version, as an edit of a chain is measured."""
        ref = self.session.source
        if ref is None:
            return
        version = self.source_watch.version if self.source_watch is not None else ON_WORKER
        self.apply(self.session.edit(source_key(ref, version), time.monotonic()))
        self.session.why_stale = "the file changed"

    def poll_source(self) -> None:
        """A save of the file or of a module it imports from its folder: shown and measured."""
        watch = self.source_watch
        if watch is None or self.session.source is None or not watch.poll():
            return
        self.forget_text_message()  # the last version's error, gone with it
        self.show_source()
        self.measure_source_version()

    def source_label(self) -> str | None:
        """What the editor's border names in source mode: the file, the name, read-only (short: the
        editor is a third of the screen's width; typing in it says where to edit)."""
        ref = self.session.source
        return None if ref is None else f"{Path(ref.path).name}:{ref.name} · read-only"

    def on_chain_editor_typed_read_only(self) -> None:
        ref = self.session.source
        if ref is not None:
            where = Path(ref.path).name
            self.message(f"read-only: edit {inert_line(where)} in your own editor; each save is measured here")

    def leave_source(self) -> None:
        """Back to the workspace's chains (another chain opened)."""
        self.session.source = None
        self.source_watch = None
        self.source_text = None
        if self._source_poll is not None:
            self._source_poll.stop()
            self._source_poll = None
        editor = self.query_one(ChainEditor)
        editor.read_only = False
        editor.line_number_start = 1

    def action_open_workspace_source(self) -> None:
        """Run the file the workspace remembers, once confirmed."""
        entry = self.workspace.source
        if entry is None:
            self.message("the workspace remembers no file: start with kernel-tui model.py:block")
            return
        self.open_source(SourceRef(entry.path, entry.name, list(entry.inputs)), confirmed=False)
