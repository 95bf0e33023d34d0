"""The roofline action: open the roofline view of the current chain, and keep it up to date."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probes.protocol import Measurement
from tui.screens.roofline import RooflineScreen, roofline_title
from tui.widgets.roofline_points import Roofs, roofs

if TYPE_CHECKING:
    from tui.app import KernelTuiApp as _App
else:
    _App = object


class RooflineActions(_App):
    def roofline_data(self) -> tuple[str, list[Measurement], Roofs]:
        """The title, the measurements on screen (every mode at N) and the roofs they sit under."""
        focus = self.session.focus_view(time.monotonic())
        shown = [v.measurement for v in focus.modes if v.measurement is not None]
        ready = self.session.ready
        device = next((d for d in ready.devices if d.name == self.session.device), None) if ready else None
        found = roofs(shown, self.peak_gbps(), device.compute_peaks_tflops if device else {})
        return roofline_title(self.session.text, shown, focus.stale), shown, found

    def action_roofline(self) -> None:
        if not isinstance(self.screen, RooflineScreen):
            self.push_screen(RooflineScreen(*self.roofline_data()))

    def follow_roofline(self) -> None:
        """Called whenever the panes redraw: an open roofline view shows the same results."""
        if isinstance(self.screen, RooflineScreen):
            self.screen.show(*self.roofline_data())
