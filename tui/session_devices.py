"""The live session on several devices (``--device cpu,b:cpu``), the rules that only several have:
a sweep spread over the entries (``--spread``), and what an entry that drops out of one leaves
unmeasured. Reads a ``SessionState``; no textual, no torch.

Which entry leads (``SessionState.lead``, the first whose worker is ready) and where a request
goes (``SessionState.sending_to``) are the state's; the planner sends (``tui.session_plan``).
"""

from __future__ import annotations

from collections.abc import Iterable

from probes.link.protocol import ProfileRequest
from probes.link.spread import Pair, not_measured_text, share_out, share_requests
from tui.runs import Run, SweepResults
from tui.session_effects import Notice
from tui.session_state import SessionState

LOST_KINDS = ("link", "worker")
"""Failures that say the worker went, not that the chain failed: no pair is accounted for by them."""


def sweep_parts(state: SessionState, request: ProfileRequest, entries: list[int]) -> list[tuple[int, ProfileRequest]]:
    """The requests a sweep goes out as, each with its entry: the whole sweep to each, or where it
    is spread, each entry's share of its (size, mode) pairs (``probes.link.spread.share_out``,
    the rule ``kernel-tui profile --spread`` follows)."""
    if not state.spread or len(entries) < 2:
        return [(entry, request) for entry in entries]
    pairs = [(size, mode) for size in request.sizes for mode in request.modes]
    shares = share_out(pairs, len(entries))
    return [
        (entry, part)
        for entry, share in zip(entries, shares, strict=True)
        for part in share_requests(request, share, str(entry))
    ]


def undone_notices(state: SessionState, entry: int, ended: Iterable[Run]) -> list[Notice]:
    """One line per spread sweep that ``ended`` (runs of ``entry`` just done) finished on
    ``entry`` with pairs neither measured nor failed on their own: the entry dropped, and names
    what it leaves unmeasured (the others' points stay)."""
    ids = {run.request.id for run in ended if not run.cancelled}
    found = []
    for sent in state.sweeps.values():
        mine = [rid for e, rid in sent.parts if e == entry]
        if not sent.spread or not ids & set(mine):
            continue
        parts = [part for rid in mine if (part := state.entries[entry].sweeps.get(rid)) is not None]
        if any(not part.run.done or part.run.cancelled for part in parts):
            continue
        left = [pair for part in parts for pair in _unaccounted(part)]
        if left:
            found.append(Notice(f"{state.entries[entry].name}: {not_measured_text(left)}", "yellow"))
    return found


def _unaccounted(part: SweepResults) -> list[Pair]:
    """The pairs of ``part`` neither measured nor failed on their own."""
    failed = [f for f in part.run.failures if f.error.kind not in LOST_KINDS]

    def accounted(size: int, mode: str) -> bool:
        return (size, mode) in part.results or any(f.size in (None, size) and f.mode in (None, mode) for f in failed)

    return [(size, mode) for size in part.sizes for mode in part.modes if not accounted(size, mode)]
