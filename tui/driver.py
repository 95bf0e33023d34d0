"""The terminal driver: Textual's own, minus a wait for its input thread when the app quits."""

from __future__ import annotations

import signal
import sys

from textual.app import App
from textual.driver import Driver


def quick_exit_driver(app: App) -> type[Driver]:
    """On POSIX terminals, ``QuickExitDriver``; elsewhere whatever Textual would pick."""
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
