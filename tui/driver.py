"""The terminal driver: Textual's own, minus a wait for its input thread when the app quits, and
escape read together with tab taken as both keys."""

from __future__ import annotations

import signal
import sys

from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.app import App
from textual.driver import Driver
from textual.keys import Keys

ESCAPE_THEN_TAB = "\x1b\t"


def read_escape_then_tab() -> None:
    """Escape then tab typed fast (or read from one SSH packet) reach the app as ESC TAB, which
    Textual reads as shift+tab (what a few old terminals send for it; xterm, tmux, iTerm2, GNOME,
    kitty and Windows Terminal send ESC [ Z): leaving the editor and tabbing on moved the focus
    backwards. Read as escape, then tab (``tui.widgets.keys_in_order`` hands the tab to where
    escape moved the focus)."""
    ANSI_SEQUENCES_KEYS[ESCAPE_THEN_TAB] = (Keys.Escape, Keys.Tab)


def quick_exit_driver(app: App) -> type[Driver]:
    """On POSIX terminals, ``QuickExitDriver``; elsewhere whatever Textual would pick."""
    read_escape_then_tab()
    if sys.platform == "win32":
        return App.get_driver_class(app)
    from textual.drivers.linux_driver import LinuxDriver  # noqa: PLC0415 (POSIX only)

    class QuickExitDriver(LinuxDriver):
        """Textual's input thread polls stdin every 0.1 s, and once told to stop it makes one more
        0.1 s poll with nothing left to watch; ``disable_input`` joins it, which added 100-200 ms
        to every quit (issue 12). When the app is shutting down nothing more will be read: the
        thread is told to stop and finishes by itself while the terminal is restored (the process
        ends with ``os._exit`` right after). Suspending still waits for it, as Textual does."""

        def disable_input(self) -> None:
            if self._app.is_running or self.exit_event.is_set():
                super().disable_input()
                return
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
            self._disable_mouse_support()
            self.exit_event.set()

    return QuickExitDriver
