"""The views the main screen opens over itself from the session's results: compare and roofline.

Compare: this chain vs the marked one, or eager vs the compile mode, side by side. Sides already
measured (the session's cache) show at once; the others are measured through the bridge, and the
compare screen receives their events itself. Eager vs compiled of one chain is a ratio: its two
sides show from the cache only when one request measured both, else both are measured again in
one request (a reading cached under other load would skew it). Roofline: every kernel on screen
under the roofs; the view follows the panes while it is on top.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probes.link.protocol import MODES, Measurement, ProfileRequest, RequestFailed
from probes.link.safe_text import inert_line
from tui import presenter

if TYPE_CHECKING:
    from tui.screens.compare import CompareScreen
    from tui.screens.main import MainScreen
    from tui.screens.roofline import RooflineScreen
    from tui.widgets.roofline_points import Roofs


class Comparisons:
    """Opens the compare and roofline views over ``screen``, fed from the session."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.live = screen.live
        self.session = screen.live.session
        self.roofline_view: RooflineScreen | None = None
        """The roofline view opened last: it follows the panes while it is on top."""

    def compare(self, marked: int | None) -> None:
        """The chain ``marked`` (in the chains pane) beside the current one, else eager vs compiled."""
        workspace = self.live.workspace
        if marked is not None and marked != workspace.current and marked < len(workspace.chains):
            self.compare_chains(marked)
        else:
            self.compare_modes()

    def compare_modes(self) -> CompareScreen | None:
        """The current chain, eager (left) vs the compile mode (right)."""
        compiled = self.live.workspace.compile_mode
        text = self.session.text
        return self._open(
            [(text, "eager", "left"), (text, compiled, "right")],
            f"compare · {self.live.workspace.chain.name}: eager vs {compiled}",
            one_chain=True,
        )

    def compare_chains(self, other: int) -> CompareScreen | None:
        """The current chain (left) vs chain ``other`` (right), in the last selected mode."""
        workspace = self.live.workspace
        mode = workspace.settings.modes[-1]
        chain = workspace.chains[other]
        return self._open(
            [(self.session.text, mode, "left"), (chain.text, mode, "right")],
            f"compare · {workspace.chain.name} vs {chain.name} ({mode})",
        )

    def _open(self, sides: list[tuple[str, str, str]], title: str, *, one_chain: bool = False) -> CompareScreen | None:
        from tui.screens.compare import CompareScreen, Side, side_label  # off start-up

        session = self.session
        if session.ready is None:
            self.screen.message("the worker is still starting; try again in a moment", "yellow")
            return None

        def label(text: str, m: Measurement | None, mode: str) -> str:
            return side_label(None if one_chain else text, m, mode)

        made: dict[str, Side] = {}
        wanted: dict[str, list[tuple[str, str]]] = {}
        (left_text, left_mode, _), (_, right_mode, _) = sides
        apart = one_chain and not session.measured_together(left_text, (left_mode, right_mode))
        for text, mode, which in sides:
            m = None if apart else session.cached(text, mode)
            made[which] = Side(label(text, m, mode), m, pending=m is None)
            if m is None:
                wanted.setdefault(text, []).append((mode, which))
        screen = CompareScreen(made["left"], made["right"], title, one_chain=one_chain)
        self.screen.app.push_screen(screen)
        s = self.live.workspace.settings
        from probes.chain.expr import ChainError, parse_chain  # off start-up

        for text, pairs in wanted.items():
            try:
                parse_chain(text)
            except ChainError as exc:
                for mode, which in pairs:
                    screen.update_side(
                        which, Side(label(text, None, mode), None, RequestFailed("", exc.info), pending=False)
                    )
                continue
            modes = [m for m in MODES if m in {mode for mode, _ in pairs}]
            request = ProfileRequest.of(session.new_id(), text, s, sizes=[s.focus_size], modes=modes)
            session.track(request, time.monotonic())
            screen.expect(request, pairs)
            self.live.fleet.send(request, (session.lead,), reply_to=screen)
        return screen

    def roofline_data(self) -> tuple[str, list[Measurement], Roofs]:
        """The title, the measurements on screen (every mode at N) and the roofs they sit under."""
        from tui.screens.roofline import roofline_title  # the roofline view: off start-up
        from tui.widgets.roofline_points import roofs

        focus = self.session.focus_view(time.monotonic())
        shown = [v.measurement for v in focus.modes if v.measurement is not None]
        found = roofs(shown, presenter.peak_gbps(self.session), presenter.compute_peaks(self.session))
        return roofline_title(inert_line(self.live.workspace.chain.name), shown, focus.stale), shown, found

    def roofline(self) -> None:
        from tui.screens.roofline import RooflineScreen  # the roofline view: off start-up

        if not isinstance(self.screen.app.screen, RooflineScreen):
            self.roofline_view = RooflineScreen(*self.roofline_data())
            self.screen.app.push_screen(self.roofline_view)

    def follow_roofline(self) -> None:
        """Called whenever the panes redraw: an open roofline view shows the same results."""
        if self.roofline_view is not None and self.screen.app.screen is self.roofline_view:
            self.roofline_view.show(*self.roofline_data())
