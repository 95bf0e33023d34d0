"""The worker link as one pure state machine: what the status bar says about the worker, and when
the app tries to start it again.

No textual and no torch, like ``tui.session``. The app feeds it the worker's states as the client
announces them (``probes.link.client``: starting, ready, lost, restarting, failed, stopped),
ctrl+r and the time; it answers what to show (``view()``) and whether a start is due (``due()``).

The rules:
- it never claims a state that no process is in: "starting" only while a start runs, "ready"
  only once a worker said so, a restart only said done once it is;
- the reason shown is the current attempt's only, one line, replaced (never appended) by the
  next attempt's;
- after a failed start it tries again by itself, waiting longer each time (``BACKOFF_S``), while
  the user keeps editing (the session sends the rows' requests once a worker is ready again);
  ctrl+r tries at once;
- it gives up where trying again cannot help (a worker of another version, a command that
  cannot run, a worker that ends each time it starts) or after ``MAX_FAILURES`` in a row, and
  says what to do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

BACKOFF_S = (1.0, 2.0)
"""The waits before the next start after 1, 2, 3... failed starts in a row (the last one repeats).
Short, so that a link that comes back (an sshd restarted, a network back) is used within about
2 s: a start that fails (a refused connection, a command that exits) costs next to nothing."""
MAX_FAILURES = 60
"""Failed starts in a row before giving up (about two minutes of trying); ctrl+r starts again."""

Phase = Literal["starting", "ready", "restarting", "failed", "retrying", "stopped"]
"""starting: the first start runs. ready: a worker answers. restarting: a worker was lost and its
replacement starts. failed: a start failed, the next one is due at ``retry_at``. retrying: a start
after a failed one runs. stopped: given up, nothing is tried until ctrl+r."""

STYLES: dict[Phase, str] = {
    "starting": "yellow",
    "ready": "green",
    "restarting": "yellow",
    "failed": "red",
    "retrying": "yellow",
    "stopped": "red",
}


@dataclass(frozen=True)
class LinkView:
    """What the status bar shows of the link: ``words`` beside the coloured dot (the state, the
    countdown, what ctrl+r does; ``short`` where the line has no room for them) and ``why`` on a
    line of its own while there is one to tell."""

    phase: Phase
    words: str
    why: str = ""
    short: str = ""

    @property
    def style(self) -> str:
        return STYLES[self.phase]


class WorkerLink:
    """The worker link of one app (see the module doc)."""

    def __init__(self) -> None:
        self.phase: Phase = "starting"
        self.why = ""
        """The last failed start's reason (the current attempt's only)."""
        self.failures = 0
        """Failed starts in a row."""
        self.retry_at = math.inf
        self.lost_why = ""
        """Why the last worker was lost, idle or with its link (said again once its replacement
        is ready); a worker lost in a request says why with that request."""
        self.restarted = False
        """A worker is being replaced after its request failed."""

    # -- the worker's states -------------------------------------------------------------------

    def starting(self) -> None:
        """A start runs (the client said "starting")."""
        if self.phase in ("failed", "stopped"):
            self.phase = "retrying"
        elif self.phase == "ready":
            self.phase = "restarting"  # a request found the worker gone and starts one itself

    def lost(self, why: str) -> None:
        """The worker (or its link) was lost; the client starts a new one at once."""
        self.phase = "restarting"
        self.lost_why = why

    def restarting(self) -> None:
        """The client replaces a worker (after a loss, or after its request failed)."""
        if self.phase in ("starting", "ready", "restarting"):
            self.phase = "restarting"
            self.restarted = self.restarted or not self.lost_why

    def ready(self) -> str | None:
        """A worker answers; what to say about the way back, if there was one."""
        said = None
        if self.failures:
            said = "the worker is back"
        elif self.lost_why:
            said = f"{self.lost_why}; replaced by a new worker"
        elif self.restarted:
            said = "the worker was restarted"
        self.phase, self.why, self.lost_why, self.failures, self.restarted = "ready", "", "", 0, False
        self.retry_at = math.inf
        return said

    def failed(self, why: str, now: float, *, permanent: bool = False) -> None:
        """A start failed (``permanent``: trying again cannot help, the client gave up)."""
        self.failures += 1
        self.why = why
        self.lost_why = ""
        if permanent or self.failures >= MAX_FAILURES:
            self.phase, self.retry_at = "stopped", math.inf
        else:
            self.phase = "failed"
            self.retry_at = now + BACKOFF_S[min(self.failures, len(BACKOFF_S)) - 1]

    # -- the app's questions ---------------------------------------------------------------------

    @property
    def down(self) -> bool:
        """No worker answers and none starts now (a start is due later, or given up)."""
        return self.phase in ("failed", "stopped")

    def due(self, now: float) -> bool:
        """The next start is due now."""
        return self.phase == "failed" and now >= self.retry_at

    def retry_now(self, now: float) -> bool:
        """ctrl+r: the next start is due now; whether there is one to make (none while a start
        runs or a worker answers)."""
        if not self.down:
            return False
        self.phase, self.retry_at = "failed", now
        return True

    def view(self, now: float, *, measuring: bool = False) -> LinkView:
        """The words for the status bar now (``measuring``: a run of the user's is in flight)."""
        phase = self.phase
        if phase == "starting":
            return LinkView(phase, "starting worker (importing torch)")
        if phase == "ready":
            # Short: the activity beside it (spinner, step, clock) says what is measured.
            return LinkView(phase, "busy" if measuring else "ready")
        if phase == "restarting":
            return LinkView(
                phase, "restarting worker (importing torch)", f"lost: {self.lost_why}" if self.lost_why else ""
            )
        why = f"start {self.failures} failed: {self.why}"
        if phase == "retrying":
            return LinkView(phase, f"starting worker (attempt {self.failures + 1})", why)
        if phase == "failed":
            wait = max(1, math.ceil(self.retry_at - now))
            return LinkView(
                phase, f"no worker · retry in {wait} s · ctrl+r: now", why, f"no worker · retry in {wait} s"
            )
        return LinkView(phase, "no worker: gave up · fix the cause, then ctrl+r", self.why, "no worker: gave up")
