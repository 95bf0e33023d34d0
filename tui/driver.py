"""The terminal driver: Textual's own, minus a wait for its input thread when the app quits (a
fast path: ``probes.link.fast_paths``), and escape read together with tab taken as both keys."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.driver import Driver
from textual.keys import Keys

from probes.link import fast_paths
from tui import textual_compat

ESCAPE_THEN_TAB = "\x1b\t"


def read_escape_then_tab() -> None:
    """Escape then tab typed fast (or read from one SSH packet) reach the app as ESC TAB, which
    Textual reads as shift+tab (what a few old terminals send for it; xterm, tmux, iTerm2, GNOME,
    kitty and Windows Terminal send ESC [ Z): leaving the editor and tabbing on would move the
    focus backwards. Read as escape, then tab (``tui.widgets.keys_in_order`` hands the tab to
    where escape moved the focus). A fix of what the keys mean, not a fast path: always on."""
    textual_compat.read_sequence_as_keys(ESCAPE_THEN_TAB, Keys.Escape, Keys.Tab)


def driver_class(app: App[Any]) -> type[Driver]:
    """The driver for ``app``: the quick-exit driver where fast paths are on and it can be had
    (``tui.textual_compat.quick_exit_driver``, for a faster quit), else Textual's own choice."""
    read_escape_then_tab()
    quick = textual_compat.quick_exit_driver(app) if fast_paths.enabled("quick_quit") else None
    return quick or App.get_driver_class(app)
