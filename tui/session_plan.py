"""What the live session sends to the worker, and when: the requests the current text and settings
still need once they are due, eager measured beside compiled modes, Inductor's warm-up, and the
cancelling of runs that no longer match. Reads and books into a ``SessionState``; returns effects.
No textual, no torch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from probes.link.protocol import ProfileRequest, WarmupRequest
from tui.runs import MeasureKey, Run, RunKind, SweepResults, SweepSent, Target
from tui.session_devices import sweep_parts
from tui.session_effects import Cancel, Effect, Send, WakeAt
from tui.session_state import SWEEPS_KEPT, SessionState


class RequestPlanner:
    """Turns what the session's state still lacks into requests (see the module doc)."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._ids = itertools.count(1)

    def new_id(self) -> str:
        return f"s{next(self._ids)}"

    def request(self, sizes: list[int], modes: list[str], *, early_rows: bool = False) -> ProfileRequest:
        s = self.state
        return ProfileRequest.of(
            self.new_id(), s.text, s.settings, sizes=sizes, modes=modes, early_rows=early_rows, source=s.source
        )

    def track(self, request: ProfileRequest, kind: RunKind, now: float, entries: Iterable[int] | None = None) -> None:
        """Book ``request`` as sent to the device ``entries`` (by default the lead alone), under
        the same keys on each."""
        s = self.state
        if s.compiles_apart and "eager" in request.modes and len(request.modes) > 1:
            s.split.add(request.id)
        target = Target(request.device or s.device, request.dtype, request.reps, request.grad)
        for entry in [s.lead] if entries is None else entries:
            run = s.entries[entry].book.track(request, kind, target, now)
            if kind == "sweep":
                s.entries[entry].sweeps[request.id] = SweepResults(run)

    def send_sweep(self, request: ProfileRequest, now: float) -> list[Effect]:
        """The sweep ``request`` to every entry a request goes to (its pairs shared out among them
        where the sweep is spread), booked as this text's sweep."""
        s = self.state
        parts = sweep_parts(s, request, s.sending_to())
        for entry, part in parts:
            self.track(part, "sweep", now, [entry])
        s.sweeps.pop(s.chain, None)
        spread = any(part is not request for _, part in parts)
        s.sweeps[s.chain] = SweepSent(request, tuple((entry, part.id) for entry, part in parts), spread)
        while len(s.sweeps) > SWEEPS_KEPT:
            del s.sweeps[next(iter(s.sweeps))]
        kept = {(entry, rid) for sent in s.sweeps.values() for entry, rid in sent.parts}
        for index, of in enumerate(s.entries):
            of.sweeps = {rid: part for rid, part in of.sweeps.items() if (index, rid) in kept}
        if spread:
            return [Send(part, (entry,)) for entry, part in parts]
        return [Send(request, tuple(entry for entry, _ in parts))]

    def cancel(self, which: Callable[[Run], bool]) -> list[Effect]:
        """Cancel the runs ``which`` picks on every entry (one entry may still run a request
        another has finished)."""
        ids = [rid for entry in self.state.entries for rid in entry.book.cancel(which)]
        return [Cancel(rid) for rid in dict.fromkeys(ids)]

    def cancel_outdated(self) -> list[Effect]:
        """Cancel the runs whose chain or target no longer match (their late rows are still cached)."""
        chain, target = self.state.chain, self.state.target()
        return self.cancel(lambda run: run.kind != "other" and (run.chain != chain or run.target != target))

    def preempt_warmup(self) -> list[Effect]:
        s = self.state
        if s.warmup is None:
            return []
        rid, s.warmup = s.warmup, None
        return [Cancel(rid)]

    def plan(self, now: float) -> list[Effect]:
        """Send what the current text and settings still need, when it is due."""
        s = self.state
        book = s.book
        if s.ready is None or s.parse_error is not None or s.held is not None:
            return []
        if any(run.kind == "sweep" and not run.cancelled for run in book.runs.values()):
            return []  # the sweep is measuring; what it does not cover runs when it is done
        missing = [
            mode
            for mode, key in s.focus_keys().items()
            if key not in book.cache and key not in book.pending and key not in book.failed
        ]
        if not missing:
            return self._maybe_warm_up()
        due = {mode: s.eager_due if mode == "eager" else max(s.eager_due, s.compiled_due) for mode in missing}
        now_modes = [mode for mode in missing if due[mode] <= now]
        effects: list[Effect] = []
        if now_modes:
            modes = now_modes + self._eager_beside(now_modes)
            request = self.request([s.settings.focus_size], modes, early_rows=True)
            entries = self._lacking(modes, [s.lead] if s.spread else s.sending_to())
            self.track(request, "focus", now, entries)
            effects += [*self.preempt_warmup(), Send(request, tuple(entries))]
        later = [due[mode] for mode in missing if mode not in now_modes]
        if later:
            effects.append(WakeAt(min(later)))
        return effects

    def catch_up(self, entry: int, now: float) -> list[Effect]:
        """What the live size still lacks on ``entry``, not the lead, whose worker is ready again:
        sent to it alone (nothing where the live size is the lead's alone, ``--spread``)."""
        s = self.state
        if s.spread or s.parse_error is not None or s.held is not None:
            return []
        modes = [mode for mode in s.modes() if self._lacking([mode], [entry])]
        if not modes:
            return []
        request = self.request([s.settings.focus_size], modes, early_rows=True)
        self.track(request, "focus", now, [entry])
        return [Send(request, (entry,))]

    def _lacking(self, modes: list[str], entries: list[int]) -> list[int]:
        """Those of ``entries`` that lack any of ``modes`` at the live size (neither measured,
        being measured, nor failed); the lead, the first, always."""
        keys: list[MeasureKey] = [key for mode, key in self.state.focus_keys().items() if mode in modes]
        found = []
        for index in entries:
            book = self.state.entries[index].book
            if index == self.state.lead or any(
                key not in book.cache and key not in book.pending and key not in book.failed for key in keys
            ):
                found.append(index)
        return found

    def _eager_beside(self, modes: list[str]) -> list[str]:
        """``["eager"]`` when compiled ``modes`` go out without eager: eager is measured again in
        the same request, after them, so that the headline's ratio divides two readings of one
        request (one taken earlier, under other load, can be off by any factor). Not where
        compiles run in a worker of their own on the CPU: there a compile and a measurement take
        turns, and the headline says the readings came from separate runs."""
        s = self.state
        on_gpu = (s.device or "").startswith("cuda")
        eager = s.focus_keys().get("eager")
        if eager is None or "eager" in modes or eager in s.book.failed or (s.compiles_apart and not on_gpu):
            return []
        return ["eager"]

    def _maybe_warm_up(self) -> list[Effect]:
        """Once the first eager rows are in and nothing is left to do: warm Inductor up."""
        s = self.state
        if s.warmed or s.ready is None or s.book.runs or s.ready.protocol < 2:
            return []
        if not any(key[3] == "eager" for key in s.book.cache):
            return []
        s.warmed = True
        s.warmup = self.new_id()
        return [Send(WarmupRequest(s.warmup, s.settings.device), tuple(s.sending_to()))]
