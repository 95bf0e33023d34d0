"""The live loop as a pure state machine: what is shown, pending, running, cached, stale, and why.

No textual and no torch. The app feeds it events (an edit, a settings change, a worker event, the
worker's state, a timer) with the current monotonic time, and carries out the effects it returns
(``Send`` a request, ``Cancel`` one, ``WakeAt`` a time, ``Notice`` a message). ``focus_view()`` and
``sweep_view()`` say what the panes show. So every rule of the loop is unit-tested in milliseconds.

The rules:
- measurements are cached per (chain, target, size, mode), so switching back to a text, a setting
  or a chain shows its rows at once, and a late result of a cancelled run is still kept;
- after an edit, eager runs at once when the text is valid, and the compiled modes with it, unless
  compiles run in a worker of their own on the CPU (they wait for a pause in the typing: they share
  the cores the eager run is timed on) or typing has already wasted a compile (the wait then grows
  each time, ``compile_delay``); any run for an older text or settings is cancelled, a compile too,
  even inside the compiler;
- what is shown for a mode is its fresh measurement, else the last one shown, marked stale with the
  reason once the grace period is over (so rows do not flicker while new ones are on their way);
- each cached measurement remembers the request it came from, and the headline's ratio divides two
  readings of one request only: compiled modes sent without eager measure eager again, after them,
  in the same request (not where compiles take turns with measurements on the CPU);
- a sweep measures every size x mode on demand; its rows also feed the focus size; each text
  shows its own last sweep (stale when the settings moved on), never another text's;
- an empty editor is "empty", not a chain with an error;
- ``hold()`` keeps the loop from running anything (a chain from a workspace file that has not been
  confirmed, or after Stop) until the next edit, ``run_now()`` or sweep;
- a run that lost the link to the worker (``ErrorKind`` "link") failed through no fault of its
  chain: its keys are measured again once a worker is ready (rows come when the link is back),
  once; the status bar says why (``tui.link_state``), not the panes. A worker's own failure is said
  where its run's rows go (the kernel or the sweep pane), not again in the status bar;
- with several devices (``--device cpu,b:cpu``) the lead's events drive every rule above: the
  first device whose worker is ready, so that a box that cannot be reached holds nothing up. Each
  request goes to every device not down (``tui.fleet``); the others' events are only kept, per
  device and under the same keys (``on_entry_event``). A device whose worker is ready again is
  sent what the live size lacks there. With ``--spread`` the live size goes to the lead alone and
  a sweep's pairs are shared out among the devices (``tui.session_devices``); a device that drops
  out of it says which pairs it leaves unmeasured. The views can be asked for any device;
  ``follow_next()`` moves the one the panes show.
"""

from __future__ import annotations

import dataclasses
from typing import Generic, TypeVar, cast, overload

from probes.link.protocol import (
    ChainErrorInfo,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    SourceRef,
    WorkerReady,
)
from probes.link.settings import Settings
from probes.link.summary import format_size
from tui.runs import MeasureKey, RunBook, SweepResults, Target
from tui.session_devices import undone_notices
from tui.session_effects import Cancel, Effect, Notice, Send, WakeAt
from tui.session_plan import RequestPlanner
from tui.session_state import EntryBook, SessionState, Timing
from tui.views import FocusView, SweepView, WorkerActivity

__all__ = ["Cancel", "Effect", "LiveSession", "Notice", "Send", "Timing", "WakeAt"]

T = TypeVar("T")


class _OfState(Generic[T]):
    """A field of ``SessionState``, read and set on the session itself, so that the app and the
    tests talk to one object."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, session: None, owner: type) -> _OfState[T]: ...

    @overload
    def __get__(self, session: LiveSession, owner: type) -> T: ...

    def __get__(self, session: LiveSession | None, owner: type) -> T | _OfState[T]:
        if session is None:
            return self
        return cast(T, getattr(session.state, self.name))

    def __set__(self, session: LiveSession, value: T) -> None:
        setattr(session.state, self.name, value)


class LiveSession:
    """The live loop of one app (see the module doc): what it knows and shows (``state``), what it
    sends and when (``planner``), and the rules of each event, here."""

    settings = _OfState[Settings]()
    timing = _OfState[Timing]()
    ready = _OfState[WorkerReady | None]()
    """The lead's worker (``SessionState.lead``); read only, as ``book`` and ``lead`` are."""
    book = _OfState[RunBook]()
    lead = _OfState[int]()
    text = _OfState[str]()
    chain = _OfState[str]()
    parse_error = _OfState[ChainErrorInfo | None]()
    source = _OfState[SourceRef | None]()
    held = _OfState[str | None]()
    why_stale = _OfState[str]()
    warmed = _OfState[bool]()
    warmup = _OfState[str | None]()
    compiles_apart = _OfState[bool]()
    compile_worker_starting = _OfState[bool]()

    def __init__(self, settings: Settings, text: str = "", *, timing: Timing | None = None) -> None:
        self.state = SessionState(settings, text, timing or Timing())
        self.planner = RequestPlanner(self.state)

    # -- what the loop is about now, and what the panes show (see ``SessionState``) ---------------

    @property
    def device(self) -> str | None:
        return self.state.device

    @property
    def sweep(self) -> SweepResults | None:
        return self.state.sweep

    @property
    def compile_delay(self) -> float:
        return self.state.compile_delay

    def target(self) -> Target:
        return self.state.target()

    def modes(self) -> tuple[str, ...]:
        return self.state.modes()

    def focus_keys(self) -> dict[str, MeasureKey]:
        return self.state.focus_keys()

    def running(self) -> bool:
        return self.state.running()

    def focus_view(self, now: float, entry: int = 0) -> FocusView:
        return self.state.focus_view(now, entry)

    def sweep_view(self, entry: int = 0) -> SweepView:
        return self.state.sweep_view(entry)

    @property
    def followed(self) -> int:
        """The device entry the kernel and sweep panes show."""
        return self.state.followed

    def entry_names(self) -> list[str]:
        return [entry.name for entry in self.state.entries]

    def activity(self) -> WorkerActivity | None:
        return self.state.activity()

    def cached(self, text: str, mode: str) -> Measurement | None:
        return self.state.cached(text, mode)

    def measured_together(self, text: str, modes: tuple[str, str]) -> bool:
        return self.state.measured_together(text, modes)

    def shown_measurements(self, entry: int = 0) -> list[Measurement]:
        return self.state.shown_measurements(entry)

    def new_id(self) -> str:
        return self.planner.new_id()

    # -- several devices ------------------------------------------------------------------------

    def set_entries(self, names: list[str], *, spread: bool = False) -> None:
        """Measure on the device entries ``names``, their results kept apart (``on_entry_event``);
        ``spread``: share each sweep out among them (devices of one kind, ``--spread``)."""
        s = self.state
        s.entries = [EntryBook(name) for name in names]
        s.followed = 0
        s.spread = spread and len(names) > 1

    def follow_next(self) -> str:
        """The kernel and sweep panes show the next device entry; its name."""
        s = self.state
        s.followed = (s.followed + 1) % len(s.entries)
        return s.entries[s.followed].name

    def on_entry_event(self, entry: int, event: object) -> list[Effect]:
        """An event of device ``entry``, not the lead (``on_event``'s): kept, never acted on, but
        for the line naming what a spread sweep's part there left unmeasured."""
        s = self.state
        book = s.entries[entry].book
        if isinstance(event, Progress):
            book.progress(event)
        elif isinstance(event, MeasurementResult):
            run = book.result(event)
            sweep = s.sweep_of(run, entry) if run is not None else None
            if sweep is not None:
                sweep.results[(event.measurement.size, event.measurement.mode)] = event.measurement
            s.sync_shown()
        elif isinstance(event, RequestFailed):
            book.failure(event)
        elif isinstance(event, RequestDone):
            run = book.done(event)
            return list(undone_notices(s, entry, [run])) if run is not None else []
        return []

    # -- events --------------------------------------------------------------------------------

    def edit(self, text: str, now: float, *, hold: str | None = None) -> list[Effect]:
        """The editor's text changed; ``hold``: run nothing for it until confirmed (see ``hold()``)."""
        s = self.state
        before = s.chain
        s.set_text(text)
        if s.chain == before and s.text.strip():
            return self.planner.plan(now)  # whitespace only: same chain, same results
        s.changed_at = now
        if s.compiling_another_chain():
            s.compile_backoff = min(2 * s.compile_backoff, 2**10)
        s.eager_due = now + s.timing.eager_delay_s
        s.compiled_due = now + s.compile_delay
        s.why_stale = "the chain was edited" if s.parse_error is None else s.text_problem()
        s.held = hold
        book = s.book
        book.failed = {key: f for key, f in book.failed.items() if key[0] == s.chain}  # coming back retries
        s.sync_shown()
        return self.planner.cancel_outdated() + self.planner.plan(now)

    def settings_changed(self, settings: Settings, what: str, now: float) -> list[Effect]:
        """The settings are now ``settings`` (``what`` changed): what no longer matches is
        re-measured (or marked stale)."""
        s = self.state
        s.settings = settings
        s.changed_at = s.eager_due = now
        s.compiled_due = max(now, s.compiled_due)  # still typing: compiled waits for the pause
        s.why_stale = f"{what} changed"  # a hold stays: a setting is no confirmation of the chain
        s.sync_shown()
        return self.planner.cancel_outdated() + self.planner.plan(now)

    def worker_ready(self, ready: WorkerReady, now: float, entry: int = 0) -> list[Effect]:
        """Device ``entry``'s worker is ready: sent what the live size lacks there (all it lacks
        where it leads, as the first ready)."""
        s = self.state
        effects: list[Effect] = []
        names = [d.name for d in ready.devices]
        wanted = s.settings.device
        of = s.entries[entry]
        of.ready, of.down = ready, False
        of.book.failed = {key: f for key, f in of.book.failed.items() if f.error.kind != "link"}
        if s.lead != entry:
            return self.planner.catch_up(entry, now)
        if wanted is not None and wanted not in names and entry == 0:  # the settings' device is the first's
            cuda = next((n for n in names if n.startswith("cuda")), None)
            if wanted == "cuda" and cuda is not None:
                s.settings = dataclasses.replace(s.settings, device=cuda)
            else:
                s.settings = dataclasses.replace(s.settings, device=None)
                effects.append(Notice(f"device {wanted} is not available here; using {ready.default_device}", "yellow"))
        s.warmed = False
        s.warmup = None
        return effects + self.planner.plan(now)

    def worker_lost(self, entry: int = 0) -> list[Effect]:
        """The worker of device ``entry`` is gone (failed to start, given up): nothing runs or is
        sent there until it is ready again. Where it led, the next ready one leads (``tick()``)."""
        s = self.state
        of = s.entries[entry]
        leads = entry == s.lead
        if leads and any(not sweep.run.done and not sweep.run.cancelled for sweep in of.sweeps.values()):
            s.sweep_lost = True
        ended = list(of.book.runs.values())
        for run in ended:
            run.done = True
        of.book.runs.clear()
        of.book.pending.clear()
        of.ready, of.down = None, True
        if leads:
            s.warmed = False
            s.warmup = None
        return list(undone_notices(s, entry, ended))

    def hold(self, reason: str) -> None:
        """Run nothing until the next edit, ``run_now()`` or sweep (the views say ``reason``)."""
        self.state.held = reason

    def tick(self, now: float) -> list[Effect]:
        return self.planner.plan(now)

    def run_now(self, now: float) -> list[Effect]:
        """Measure the focus size again, every mode, now (cached rows are dropped)."""
        s = self.state
        if s.parse_error is not None:
            return [self._fix_first()]
        s.held = None
        for key in s.focus_keys().values():
            for entry in s.entries:
                entry.book.forget(key)
        effects = self.planner.cancel(lambda run: run.kind == "focus")
        s.changed_at = s.eager_due = s.compiled_due = now
        s.why_stale = "measuring again"
        return effects + self.planner.plan(now)

    def start_sweep(self, now: float) -> list[Effect]:
        s = self.state
        if s.parse_error is not None:
            return [self._fix_first()]
        if s.ready is None:
            return [Notice("the worker is still starting; try again in a moment", "yellow")]
        s.held = None
        effects = self.planner.cancel(lambda run: run.kind in ("focus", "sweep"))
        request = self.planner.request(list(s.settings.sizes), list(s.settings.modes))
        s.sweep_lost = False
        return [*effects, *self.planner.preempt_warmup(), *self.planner.send_sweep(request, now)]

    def stop(self) -> list[Effect]:
        """Cancel everything running; nothing runs again until the next edit or ``run_now()``."""
        effects = self.planner.cancel(lambda run: run.kind in ("focus", "sweep"))
        if not effects:
            return [Notice("nothing is running")]
        self.state.held = "stopped: ctrl+r measures again"
        return [*effects, Notice("cancelled", "yellow")]

    def track(self, request: ProfileRequest, now: float) -> None:
        """Remember a request sent by someone else (the compare screen), so its rows are cached."""
        self.planner.track(request, "other", now)

    def on_event(self, event: object, now: float, entry: int = 0) -> list[Effect]:
        """An event of device ``entry``'s workers (the lead's decide what runs next)."""
        s = self.state
        if entry != s.lead:
            return self.on_entry_event(entry, event)
        if isinstance(event, Progress):
            s.book.progress(event)
        elif isinstance(event, MeasurementResult):
            run = s.book.result(event)
            m = event.measurement
            if run is not None:
                s.relinked.discard((run.chain, run.target, m.size, m.mode))
            sweep = s.sweep_of(run, entry) if run is not None else None
            if sweep is not None:
                sweep.results[(m.size, m.mode)] = m
            s.sync_shown()
        elif isinstance(event, RequestFailed):
            return self._failed(event)
        elif isinstance(event, RequestDone):
            return self._done(event, now)
        return []

    # -- internals -------------------------------------------------------------------------------

    def _fix_first(self) -> Notice:
        if not self.state.text.strip():
            return Notice("the editor is empty: type a chain first", "yellow")
        assert self.state.parse_error is not None
        return Notice(f"fix the chain first: {self.state.parse_error.located()}", "bold red")

    def _failed(self, event: RequestFailed) -> list[Effect]:
        s = self.state
        run = s.book.runs.get(event.id)
        if run is not None and event.error.kind == "link":
            keys = set(run.keys())
            if s.sweep_of(run, s.lead) is not None:
                s.sweep_lost = True
            if not keys & s.relinked:
                s.relinked |= keys  # not the chain's doing: measured again once the link is back
                return []
        run = s.book.failure(event)
        if run is not None and event.size is None:
            for key in run.keys():  # a request's failure is none of the rows it did bring
                if key in s.book.cache and s.book.failed.get(key) is event:
                    del s.book.failed[key]
        if run is None or not s.is_current(run) or event.error.kind in ("worker", "link"):
            return []  # the pane of the run says it (a worker's), the status bar the link's
        where = " ".join(x for x in (event.mode or "", f"N={format_size(event.size)}" if event.size else "") if x)
        return [Notice(f"{where + ': ' if where else ''}{event.error.located()}", "bold red", of_text=True)]

    def _done(self, event: RequestDone, now: float) -> list[Effect]:
        s = self.state
        if event.id == s.warmup:
            s.warmup = None
        run = s.book.done(event)
        if run is None:
            return []
        effects: list[Effect] = [*undone_notices(s, s.lead, [run])]
        if s.is_current(run) and any(mode != "eager" for mode in run.request.modes):
            s.compile_backoff = max(1.0, s.compile_backoff * 0.8)  # a compile that counted
        if s.is_current(run) and not run.failures and not s.running():
            what = "sweep" if run.kind == "sweep" else "profile"
            effects.append(Notice(f"{what} done", "green", elapsed_s=now - run.started))
        return effects + self.planner.plan(now)
