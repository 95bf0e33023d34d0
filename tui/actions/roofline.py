"""The roofline action: open the roofline view of the current chain, and keep it up to date."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probes.link.protocol import Measurement
from probes.link.safe_text import inert_line
from tui import presenter
from tui.actions.host import AppHost

if TYPE_CHECKING:
    from tui.screens.roofline import RooflineScreen
    from tui.widgets.roofline_points import Roofs


class RooflineActions(AppHost):
    roofline_view: RooflineScreen | None = None
    """The roofline view opened last: it follows the panes while it is on top."""

    def roofline_data(self) -> tuple[str, list[Measurement], Roofs]:
        """The title, the measurements on screen (every mode at N) and the roofs they sit under."""
        from tui.screens.roofline import roofline_title  # the roofline view: off start-up
        from tui.widgets.roofline_points import roofs

        focus = self.session.focus_view(time.monotonic())
        shown = [v.measurement for v in focus.modes if v.measurement is not None]
        found = roofs(shown, presenter.peak_gbps(self.session), presenter.compute_peaks(self.session))
        return roofline_title(inert_line(self.workspace.chain.name), shown, focus.stale), shown, found

    def action_roofline(self) -> None:
        from tui.screens.roofline import RooflineScreen  # the roofline view: off start-up

        if not isinstance(self.screen, RooflineScreen):
            self.roofline_view = RooflineScreen(*self.roofline_data())
            self.push_screen(self.roofline_view)

    def follow_roofline(self) -> None:
        """Called whenever the panes redraw: an open roofline view shows the same results."""
        if self.roofline_view is not None and self.screen is self.roofline_view:
            self.roofline_view.show(*self.roofline_data())
