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
  where its run's rows go (the kernel or the sweep pane), not again in the status bar.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from probes.chain.expr import ChainError, parse_chain
from probes.link.protocol import (
    ChainErrorInfo,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    SourceRef,
    WarmupRequest,
    WorkerReady,
)
from probes.link.settings import Settings
from probes.link.summary import format_size
from tui.runs import MeasureKey, Run, RunBook, RunKind, SweepResults, Target, normalize
from tui.views import FocusView, ModeActivity, ModeView, SweepView, WorkerActivity, step_activity

EMPTY = "empty"
"""What an empty editor is: no chain yet, not a chain with an error."""
SWEEPS_KEPT = 16
"""Sweeps kept, one per chain text, so that going back to a text shows its sweep again."""


@dataclass(frozen=True)
class Timing:
    """The loop's waits. Every one of them lands behind the frame that draws the key, so the
    defaults wait only where a run sent at once would cost more than it saves."""

    eager_delay_s: float = 0.0
    """Eager runs this long after the last edit: at once by default, since a run the next key makes
    outdated is stopped at once (and a request not sent yet is never sent)."""
    compile_delay_s: float = 0.25
    """Where compiles run in a worker of their own on the CPU (``compiles_apart``), they wait for
    the text to be stable this long: a compile there shares the cores the eager measurement times."""
    compile_wait_s: float = 0.03
    """Elsewhere a compile is sent with the edit's eager run, from the edit itself: one the next key
    makes outdated is stopped within a few tens of ms, even inside the compiler it started
    (``probes.engine.worker.STOP_SIGNAL``), so it holds up no eager rows. Once typing has wasted a
    compile, the next waits this long, doubled each time (``compile_backoff``)."""
    compile_delay_max_s: float = 2.0
    """The wait doubles (up to this) each time typing resumes while a compile of an older text runs:
    that compile was wasted."""
    stale_grace_s: float = 0.35
    """Rows of the previous text stay undimmed this long while the new ones are on their way."""
    progress_delay_s: float = 0.15
    """A run's progress (the step it is at), and the panes of an edit that started a run, are
    drawn this long after they come, unless something else draws first: a fast run's rows come
    within this moment, and a frame drawn for its progress just before them would hold them up.
    The rows' own frame shows the step anyway."""


# -- effects --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    request: ProfileRequest | WarmupRequest


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


# -- the session ----------------------------------------------------------------------------------


class LiveSession:
    """The live loop of one app (see the module doc)."""

    def __init__(self, settings: Settings, text: str = "", *, timing: Timing | None = None) -> None:
        self.settings = settings
        self.timing = timing or Timing()
        self.ready: WorkerReady | None = None
        self.text = ""
        self.chain = ""
        self.parse_error: ChainErrorInfo | None = None
        self.book = RunBook()
        self.shown: dict[str, Measurement] = {}
        """The last measurement shown per mode (shown stale once the text or settings move on)."""
        self.shown_batch: dict[str, str] = {}
        """The request each of those came from."""
        self.split: set[str] = set()
        """Requests sent while compiles ran in a worker of their own: their eager and compiled
        readings were timed in two processes."""
        self.sweeps: dict[str, SweepResults] = {}
        """The last sweep of each chain text: a chain shows its own sweep, never another's."""
        self.held: str | None = None
        self.changed_at = float("-inf")
        """When the text or the settings last changed (the grace period of stale rows starts then)."""
        self.eager_due = float("-inf")
        self.compiled_due = float("-inf")
        """When the missing eager / compiled rows of the current text and settings are due."""
        self.why_stale = "the chain was edited"
        self.warmed = False
        self.warmup: str | None = None
        self.compile_backoff = 1.0
        """The wait before compiling, in its shortest waits (see ``Timing.compile_delay_max_s``)."""
        self.compiles_apart = False
        """Compiles run in a worker of their own (the app says so as the workers come and go)."""
        self.compile_worker_starting = False
        """That worker is still starting: a run's compiled part waits for it (its eager part does not)."""
        self.relinked: set[MeasureKey] = set()
        """Keys whose run lost the link once: measured again when it is back, filed as failed if it
        is lost again (a chain that makes the link go silent each time is not run forever)."""
        self.sweep_lost = False
        """The sweep ended because the worker (or its link) was lost."""
        self.source: SourceRef | None = None
        """A function of the user's file measured instead of a chain: the text then names the
        file's version (``tui.source_file``), and the worker says what is wrong with it."""
        self._ids = itertools.count(1)
        self._set_text(text)

    # -- what the loop is about now ----------------------------------------------------------

    @property
    def device(self) -> str | None:
        if self.settings.device:
            return self.settings.device
        return self.ready.default_device if self.ready else None

    @property
    def sweep(self) -> SweepResults | None:
        """The last sweep of the current text (None: no sweep yet, whatever other texts have)."""
        return self.sweeps.get(self.chain)

    def _sweep_of(self, run: Run) -> SweepResults | None:
        return next((sweep for sweep in self.sweeps.values() if sweep.run is run), None)

    def target(self) -> Target:
        s = self.settings
        return Target(self.device, s.dtype, s.reps, s.grad)

    def modes(self) -> tuple[str, ...]:
        return self.settings.modes

    def focus_keys(self) -> dict[str, MeasureKey]:
        target, size = self.target(), self.settings.focus_size
        return {mode: (self.chain, target, size, mode) for mode in self.modes()}

    def text_problem(self) -> str:
        """Why the text is not measured: ``empty`` (nothing typed is no error), or its error."""
        return EMPTY if not self.text.strip() else "the chain has an error"

    def _fix_first(self) -> Notice:
        if not self.text.strip():
            return Notice("the editor is empty: type a chain first", "yellow")
        assert self.parse_error is not None
        return Notice(f"fix the chain first: {self.parse_error.located()}", "bold red")

    def new_id(self) -> str:
        return f"s{next(self._ids)}"

    # -- events --------------------------------------------------------------------------------

    def edit(self, text: str, now: float, *, hold: str | None = None) -> list[Effect]:
        """The editor's text changed; ``hold``: run nothing for it until confirmed (see ``hold()``)."""
        before = self.chain
        self._set_text(text)
        if self.chain == before and self.text.strip():
            return self._plan(now)  # whitespace only: same chain, same results
        self.changed_at = now
        if self._compiling_another_chain():
            self.compile_backoff = min(2 * self.compile_backoff, 2**10)
        self.eager_due = now + self.timing.eager_delay_s
        self.compiled_due = now + self.compile_delay
        self.why_stale = "the chain was edited" if self.parse_error is None else self.text_problem()
        self.held = hold
        book = self.book
        book.failed = {key: f for key, f in book.failed.items() if key[0] == self.chain}  # coming back retries
        self._sync_shown()
        return self._cancel_outdated() + self._plan(now)

    def settings_changed(self, settings: Settings, what: str, now: float) -> list[Effect]:
        """The settings are now ``settings`` (``what`` changed): what no longer matches is
        re-measured (or marked stale)."""
        self.settings = settings
        self.changed_at = self.eager_due = now
        self.compiled_due = max(now, self.compiled_due)  # still typing: compiled waits for the pause
        self.why_stale = f"{what} changed"  # a hold stays: a setting is no confirmation of the chain
        self._sync_shown()
        return self._cancel_outdated() + self._plan(now)

    def worker_ready(self, ready: WorkerReady, now: float) -> list[Effect]:
        effects: list[Effect] = []
        names = [d.name for d in ready.devices]
        wanted = self.settings.device
        if wanted is not None and wanted not in names:
            cuda = next((n for n in names if n.startswith("cuda")), None)
            if wanted == "cuda" and cuda is not None:
                self.settings = dataclasses.replace(self.settings, device=cuda)
            else:
                self.settings = dataclasses.replace(self.settings, device=None)
                effects.append(Notice(f"device {wanted} is not available here; using {ready.default_device}", "yellow"))
        self.ready = ready
        self.warmed = False
        self.warmup = None
        return effects + self._plan(now)

    def worker_lost(self) -> None:
        """The worker is gone (lost, failed to start, or stopped): nothing is running any more, and
        nothing is sent until a worker is ready again (``worker_ready``)."""
        self.ready = None
        if any(not sweep.run.done and not sweep.run.cancelled for sweep in self.sweeps.values()):
            self.sweep_lost = True
        for run in self.book.runs.values():
            run.done = True
        self.book.runs.clear()
        self.book.pending.clear()
        self.warmup = None

    def hold(self, reason: str) -> None:
        """Run nothing until the next edit, ``run_now()`` or sweep (the views say ``reason``)."""
        self.held = reason

    def tick(self, now: float) -> list[Effect]:
        return self._plan(now)

    def run_now(self, now: float) -> list[Effect]:
        """Measure the focus size again, every mode, now (cached rows are dropped)."""
        if self.parse_error is not None:
            return [self._fix_first()]
        self.held = None
        for key in self.focus_keys().values():
            self.book.forget(key)
        effects = self._cancel(lambda run: run.kind == "focus")
        self.changed_at = self.eager_due = self.compiled_due = now
        self.why_stale = "measuring again"
        return effects + self._plan(now)

    def start_sweep(self, now: float) -> list[Effect]:
        if self.parse_error is not None:
            return [self._fix_first()]
        if self.ready is None:
            return [Notice("the worker is still starting; try again in a moment", "yellow")]
        self.held = None
        effects = self._cancel(lambda run: run.kind in ("focus", "sweep"))
        request = self._request(list(self.settings.sizes), list(self.settings.modes))
        self.sweeps.pop(self.chain, None)
        self.sweeps[self.chain] = SweepResults(self._track(request, "sweep", now))
        while len(self.sweeps) > SWEEPS_KEPT:
            del self.sweeps[next(iter(self.sweeps))]
        self.sweep_lost = False
        return [*effects, *self._preempt_warmup(), Send(request)]

    def stop(self) -> list[Effect]:
        """Cancel everything running; nothing runs again until the next edit or ``run_now()``."""
        effects = self._cancel(lambda run: run.kind in ("focus", "sweep"))
        if not effects:
            return [Notice("nothing is running")]
        self.held = "stopped: ctrl+r measures again"
        return [*effects, Notice("cancelled", "yellow")]

    def track(self, request: ProfileRequest, now: float) -> None:
        """Remember a request sent by someone else (the compare screen), so its rows are cached."""
        self._track(request, "other", now)

    def on_event(self, event: object, now: float) -> list[Effect]:
        """An event of a request from the worker."""
        if isinstance(event, Progress):
            self.book.progress(event)
        elif isinstance(event, MeasurementResult):
            run = self.book.result(event)
            m = event.measurement
            if run is not None:
                self.relinked.discard((run.chain, run.target, m.size, m.mode))
            sweep = self._sweep_of(run) if run is not None else None
            if sweep is not None:
                sweep.results[(m.size, m.mode)] = m
            self._sync_shown()
        elif isinstance(event, RequestFailed):
            return self._failed(event)
        elif isinstance(event, RequestDone):
            return self._done(event, now)
        return []

    # -- views ---------------------------------------------------------------------------------

    def focus_view(self, now: float) -> FocusView:
        """Per selected mode at the focus size: what to show, whether it is fresh, what runs for it."""
        book = self.book
        keys = self.focus_keys()
        modes = []
        outdated = False
        coming = True
        for mode, key in keys.items():
            fresh = book.cache.get(key)
            failure = book.failed.get(key)
            shown = fresh or self.shown.get(mode)
            batch = book.batch.get(key) if fresh is not None else self.shown_batch.get(mode)
            activity = self.mode_activity(mode, key)
            if fresh is None and shown is not None:
                outdated = True
                coming = coming and activity in ("waiting", "starting", "measuring", "compiling", "after a pause")
            if fresh is None and failure is not None:
                coming = False
            modes.append(ModeView(mode, shown, fresh is not None, activity, failure, batch))
        # The focus size's own (a sweep's failure at other sizes is the sweep pane's to say).
        found: list[RequestFailed] = []
        for key in keys.values():
            f = book.failed.get(key)
            if f is not None and f.size is None and f.mode is None and f not in found:
                found.append(f)
        errors = tuple(found)
        stale = None
        updating = False
        if outdated:
            within_grace = now - self.changed_at < self.timing.stale_grace_s
            if self.parse_error is None and coming and within_grace and not errors:
                updating = True
            else:
                stale = self.text_problem() if self.parse_error is not None else self.held or self.why_stale
        busy = any(key in book.pending for key in keys.values())
        batches = {view.batch for view in modes if view.measurement is not None}
        two = len(batches) == 1 and batches <= self.split and len(modes) > 1
        return FocusView(self.settings.focus_size, tuple(modes), stale, updating, errors, busy, self.held, two)

    def mode_activity(self, mode: str, key: MeasureKey) -> ModeActivity:
        """What happens for ``key`` (the current chain and settings in ``mode``) now."""
        book = self.book
        rid = book.pending.get(key)
        if rid is not None:
            progress = book.runs[rid].progress
            if progress is not None and progress.mode == mode and progress.size in (None, key[2]):
                return step_activity(progress)
            return "starting" if mode != "eager" and self.compile_worker_starting else "waiting"
        if key in book.cache or key in book.failed or self.parse_error is not None:
            return ""
        if self.held is not None:
            return "held"
        if self.ready is None:
            return "waiting"
        return "after a pause" if mode != "eager" else "waiting"

    def sweep_view(self) -> SweepView:
        """The last sweep of this text, stale (with why) when it no longer covers the settings; none
        for a text never swept (another text's sweep is never shown for it)."""
        s = self.settings
        sweep = self.sweep
        stale = None
        if sweep is not None and not sweep.covers(self.chain, self.target(), self.modes(), s.sizes):
            stale = "settings changed: s sweeps again"
        running = sweep is not None and not sweep.run.done and not sweep.run.cancelled
        two = sweep is not None and sweep.run.request.id in self.split
        return SweepView(sweep, s.sizes, s.compiled_mode, stale, running, self.sweep_lost, two)

    def activity(self) -> WorkerActivity | None:
        """The run the worker is serving now (the oldest one not done), in words."""
        run = next((r for r in self.book.runs.values() if r.kind != "other" and not r.cancelled), None)
        if run is None:
            return None
        p = run.progress
        if p is None:
            return WorkerActivity("sending", run.started)
        done, total = run.count()
        return WorkerActivity(p.message + (f" · {done}/{total} done" if total > 1 else ""), run.started)

    def running(self) -> bool:
        return self.book.running()

    def cached(self, text: str, mode: str) -> Measurement | None:
        """The measurement of ``text`` in ``mode`` at the focus size with the current target, if any."""
        return self.book.cache.get((normalize(text), self.target(), self.settings.focus_size, mode))

    def measured_together(self, text: str, modes: tuple[str, str]) -> bool:
        """Whether the cached measurements of ``text`` in both ``modes`` (focus size, current
        target) came from one request: only such a pair makes a ratio (see ``RunBook.batch``)."""
        one, other = ((normalize(text), self.target(), self.settings.focus_size, mode) for mode in modes)
        return self.book.same_batch(one, other)

    def shown_measurements(self) -> list[Measurement]:
        """Everything on screen now (sweep rows and the focus rows), once each."""
        seen: dict[tuple[str, int, str, str, str], Measurement] = {}
        sweep = self.sweep.measurements() if self.sweep else []
        focus = [m for mode in self.modes() if (m := self.shown.get(mode)) is not None]
        for m in [*sweep, *focus]:
            seen[(m.chain, m.size, m.mode, m.dtype, m.device)] = m
        return list(seen.values())

    # -- internals -------------------------------------------------------------------------------

    def _set_text(self, text: str) -> None:
        self.text = text
        self.chain = normalize(text)
        if self.source is not None:
            self.parse_error = None
            return
        try:
            parse_chain(text)
        except ChainError as exc:
            self.parse_error = exc.info
        else:
            self.parse_error = None

    def _request(self, sizes: list[int], modes: list[str], *, early_rows: bool = False) -> ProfileRequest:
        return ProfileRequest.of(
            self.new_id(), self.text, self.settings, sizes=sizes, modes=modes, early_rows=early_rows, source=self.source
        )

    def _track(self, request: ProfileRequest, kind: RunKind, now: float) -> Run:
        if self.compiles_apart and "eager" in request.modes and len(request.modes) > 1:
            self.split.add(request.id)
        return self.book.track(
            request, kind, Target(request.device or self.device, request.dtype, request.reps, request.grad), now
        )

    def _cancel(self, which: Callable[[Run], bool]) -> list[Effect]:
        return [Cancel(rid) for rid in self.book.cancel(which)]

    def _cancel_outdated(self) -> list[Effect]:
        """Cancel the runs whose chain or target no longer match (their late rows are still cached)."""
        chain, target = self.chain, self.target()
        return self._cancel(lambda run: run.kind != "other" and (run.chain != chain or run.target != target))

    def _preempt_warmup(self) -> list[Effect]:
        if self.warmup is None:
            return []
        rid, self.warmup = self.warmup, None
        return [Cancel(rid)]

    def _plan(self, now: float) -> list[Effect]:
        """Send what the current text and settings still need, when it is due."""
        book = self.book
        if self.ready is None or self.parse_error is not None or self.held is not None:
            return []
        if any(run.kind == "sweep" and not run.cancelled for run in book.runs.values()):
            return []  # the sweep is measuring; what it does not cover runs when it is done
        missing = [
            mode
            for mode, key in self.focus_keys().items()
            if key not in book.cache and key not in book.pending and key not in book.failed
        ]
        if not missing:
            return self._maybe_warm_up()
        due = {mode: self.eager_due if mode == "eager" else max(self.eager_due, self.compiled_due) for mode in missing}
        now_modes = [mode for mode in missing if due[mode] <= now]
        effects: list[Effect] = []
        if now_modes:
            modes = now_modes + self._eager_beside(now_modes)
            request = self._request([self.settings.focus_size], modes, early_rows=True)
            self._track(request, "focus", now)
            effects += [*self._preempt_warmup(), Send(request)]
        later = [due[mode] for mode in missing if mode not in now_modes]
        if later:
            effects.append(WakeAt(min(later)))
        return effects

    def _eager_beside(self, modes: list[str]) -> list[str]:
        """``["eager"]`` when compiled ``modes`` go out without eager: eager is measured again in
        the same request, after them, so that the headline's ratio divides two readings of one
        request (one taken earlier, under other load, can be off by any factor). Not where
        compiles run in a worker of their own on the CPU: there a compile and a measurement take
        turns, and the headline says the readings came from separate runs."""
        on_gpu = (self.device or "").startswith("cuda")
        eager = self.focus_keys().get("eager")
        if eager is None or "eager" in modes or eager in self.book.failed or (self.compiles_apart and not on_gpu):
            return []
        return ["eager"]

    def _maybe_warm_up(self) -> list[Effect]:
        """Once the first eager rows are in and nothing is left to do: warm Inductor up."""
        if self.warmed or self.ready is None or self.book.runs or self.ready.protocol < 2:
            return []
        if not any(key[3] == "eager" for key in self.book.cache):
            return []
        self.warmed = True
        self.warmup = self.new_id()
        return [Send(WarmupRequest(self.warmup, self.settings.device))]

    def _sync_shown(self) -> None:
        for mode, key in self.focus_keys().items():
            m = self.book.cache.get(key)
            if m is not None:
                self.shown[mode] = m
                self.shown_batch[mode] = self.book.batch[key]

    @property
    def compile_delay(self) -> float:
        """The current wait before compiling: none until typing wastes a compile, a pause where
        compiles run apart on the CPU (see ``Timing``)."""
        on_gpu = (self.device or "").startswith("cuda")
        if self.compiles_apart and not on_gpu:
            shortest = self.timing.compile_delay_s
        elif self.compile_backoff <= 1.0:
            return 0.0
        else:
            shortest = self.timing.compile_wait_s
        return min(self.timing.compile_delay_max_s, shortest * self.compile_backoff)

    def _compiling_another_chain(self) -> bool:
        """A focus run of another chain still owes compiled rows (only its end may be left to come:
        the rows of a compile that has delivered them were not wasted)."""
        book = self.book
        return any(
            run.kind == "focus"
            and not run.cancelled
            and run.chain != self.chain
            and any(key[3] != "eager" and key not in book.cache and key not in book.failed for key in run.keys())
            for run in book.runs.values()
        )

    def _is_current(self, run: Run) -> bool:
        return run.kind != "other" and not run.cancelled and run.chain == self.chain and run.target == self.target()

    def _failed(self, event: RequestFailed) -> list[Effect]:
        run = self.book.runs.get(event.id)
        if run is not None and event.error.kind == "link":
            keys = set(run.keys())
            if self._sweep_of(run) is not None:
                self.sweep_lost = True
            if not keys & self.relinked:
                self.relinked |= keys  # not the chain's doing: measured again once the link is back
                return []
        run = self.book.failure(event)
        if run is not None and event.size is None:
            for key in run.keys():  # a request's failure is none of the rows it did bring
                if key in self.book.cache and self.book.failed.get(key) is event:
                    del self.book.failed[key]
        if run is None or not self._is_current(run) or event.error.kind in ("worker", "link"):
            return []  # the pane of the run says it (a worker's), the status bar the link's
        where = " ".join(x for x in (event.mode or "", f"N={format_size(event.size)}" if event.size else "") if x)
        return [Notice(f"{where + ': ' if where else ''}{event.error.located()}", "bold red", of_text=True)]

    def _done(self, event: RequestDone, now: float) -> list[Effect]:
        if event.id == self.warmup:
            self.warmup = None
        run = self.book.done(event)
        if run is None:
            return []
        effects: list[Effect] = []
        if self._is_current(run) and any(mode != "eager" for mode in run.request.modes):
            self.compile_backoff = max(1.0, self.compile_backoff * 0.8)  # a compile that counted
        if self._is_current(run) and not run.failures and not self.running():
            what = "sweep" if run.kind == "sweep" else "profile"
            effects.append(Notice(f"{what} done", "green", elapsed_s=now - run.started))
        return effects + self._plan(now)
