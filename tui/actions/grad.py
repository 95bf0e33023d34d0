"""The grad setting: measure forward + backward, or the forward pass alone.

A setting like the dtype: it persists in the workspace, and changing it re-measures what no longer
matches (the session keys its cache by it, so switching back shows the earlier rows at once).
"""

from __future__ import annotations

import dataclasses

from tui.actions.host import AppHost


class GradActions(AppHost):
    def action_toggle_grad(self) -> None:
        self.set_grad(not self.workspace.settings.grad)

    def set_grad(self, on: bool) -> None:
        what = "grad: forward + backward" if on else "grad: forward only"
        self.settings_changed(what, dataclasses.replace(self.workspace.settings, grad=on))
