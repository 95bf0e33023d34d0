"""Pins: the current chain's result pinned, unpinned, and compared with what is measured now.

The pin lives in the workspace (one per chain, by name); the kernel pane's headline and the sweep
show every later result of the chain against it (``tui.baseline_view``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probes.link.protocol import Measurement
from probes.link.summary import format_size
from tui import presenter
from tui.baseline_view import pin_record, read_pin

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


def still_timing(screen: MainScreen, results: list[Measurement], then: str) -> bool:
    """Whether any of ``results`` still has its wall time being timed (said, with what to do
    ``then``): what keeps or writes figures for good waits the moment it takes."""
    timing = [m.mode for m in results if m.wall_pending]
    if timing:
        screen.message(f"{', '.join(timing)}: its wall time is being timed; {then} in a moment", "yellow")
    return bool(timing)


class Pins:
    """The workspace's pins as the main screen's keys use them (p, u, w)."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.live = screen.live
        self._cache: tuple[int, list[Measurement]] | None = None

    def pinned(self) -> list[Measurement] | None:
        """The current chain's pin (None: not pinned; a pin that cannot be read is dropped, said)."""
        workspace = self.live.workspace
        name = workspace.chain.name
        record = workspace.pins.get(name)
        if record is None:
            return None
        if self._cache is not None and self._cache[0] == id(record):
            return self._cache[1]
        try:
            pinned = read_pin(record)
        except ValueError as exc:
            del workspace.pins[name]
            self.live.schedule_save()
            self.screen.message(f"the pin of {name} could not be read ({exc}): dropped", "yellow")
            return None
        self._cache = (id(record), pinned)
        return pinned

    def pin(self) -> None:
        results = presenter.current_results(self.live.session, time.monotonic())
        name = self.live.workspace.chain.name
        if not results:
            self.screen.message("nothing measured for this text yet: nothing to pin", "yellow")
            return
        if still_timing(self.screen, results, "pin"):
            return
        self.live.workspace.pins[name] = pin_record(results)
        self.live.schedule_save()
        sizes = sorted({m.size for m in results})
        self.screen.message(
            f"pinned {name}: {len(results)} results ({', '.join(format_size(n) for n in sizes[:5])}); "
            "later results show their deltas, u unpins",
            "green",
        )
        self.screen.loop.render_panes()

    def unpin(self) -> None:
        name = self.live.workspace.chain.name
        if self.live.workspace.pins.pop(name, None) is None:
            self.screen.message(f"{name} has no pin (p pins the result on screen)")
            return
        self.live.schedule_save()
        self.screen.message(f"unpinned {name}")
        self.screen.loop.render_panes()

    def compare(self) -> None:
        """The pinned result (left) and the current one (right), in the last mode shown, at N."""
        from tui.screens.compare import CompareScreen, Side, side_label  # off start-up

        pinned = self.pinned()
        if not pinned:
            self.screen.message("this chain has no pin: p pins the result on screen", "yellow")
            return
        session, s = self.live.session, self.live.workspace.settings
        mode = s.modes[-1]
        now = session.cached(session.text, mode)
        same = [m for m in pinned if m.mode == mode and m.size == s.focus_size]
        base = next(
            (m for m in same if now is None or (m.device, m.dtype, m.grad) == (now.device, now.dtype, now.grad)), None
        )
        if base is None:
            self.screen.message(f"the pin has no {mode} result at N={format_size(s.focus_size)} ({s.dtype})", "yellow")
            return
        left = Side("pin: " + side_label(base.chain, base, mode), base, pending=False)
        right = Side("now: " + side_label(session.text, now, mode), now, pending=False)
        title = f"compare · {self.live.workspace.chain.name}: pinned vs now ({mode})"
        self.screen.app.push_screen(CompareScreen(left, right, title))
