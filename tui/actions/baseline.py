"""Baseline actions: pin the current chain's result, unpin it, compare the result with its pin.

The pin lives in the workspace (one per chain, by name); the kernel pane's headline and the sweep
show every later result of the chain against it (``tui.baseline_view``).
"""

from __future__ import annotations

import time

from probes.link.protocol import Measurement
from probes.link.summary import format_size
from tui import presenter
from tui.actions.host import AppHost
from tui.baseline_view import pin_record, read_pin


class BaselineActions(AppHost):
    _pin_cache: tuple[int, list[Measurement]] | None = None

    def pinned(self) -> list[Measurement] | None:
        """The current chain's pin (None: not pinned; a pin that cannot be read is dropped, said)."""
        name = self.workspace.chain.name
        record = self.workspace.pins.get(name)
        if record is None:
            return None
        if self._pin_cache is not None and self._pin_cache[0] == id(record):
            return self._pin_cache[1]
        try:
            pinned = read_pin(record)
        except ValueError as exc:
            del self.workspace.pins[name]
            self.schedule_save()
            self.message(f"the pin of {name} could not be read ({exc}): dropped", "yellow")
            return None
        self._pin_cache = (id(record), pinned)
        return pinned

    def action_pin(self) -> None:
        results = presenter.current_results(self.session, time.monotonic())
        name = self.workspace.chain.name
        if not results:
            self.message("nothing measured for this text yet: nothing to pin", "yellow")
            return
        if self.still_timing(results, "pin"):
            return
        self.workspace.pins[name] = pin_record(results)
        self.schedule_save()
        sizes = sorted({m.size for m in results})
        self.message(
            f"pinned {name}: {len(results)} results ({', '.join(format_size(n) for n in sizes[:5])}); "
            "later results show their deltas, u unpins",
            "green",
        )
        self.render_panes()

    def action_unpin(self) -> None:
        name = self.workspace.chain.name
        if self.workspace.pins.pop(name, None) is None:
            self.message(f"{name} has no pin (p pins the result on screen)")
            return
        self.schedule_save()
        self.message(f"unpinned {name}")
        self.render_panes()

    def action_compare_pin(self) -> None:
        """The pinned result (left) and the current one (right), in the last mode shown, at N."""
        from tui.screens.compare import CompareScreen, Side, side_label  # off start-up

        pinned = self.pinned()
        if not pinned:
            self.message("this chain has no pin: p pins the result on screen", "yellow")
            return
        s = self.workspace.settings
        mode = s.modes[-1]
        now = self.session.cached(self.session.text, mode)
        same = [m for m in pinned if m.mode == mode and m.size == s.focus_size]
        base = next(
            (m for m in same if now is None or (m.device, m.dtype, m.grad) == (now.device, now.dtype, now.grad)), None
        )
        if base is None:
            self.message(f"the pin has no {mode} result at N={format_size(s.focus_size)} ({s.dtype})", "yellow")
            return
        left = Side("pin: " + side_label(base.chain, base, mode), base, pending=False)
        right = Side("now: " + side_label(self.session.text, now, mode), now, pending=False)
        self.push_screen(CompareScreen(left, right, f"compare · {self.workspace.chain.name}: pinned vs now ({mode})"))
