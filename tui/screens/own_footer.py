"""A footer of its own for each screen over the main one (help, details, dialogs, the palette).

The main screen's footer stays drawn under a modal screen, so it offered keys that do nothing
there (``s Sweep`` under the help screen). A screen with ``OwnFooter`` shows a footer of its own,
over that one, with the keys that work on it: its own bindings, and none of the main screen's
(the main screen binds those: they are off while a screen is over it).
"""

from __future__ import annotations

from textual.command import CommandPalette
from textual.screen import Screen
from textual.widgets import Footer


class OwnFooter:
    """Mix into a screen over the main one, before its Textual base."""

    def on_mount(self) -> None:
        assert isinstance(self, Screen)
        self.mount(Footer(compact=True, show_command_palette=False))


class Palette(OwnFooter, CommandPalette):
    """Textual's command palette, with a footer of its own: ``esc`` closes it."""
