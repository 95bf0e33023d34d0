"""The main screen's live loop: the session's effects carried out, and its state drawn.

The session (``tui.session.LiveSession``) is pure: it returns effects (send, cancel, wake up,
say). ``LiveLoop.apply`` carries them out (through the bridge, a timer, the status bar), then
gives the panes their new state (``render_panes``, derived by ``tui.presenter``).

The panes are drawn once per turn of the event loop, after it: a draw (the panes' state, then
Textual's layout of the screen) takes 10-40 ms of the app's one thread. Drawn at once, an edit's
draw would run before the bridge's task writes the request it just sent, so the worker would
start that much later; and a run's steps, which arrive together, would each be drawn before the
next message, its rows among them, is read. Drawn after the turn, the request is out first and
the messages already queued are taken into the session and drawn in one go.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual.timer import Timer
from textual.widgets import TextArea

from probes.link.protocol import ProfileRequest
from tui import presenter
from tui.debug_log import log_error
from tui.session import Cancel, Effect, Notice, Send, WakeAt
from tui.widgets.workbench import Workbench

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


class LiveLoop:
    """Carries out the session's effects on ``screen`` and draws its state there."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.live = screen.live
        self.session = screen.live.session
        self._wake: Timer | None = None
        self._draw_due = False

    def apply(self, effects: list[Effect]) -> None:
        """Carry out what the session asks for, then show its new state."""
        if self.live.closing:
            return
        for effect in effects:
            if isinstance(effect, Send):
                if isinstance(effect.request, ProfileRequest):
                    self.live.trust.add(effect.request.chain)  # it ran here: next time it runs by itself
                self.live.fleet.send(effect.request, effect.entries)
            elif isinstance(effect, Cancel):
                self.live.fleet.cancel(effect.request_id)
            elif isinstance(effect, WakeAt):
                if self._wake is not None:
                    self._wake.stop()
                # Never a 0 s timer: Textual divides by the interval when the loop runs late.
                self._wake = self.screen.set_timer(max(0.001, effect.when - time.monotonic()), self._woken)
            elif isinstance(effect, Notice):
                frozen = self.live.frozen
                took = f" in {effect.elapsed_s:.1f} s" if effect.elapsed_s is not None and not frozen else ""
                self.screen.message(effect.text + took, effect.style, of_text=effect.of_text)
        self.render_panes()

    def _woken(self) -> None:
        self._wake = None
        self.apply(self.session.tick(time.monotonic()))

    def render_panes(self) -> None:
        """Give every pane its state from the session (each renders itself) once this turn of the
        event loop is over (see the module's docstring); asked again meanwhile, it still draws once."""
        if self._draw_due or self.live.closing:
            return
        self._draw_due = True
        asyncio.get_running_loop().call_soon(self._draw)

    def _draw(self) -> None:
        """A bug in a pane is logged and said on screen; the app and what was typed survive it."""
        self._draw_due = False
        if self.live.closing:
            return
        try:
            self._render_panes()
        except Exception as exc:  # logged and shown, never silent
            where = log_error(self.live, "internal error drawing the panes", exc)
            self.screen.message(
                f"internal error drawing the panes: {exc!r}" + (f" (details in {where})" if where else ""), "bold red"
            )

    def _render_panes(self) -> None:
        screen = self.screen
        panes = presenter.panes(
            self.session,
            name=screen.source.label() or self.live.workspace.chain.name,
            chart=self.live.workspace.chart,
            pinned=screen.pins.pinned(),
            now=time.monotonic(),
            in_editor=isinstance(screen.focused, TextArea),
            read_only=self.live.store.read_only is not None,
        )
        bench = screen.query_one(Workbench)
        bench.show(panes)
        screen.comparisons.follow_roofline()
        screen.status.set(settings=panes.settings)
        self.tick_clock(spin=False)
        bench.relayout()

    def tick_clock(self, *, spin: bool = True) -> None:
        """What runs now, with its elapsed time (a ticking clock and a spinner while it runs)."""
        if self.live.closing:
            return
        activity, elapsed = presenter.activity_status(self.session, time.monotonic(), frozen=self.live.frozen)
        bar = self.screen.status
        bar.set(activity=activity, elapsed=elapsed, spin=bar.info.spin + (spin and bool(elapsed)))
