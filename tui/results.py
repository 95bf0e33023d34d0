"""What the panes show: the results of one request, and whether they still match the editor.

A ``ResultSet`` belongs to one chain text and one set of settings (device, dtype, modes, sizes).
The app compares its ``key`` with the current editor text and settings: when they differ the
panes keep showing it, marked stale, until results for the new text arrive and replace it whole
(never mixed with the old ones).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from probes.protocol import MODES, ChainErrorInfo, Event, Measurement, ProfileRequest, RequestDone, RequestFailed

if TYPE_CHECKING:
    from probes.client import WorkerClient


def normalize(chain: str) -> str:
    """Chains that differ only in whitespace are the same chain (as the replay worker matches them)."""
    return "".join(chain.split())


@dataclass(frozen=True)
class RunKey:
    chain: str
    """Normalised chain text."""
    device: str | None
    dtype: str
    modes: tuple[str, ...]
    sizes: tuple[int, ...]

    @classmethod
    def of(cls, chain: str, device: str | None, dtype: str, modes: list[str], sizes: list[int]) -> RunKey:
        return cls(normalize(chain), device, dtype, tuple(modes), tuple(sizes))


@dataclass
class ResultSet:
    key: RunKey
    text: str
    """The chain as typed when the request was sent."""
    kind: str = "focus"
    """``focus`` (one size, re-run on every edit) or ``sweep`` (every size, on demand)."""
    request_id: str = ""
    results: dict[tuple[int, str], Measurement] = field(default_factory=dict)
    failures: list[RequestFailed] = field(default_factory=list)
    done: bool = False
    cancelled: bool = False
    elapsed_s: float | None = None

    def add(self, m: Measurement) -> None:
        self.results[(m.size, m.mode)] = m

    def measurements(self) -> list[Measurement]:
        return sorted(self.results.values(), key=lambda m: (m.size, MODES.index(m.mode) if m.mode in MODES else 9))

    def at(self, size: int, mode: str) -> Measurement | None:
        return self.results.get((size, mode))

    def failure_for(self, size: int | None, mode: str | None) -> RequestFailed | None:
        for f in self.failures:
            if (f.size in (None, size)) and (f.mode in (None, mode)):
                return f
        return None

    def general_failures(self) -> list[RequestFailed]:
        return [f for f in self.failures if f.size is None and f.mode is None]

    def matches(self, key: RunKey) -> bool:
        """Same chain and settings; a sweep may cover more sizes than asked now."""
        if self.key.chain != key.chain or self.key.dtype != key.dtype or self.key.modes != key.modes:
            return False
        if self.key.device != key.device:
            return False
        return set(key.sizes) <= set(self.key.sizes)


async def stream_into(
    client: WorkerClient, rs: ResultSet, request: ProfileRequest, handle: Callable[[ResultSet, Event], None]
) -> None:
    """Feed every event of ``request`` to ``handle``; a lost worker becomes a failure and a done,
    so a screen always sees its request end, in plain words."""
    try:
        async for event in client.request(request):
            handle(rs, event)
    except asyncio.CancelledError:
        rs.done = rs.cancelled = True
        raise
    except Exception as exc:  # noqa: BLE001 (a message, never a traceback)
        handle(rs, RequestFailed(rs.request_id, ChainErrorInfo("worker", f"lost the worker: {exc}")))
        handle(rs, RequestDone(rs.request_id))
