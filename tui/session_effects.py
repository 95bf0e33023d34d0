"""What the live session asks the app to do: ``Send`` a request to the worker, ``Cancel`` one,
``WakeAt`` a time, say a ``Notice``. Values only; the app carries them out
(``tui.screens.live_loop``).
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.link.protocol import ProfileRequest, WarmupRequest


@dataclass(frozen=True)
class Send:
    request: ProfileRequest | WarmupRequest
    entries: tuple[int, ...] = (0,)
    """The device entries it goes to (``tui.fleet``), each on its own device."""


@dataclass(frozen=True)
class Cancel:
    request_id: str


@dataclass(frozen=True)
class WakeAt:
    """Call ``tick()`` at this monotonic time (replaces any earlier wake-up)."""

    when: float


@dataclass(frozen=True)
class Notice:
    text: str
    style: str = ""
    elapsed_s: float | None = None
    """How long the request took, for ``... done in 0.3 s`` (the app may leave it out)."""
    of_text: bool = False
    """About the chain as it was typed (a run's failure): out of date once the text changes."""


Effect = Send | Cancel | WakeAt | Notice
