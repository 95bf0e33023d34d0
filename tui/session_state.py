"""What the live loop knows, and what it shows: the text and its chain, the settings, the worker,
the runs and their results, the sweeps, the rows shown and why they are stale; and the views the
panes draw from them (``focus_view()``, ``sweep_view()``, ``activity()``).

``tui.session.LiveSession`` changes it on each event; everything here reads it, apart from
``set_text()`` and ``sync_shown()``, which keep the fields derived from the text and the cache in
step. No textual, no torch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from probes.chain.matching import normalize
from probes.link.protocol import ChainErrorInfo, Measurement, RequestFailed, SourceRef, WorkerReady
from probes.link.settings import Settings
from tui.runs import MeasureKey, Run, RunBook, SweepResults, SweepSent, Target, merged_sweep
from tui.views import FocusView, ModeActivity, ModeView, SweepView, WorkerActivity, step_activity

SWEEPS_KEPT = 16
"""Sweeps kept, one per chain text, so that going back to a text shows its sweep again."""
EMPTY = "empty"
"""What an empty editor is: no chain yet, not a chain with an error."""


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


@dataclass
class EntryBook:
    """One device entry's runs, results and rows shown (``--device`` lists several): each entry
    measures the session's requests on its own device, and its results are kept under the
    session's keys, so that one key finds every device's reading."""

    name: str
    """What the views call the entry (``b:cpu``); empty for a single device."""
    book: RunBook = field(default_factory=RunBook)
    shown: dict[str, Measurement] = field(default_factory=dict)
    """The last measurement shown per mode (shown stale once the text or settings move on)."""
    shown_batch: dict[str, str] = field(default_factory=dict)
    """The request each of those came from."""
    sweeps: dict[str, SweepResults] = field(default_factory=dict)
    """Its part of each sweep, by the id of the request it went out as."""
    ready: WorkerReady | None = None
    """Its worker, while one answers."""
    down: bool = False
    """No worker answers and none is starting (a failed start, given up): nothing is sent to it."""


class SessionState:
    """What one app's live loop knows (see the module doc)."""

    def __init__(self, settings: Settings, text: str, timing: Timing) -> None:
        self.settings = settings
        self.timing = timing
        self.text = ""
        self.chain = ""
        self._checked: tuple[str, ChainErrorInfo | None] | None = None
        """The text last checked by the chain language, and what was wrong with it."""
        self.split: set[str] = set()
        """Requests sent while compiles ran in a worker of their own: their eager and compiled
        readings were timed in two processes."""
        self.sweeps: dict[str, SweepSent] = {}
        """The last sweep of each chain text, as it went out: a chain shows its own sweep, never
        another's; each entry keeps its part (``EntryBook.sweeps``)."""
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
        self.entries = [EntryBook("")]
        """Every device entry (``--device`` lists several): what is sent and when is decided by
        the lead's alone (``lead``), and the others measure it too (``tui.fleet``)."""
        self.followed = 0
        """The entry the kernel and sweep panes show (``d`` moves it on)."""
        self.spread = False
        """The sweep's pairs are shared out among the entries, and the live size goes to the lead
        alone (``--spread``, devices of one kind)."""
        self.set_text(text)

    # -- the lead: the first entry whose worker answers -------------------------------------------

    @property
    def lead(self) -> int:
        """The entry whose events drive the loop: the first whose worker is ready (the first
        while none is), so that a box that cannot be reached holds up no other."""
        return next((index for index, entry in enumerate(self.entries) if entry.ready is not None), 0)

    @property
    def ready(self) -> WorkerReady | None:
        return self.entries[self.lead].ready

    @property
    def book(self) -> RunBook:
        return self.entries[self.lead].book

    @property
    def shown(self) -> dict[str, Measurement]:
        return self.entries[self.lead].shown

    @property
    def shown_batch(self) -> dict[str, str]:
        return self.entries[self.lead].shown_batch

    def sending_to(self) -> list[int]:
        """The entries a request goes to now: every one not down, the lead first."""
        lead = self.lead
        return [lead, *(index for index, entry in enumerate(self.entries) if index != lead and not entry.down)]

    # -- what the loop is about now ----------------------------------------------------------

    @property
    def device(self) -> str | None:
        if self.settings.device:
            return self.settings.device
        return self.ready.default_device if self.ready else None

    @property
    def sweep(self) -> SweepResults | None:
        """The last sweep of the current text (None: no sweep yet, whatever other texts have), the
        lead's part (all of it, spread)."""
        return self.entry_sweep(self.lead)

    def sweep_of(self, run: Run, entry: int) -> SweepResults | None:
        """``entry``'s part of a sweep that ``run`` measures, if it is one."""
        return self.entries[entry].sweeps.get(run.request.id)

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

    def is_current(self, run: Run) -> bool:
        return run.kind != "other" and not run.cancelled and run.chain == self.chain and run.target == self.target()

    def running(self) -> bool:
        return self.book.running()

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

    def compiling_another_chain(self) -> bool:
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

    # -- keeping the derived fields in step --------------------------------------------------------

    def set_text(self, text: str) -> None:
        self.text = text
        self.chain = normalize(text)

    @property
    def parse_error(self) -> ChainErrorInfo | None:
        """What is wrong with the text as a chain (None for a file's source), checked when first
        asked: the app's first frame shows the text before the chain language is imported."""
        if self.source is not None:
            return None
        if self._checked is None or self._checked[0] != self.text:
            from probes.chain.expr import ChainError, parse_chain  # off the first frame

            try:
                parse_chain(self.text)
            except ChainError as exc:
                self._checked = (self.text, exc.info)
            else:
                self._checked = (self.text, None)
        return self._checked[1]

    def sync_shown(self) -> None:
        for entry in self.entries:
            for mode, key in self.focus_keys().items():
                m = entry.book.cache.get(key)
                if m is not None:
                    entry.shown[mode] = m
                    entry.shown_batch[mode] = entry.book.batch[key]

    # -- views ---------------------------------------------------------------------------------

    def focus_view(self, now: float, entry: int = 0) -> FocusView:
        """Per selected mode at the focus size: what to show, whether it is fresh, what runs for it
        (on the device of ``entry``)."""
        of = self.entries[entry]
        book = of.book
        keys = self.focus_keys()
        modes = []
        outdated = False
        coming = True
        for mode, key in keys.items():
            fresh = book.cache.get(key)
            failure = book.failed.get(key)
            shown = fresh or of.shown.get(mode)
            batch = book.batch.get(key) if fresh is not None else of.shown_batch.get(mode)
            activity = self.mode_activity(mode, key, book)
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
        view = FocusView(self.settings.focus_size, tuple(modes), stale, updating, errors, busy, self.held, two, of.name)
        return view.sweep_share_only(self.entries[self.lead].name) if self.spread and entry != self.lead else view

    def mode_activity(self, mode: str, key: MeasureKey, book: RunBook | None = None) -> ModeActivity:
        """What happens for ``key`` (the current chain and settings in ``mode``) now (in ``book``,
        an entry's; the first entry's by default)."""
        book = book or self.book
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

    def entry_sweep(self, entry: int) -> SweepResults | None:
        """``entry``'s part of the last sweep of this text; the whole sweep, merged, where it was
        spread (each point saying which entry measured it)."""
        sent = self.sweeps.get(self.chain)
        if sent is None:
            return None
        if sent.spread:
            parts = [(e, part) for e, rid in sent.parts if (part := self.entries[e].sweeps.get(rid)) is not None]
            return merged_sweep(sent.request, parts) if parts else None
        return self.entries[entry].sweeps.get(sent.request.id)

    def spread_sweep(self) -> bool:
        """The last sweep of this text was spread over the entries."""
        sent = self.sweeps.get(self.chain)
        return sent is not None and sent.spread

    def sweep_view(self, entry: int = 0) -> SweepView:
        """The last sweep of this text (on the device of ``entry``), stale (with why) when it no
        longer covers the settings; none for a text never swept (another text's sweep is never
        shown for it)."""
        s = self.settings
        sweep = self.entry_sweep(entry)
        stale = None
        if sweep is not None and not sweep.covers(self.chain, self.target(), self.modes(), s.sizes):
            stale = "settings changed: s sweeps again"
        running = sweep is not None and not sweep.run.done and not sweep.run.cancelled
        two = sweep is not None and sweep.run.request.id in self.split
        view = SweepView(sweep, s.sizes, s.compiled_mode, stale, running, self.sweep_lost, two)
        if self.spread_sweep():  # one sweep of every entry, each point naming its own
            return dataclasses.replace(view, spread=tuple(e.name for e in self.entries))
        return dataclasses.replace(view, entry=self.entries[entry].name)

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

    def cached(self, text: str, mode: str) -> Measurement | None:
        """The measurement of ``text`` in ``mode`` at the focus size with the current target, if any."""
        return self.book.cache.get((normalize(text), self.target(), self.settings.focus_size, mode))

    def measured_together(self, text: str, modes: tuple[str, str]) -> bool:
        """Whether the cached measurements of ``text`` in both ``modes`` (focus size, current
        target) came from one request: only such a pair makes a ratio (see ``RunBook.batch``)."""
        one, other = ((normalize(text), self.target(), self.settings.focus_size, mode) for mode in modes)
        return self.book.same_batch(one, other)

    def shown_measurements(self, entry: int = 0) -> list[Measurement]:
        """Everything on screen now (sweep rows and the focus rows) of the device ``entry``, once each."""
        seen: dict[tuple[str, int, str, str, str], Measurement] = {}
        of = self.entries[entry]
        sweep_results = self.entry_sweep(entry)
        sweep = sweep_results.measurements(entry if self.spread_sweep() else None) if sweep_results else []
        focus = [m for mode in self.modes() if (m := of.shown.get(mode)) is not None]
        for m in [*sweep, *focus]:
            seen[(m.chain, m.size, m.mode, m.dtype, m.device)] = m
        return list(seen.values())
