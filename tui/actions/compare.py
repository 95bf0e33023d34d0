"""Compare actions: this chain vs the marked one, or eager vs the compile mode, side by side.

Sides already measured (the session's cache) show at once; the others are measured through the
bridge, and the compare screen receives their events itself. Eager vs compiled of one chain is a
ratio: its two sides show from the cache only when one request measured both, else both are
measured again in one request (a reading cached under other load would skew it).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probes.chain.expr import ChainError, parse_chain
from probes.link.protocol import MODES, Measurement, ProfileRequest, RequestFailed
from tui.actions.host import AppHost

if TYPE_CHECKING:
    from tui.screens.compare import CompareScreen


class CompareActions(AppHost):
    def action_compare(self) -> None:
        marked = self.marked
        if marked is not None and marked != self.workspace.current and marked < len(self.workspace.chains):
            self.compare_chains(marked)
        else:
            self.compare_modes()

    def compare_modes(self) -> CompareScreen | None:
        """The current chain, eager (left) vs the compile mode (right)."""
        compiled = self.workspace.compile_mode
        text = self.session.text
        return self._open_compare(
            [(text, "eager", "left"), (text, compiled, "right")],
            f"compare · {self.workspace.chain.name}: eager vs {compiled}",
            one_chain=True,
        )

    def compare_chains(self, other: int) -> CompareScreen | None:
        """The current chain (left) vs chain ``other`` (right), in the last selected mode."""
        mode = self.workspace.settings.modes[-1]
        chain = self.workspace.chains[other]
        return self._open_compare(
            [(self.session.text, mode, "left"), (chain.text, mode, "right")],
            f"compare · {self.workspace.chain.name} vs {chain.name} ({mode})",
        )

    def _open_compare(
        self, sides: list[tuple[str, str, str]], title: str, *, one_chain: bool = False
    ) -> CompareScreen | None:
        from tui.screens.compare import CompareScreen, Side, side_label  # off start-up

        if self.session.ready is None:
            self.message("the worker is still starting; try again in a moment", "yellow")
            return None

        def label(text: str, m: Measurement | None, mode: str) -> str:
            return side_label(None if one_chain else text, m, mode)

        made: dict[str, Side] = {}
        wanted: dict[str, list[tuple[str, str]]] = {}
        (left_text, left_mode, _), (_, right_mode, _) = sides
        apart = one_chain and not self.session.measured_together(left_text, (left_mode, right_mode))
        for text, mode, which in sides:
            m = None if apart else self.session.cached(text, mode)
            made[which] = Side(label(text, m, mode), m, pending=m is None)
            if m is None:
                wanted.setdefault(text, []).append((mode, which))
        screen = CompareScreen(made["left"], made["right"], title, one_chain=one_chain)
        self.push_screen(screen)
        s = self.workspace.settings
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
            request = ProfileRequest.of(self.session.new_id(), text, s, sizes=[s.focus_size], modes=modes)
            self.session.track(request, time.monotonic())
            screen.expect(request, pairs)
            self.bridge.send(request, reply_to=screen)
        return screen
