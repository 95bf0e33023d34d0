"""Every use of a private Textual name, in one place.

Each function here reaches past Textual's public API for a reason its docstring gives, names the
Textual versions it was checked on, and falls back on the plain public path where the private
name is missing (a later Textual may move it): the app then works as Textual's own, only slower
or with the one nuisance the function works around. pyproject allows Textual >=8.2,<9; a new
version is checked by ``tests/tui/test_textual_compat.py``, which fails when a name has gone.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import MutableMapping
from typing import Any

from rich.console import ConsoleRenderable
from textual.app import App
from textual.driver import Driver
from textual.keys import Keys
from textual.widget import Widget

CHECKED_ON = ("8.2.8",)
"""The Textual versions every function here was checked on."""


def ansi_sequence_keys() -> MutableMapping[str, Any] | None:
    """Textual's table of terminal sequences to keys (``textual._ansi_sequences``; checked on
    Textual 8.2.8), or None where it is gone."""
    try:
        from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    except ImportError:
        return None
    return ANSI_SEQUENCES_KEYS if isinstance(ANSI_SEQUENCES_KEYS, MutableMapping) else None


def read_sequence_as_keys(sequence: str, *keys: Keys) -> bool:
    """Make Textual read ``sequence`` as ``keys``, one after the other (a private table; checked
    on Textual 8.2.8). False, and Textual's own reading, where the table is gone."""
    table = ansi_sequence_keys()
    if table is None:
        return False
    table[sequence] = tuple(keys)
    return True


def can_set_border_text_quietly(widget: Widget) -> bool:
    """Whether ``set_border_text_quietly`` can store a border text without Textual's repaint."""
    return hasattr(widget, "_border_title") and hasattr(widget, "_border_subtitle")


def set_border_text_quietly(widget: Widget, which: str, text: str) -> bool:
    """Store ``text`` as ``widget``'s ``border_title`` or ``border_subtitle`` (``which``) as
    Textual's setter stores it (its private ``_border_title`` / ``_border_subtitle``; checked on
    Textual 8.2.8), without the setter's repaint of the whole widget, so that the caller can
    repaint the border's row alone. False, and the public setter, where the private name is gone."""
    if which not in ("border_title", "border_subtitle"):
        raise ValueError(f"not a border text: {which}")
    if not can_set_border_text_quietly(widget):
        setattr(widget, which, text)
        return False
    setattr(widget, f"_{which}", widget.render_str(text).expand_tabs(4).split()[0])
    return True


def quick_exit_driver(app: App[Any]) -> type[Driver] | None:
    """Textual's POSIX driver, minus a wait for its input thread when the app quits; None off
    POSIX or where the driver's internals it relies on are gone (checked on Textual 8.2.8).

    Textual's input thread polls stdin every 0.1 s, and once told to stop it makes one more
    0.1 s poll with nothing left to watch; ``disable_input`` joins it, which adds 0.1-0.2 s to
    every quit. When the app is shutting down nothing more will be read: the thread is told to
    stop and finishes by itself while the terminal is restored (the process exits right after).
    Suspending still waits for it, as Textual does. Uses the driver's ``exit_event`` and its
    private ``_disable_mouse_support``."""
    if sys.platform == "win32":
        return None
    from textual.drivers.linux_driver import LinuxDriver

    if not hasattr(LinuxDriver, "_disable_mouse_support"):
        return None

    class QuickExitDriver(LinuxDriver):
        def disable_input(self) -> None:
            exit_event = getattr(self, "exit_event", None)
            if app.is_running or exit_event is None or exit_event.is_set():
                super().disable_input()
                return
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
            self._disable_mouse_support()
            exit_event.set()

    return QuickExitDriver


def whole_screen(app: App[Any]) -> ConsoleRenderable | None:
    """The whole screen as the terminal gets it, the screens under a modal one included and the
    app's line filters applied: what ``App.export_screenshot`` prints, for a picture in the
    terminal's own colours (``tui.screenshot --colours 16``) and the contrast test. Uses the
    screen's private ``_compositor`` and the app's ``_background_screens`` (checked on Textual
    8.2.8); None where they are gone (the caller takes Textual's own screenshot)."""
    compositor = getattr(app.screen, "_compositor", None)
    if compositor is None or not hasattr(app, "_background_screens"):
        return None
    update: ConsoleRenderable = compositor.render_update(full=True, screen_stack=app._background_screens)
    return update
