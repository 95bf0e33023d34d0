"""The kernel-tui app: edit an op chain, see its kernels eager vs compiled, live.

The app is a client of the probe worker (``probes.client.WorkerClient``): it never imports torch
and never blocks. The live loop:

1. every edit is parsed at once (``probes.expr.parse_chain``): an error shows inline, and the last
   results stay on screen marked STALE;
2. a valid text is profiled after a short idle pause at one "focus" size, in the selected modes;
   a newer edit cancels the stale request (in the worker too) before sending its own;
3. results replace the panes when the first one of the new request arrives (never mixed with
   the old ones); Progress events show in the status bar with the elapsed time;
4. ``s`` runs the sweep over all sizes, streaming rows into the sweep pane as they arrive.

Worker failures (a crash, a hang, an OOM, a CUDA error) become messages: never a traceback, never
an exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, TextArea

from probes.client import WorkerClient
from probes.expr import ChainError, parse_chain
from probes.protocol import (
    COMPILED_MODES,
    DTYPES,
    MODES,
    ChainErrorInfo,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WorkerReady,
)
from probes.summary import format_size, parse_size, parse_sizes
from tui import export, workspace as ws
from tui.results import ResultSet, RunKey, stream_into
from tui.screens.dialogs import ConfirmDialog, InputDialog
from tui.screens.help import HelpScreen
from tui.widgets.chains_pane import ChainsPane

if TYPE_CHECKING:
    from tui.screens.compare import CompareScreen
from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.kernel_pane import KernelPane, KernelTable, PaneState
from tui.widgets.op_chain_pane import OpChainPane
from tui.widgets.status_bar import StatusBar
from tui.widgets.sweep_pane import CHART_VIEWS, SweepPane

DEBOUNCE_S = 0.4
AUTOSAVE_S = 1.0
VIEWS = ("kernels", "ops", "sweep")
COMPACT_WIDTH = 120
COMPACT_HEIGHT = 34
CACHE_SIZE = 64

LETTER_ACTIONS = frozenset(
    {
        "edit", "sweep", "cycle_modes", "cycle_compile_mode", "cycle_dtype", "cycle_device", "set_sizes",
        "set_focus_size", "set_reps", "cycle_chart", "cycle_view", "toggle_chains", "stop", "export_json",
        "export_csv", "export_trace", "export_svg", "quit_key", "help_key", "show_view", "compare",
    }
)  # fmt: skip
"""Actions bound to printable keys: they work (and show in the footer) outside the editor only."""


def _reps_check(value: str) -> str | None:
    if value.lower() in ("", "auto"):
        return None
    try:
        reps = int(value)
    except ValueError:
        return "give a whole number of reps (1-10000) or 'auto'"
    return None if 1 <= reps <= 10_000 else "reps must be between 1 and 10000"


def _sizes_check(value: str) -> str | None:
    try:
        parse_sizes(value)
    except ValueError as exc:
        return str(exc)
    return None


def _size_check(value: str) -> str | None:
    try:
        parse_size(value)
    except ValueError as exc:
        return str(exc)
    return None


class KernelTuiApp(App[int]):
    """The live kernel profiler."""

    CSS_PATH = "app.tcss"
    TITLE = "kernel-tui"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("e,i", "edit", "Edit", tooltip="Back to the editor"),
        Binding("s", "sweep", "Sweep", tooltip="Measure every size (streams rows into the sweep pane)"),
        Binding("v", "cycle_view", "View", tooltip="kernels / op chain / sweep (narrow screens)"),
        Binding("m", "cycle_modes", "Mode", tooltip="eager / compiled / both"),
        Binding("c", "cycle_compile_mode", "Compile", tooltip="compile mode: default, max-autotune, reduce-overhead"),
        Binding("t", "cycle_dtype", "Dtype", tooltip="fp32 / bf16 / fp16"),
        Binding("d", "cycle_device", "Device", tooltip="each cuda:N and cpu"),
        Binding("question_mark", "help_key", "Help"),
        Binding("q", "quit_key", "Quit"),
        Binding("o", "compare", "Compare",
                tooltip="side by side: this chain vs the one marked (space in the chains pane), else eager vs compiled"),
        Binding("z", "set_sizes", "Sizes", tooltip="the sweep's sizes"),
        Binding("n", "set_focus_size", "N", tooltip="the size profiled on every edit"),
        Binding("r", "set_reps", "Reps", tooltip="timing reps (or auto)"),
        Binding("g", "cycle_chart", "Chart", show=False, tooltip="wall time / device time / GB/s"),
        Binding("l", "toggle_chains", "Chains", show=False, tooltip="show or hide the chains pane"),
        Binding("x", "stop", "Stop", show=False, tooltip="cancel the running request"),
        Binding("J", "export_json", "Export JSON", show=False),
        Binding("C", "export_csv", "Export CSV", show=False),
        Binding("T", "export_trace", "Export trace", show=False),
        Binding("S", "export_svg", "Screenshot", show=False),
        Binding("f1", "help", "Help", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+r", "run_now", "Run now", show=False),
    ]

    def __init__(
        self,
        *,
        chain: str | None = None,
        worker_command: list[str] | str | None = None,
        workspace_path: Path | None = None,
        device: str | None = None,
        sizes: list[int] | None = None,
        dtype: str | None = None,
        modes: str | None = None,
        focus_size: int | None = None,
        reps: int | None = None,
        export_dir: Path | None = None,
        frozen: bool = False,
        highlight: bool | None = None,
        debounce_s: float = DEBOUNCE_S,
        autosave: bool = True,
    ) -> None:
        super().__init__()
        self.workspace_path = workspace_path or ws.default_path()
        self.workspace, warning = ws.load(self.workspace_path)
        self._startup_warning = warning
        settings = self.workspace.settings
        if chain is not None:
            self.workspace.select_text(chain)
        if device is not None:
            settings.device = device
        if sizes is not None:
            settings.sizes = list(sizes)
        if dtype is not None:
            settings.dtype = dtype
        if modes is not None:
            settings.modes = modes
        if focus_size is not None:
            settings.focus_size = focus_size
        if reps is not None:
            settings.reps = reps
        self.export_dir = export_dir or Path.cwd()
        self.frozen = frozen
        """Tests and snapshots: no clock in the status bar, no cursor blink, no spinner."""
        self.highlight = highlight
        self.debounce_s = debounce_s
        self.autosave = autosave
        self.client = WorkerClient(worker_command, on_state=self._worker_state)
        self.ready: WorkerReady | None = None
        self.parse_error: ChainErrorInfo | None = None
        self.shown_focus: ResultSet | None = None
        self.pending_focus: ResultSet | None = None
        self.shown_sweep: ResultSet | None = None
        self.pending_sweep: ResultSet | None = None
        self.active: ResultSet | None = None
        self.progress: Progress | None = None
        self.cache: dict[RunKey, ResultSet] = {}
        self.view = "kernels"
        self.compact = False
        self.chains_hidden: bool | None = None
        self.last_export: Path | None = None
        self.messages: list[tuple[str, str]] = []
        """Every status-bar message (the newest last), for the record and for tests."""
        self._started_at = 0.0
        self._spin = 0
        self._debounce = None
        self._save_timer = None
        self._kt_closing = False
        self._run_when_ready = False
        self._checked_text: str | None = None

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The layout classes are known from the terminal size already: set here, the first frame
        # needs no restyle of the whole tree.
        self.compact = self._is_compact(self.size.width, self.size.height)
        with Container(id="main", classes=" ".join(self._layout_classes())):
            yield ChainsPane(id="chains")
            with Vertical(id="editor-box"):
                yield ChainEditor(self.workspace.chain.text, highlight=self.highlight, id="editor")
                yield ChainErrorLine(id="chain-error")
            yield OpChainPane(id="ops")
            yield KernelPane(id="kernels")
            yield SweepPane(id="sweep")
        yield StatusBar(id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = "kernel-tui"
        editor = self.query_one(ChainEditor)
        editor.set_text(editor.text)  # the cursor at the end, ready to type
        if self.frozen:
            editor.cursor_blink = False
        self.query_one(ChainsPane).show_chains(self.workspace.chains, self.workspace.current)
        self._apply_layout(self.size.width, self.size.height)
        self._status(settings=self._settings_text())
        if self._startup_warning:
            self._message(self._startup_warning, "yellow")
            self.notify(self._startup_warning, severity="warning", timeout=8)
        self._check_text(schedule=False)
        self._run_when_ready = self.parse_error is None
        self.set_interval(0.1, self._tick)
        editor.focus()
        self._start_worker()
        self.refresh_panes()

    def on_resize(self, event) -> None:  # noqa: ANN001 (textual.events.Resize)
        self._apply_layout(event.size.width, event.size.height)

    @staticmethod
    def _is_compact(width: int, height: int) -> bool:
        return width < COMPACT_WIDTH or height < COMPACT_HEIGHT

    def _layout_classes(self) -> set[str]:
        hidden = self.chains_hidden if self.chains_hidden is not None else self.compact
        classes = {"-hide-chains" if hidden else "-show-chains", f"-view-{self.view}"}
        if self.compact:
            classes.add("-compact")
        return classes

    def _apply_layout(self, width: int, height: int) -> None:
        main = self.query_one("#main")
        compact = self._is_compact(width, height)
        changed = compact != self.compact
        self.compact = compact
        classes = self._layout_classes()
        if set(main.classes) != classes:
            main.set_classes(classes)  # one restyle, not one per class
        if changed:
            self.refresh_panes()
        # Pane contents depend on their widths: render again once the new layout is known.
        self.call_after_refresh(self.refresh_panes)

    # -- worker lifecycle ------------------------------------------------------------------------

    def _worker_state(self, state: str, detail: str) -> None:
        if self._kt_closing:
            return
        with contextlib.suppress(Exception):
            self._status(worker_state=state, worker_detail=detail if state != "busy" else "")
            if state == "ready" and self.client.ready is not None and self.client.ready is not self.ready:
                self._worker_ready(self.client.ready)

    @work(group="startup", exit_on_error=False)
    async def _start_worker(self) -> None:
        try:
            ready = await self.client.start()
        except Exception as exc:  # noqa: BLE001 (any start failure is a message, never a crash)
            detail = str(exc) or exc.__class__.__name__
            self._status(worker_state="failed", worker_detail="")
            self._message(f"the worker did not start: {detail} (ctrl+r retries)", "bold red")
            return
        self._worker_ready(ready)

    def _worker_ready(self, ready: WorkerReady) -> None:
        self.ready = ready
        names = [d.name for d in ready.devices]
        settings = self.workspace.settings
        if settings.device is not None and settings.device not in names:
            wanted = settings.device
            if wanted == "cuda" and any(n.startswith("cuda") for n in names):
                settings.device = next(n for n in names if n.startswith("cuda"))
            else:
                settings.device = None
                warning = f"device {wanted} is not available here; using {ready.default_device}"
                self._message(warning, "yellow")
                self.notify(warning, severity="warning", timeout=8)
        self._status(device=self._device_label(), torch=ready.torch_version, settings=self._settings_text())
        if self._run_when_ready and self.parse_error is None:
            self._run_when_ready = False
            self.start_focus_run()
        self.refresh_panes()

    def _device_name(self) -> str | None:
        settings = self.workspace.settings
        if settings.device:
            return settings.device
        return self.ready.default_device if self.ready else None

    def _device_label(self) -> str:
        name = self._device_name()
        if self.ready:
            for d in self.ready.devices:
                if d.name == name:
                    return d.label if d.label.lower().startswith(name.split(":")[0]) else f"{d.label} ({name})"
        return name or ""

    async def _kt_shutdown(self) -> None:
        if self._kt_closing:
            return
        self._kt_closing = True
        self.save_workspace()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.close(), 8)

    async def action_quit(self) -> None:
        await self._kt_shutdown()
        self.exit(0)

    async def action_quit_key(self) -> None:
        await self.action_quit()

    async def on_unmount(self) -> None:
        await self._kt_shutdown()

    # -- the live loop -----------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self.query_one(ChainEditor).text

    def focus_key(self) -> RunKey:
        s = self.workspace.settings
        return RunKey.of(self.text, self._device_name(), s.dtype, s.request_modes(), [s.focus_size])

    def sweep_key(self) -> RunKey:
        s = self.workspace.settings
        return RunKey.of(self.text, self._device_name(), s.dtype, s.request_modes(), s.sizes)

    @on(TextArea.Changed, "#editor")
    def _edited(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        if text == self._checked_text:
            return  # e.g. the echo of load_text(): nothing to re-check or re-run
        chain = self.workspace.chain
        if text != chain.text:
            chain.text = text
            self._schedule_save()
            self.query_one(ChainsPane).show_chains(self.workspace.chains, self.workspace.current)
        self._check_text(schedule=True)
        self.refresh_panes()

    def _check_text(self, *, schedule: bool) -> None:
        text = self.text
        self._checked_text = text
        try:
            parse_chain(text)
        except ChainError as exc:
            self.parse_error = exc.info
        else:
            self.parse_error = None
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if self.parse_error is not None or not schedule:
            return
        cached = self.cache.get(self.focus_key())
        if cached is not None and cached.results and not cached.failures:
            self.shown_focus = cached
            return
        self._debounce = self.set_timer(self.debounce_s, self.start_focus_run)

    def _request_for(self, kind: str) -> tuple[ResultSet, ProfileRequest]:
        s = self.workspace.settings
        key = self.focus_key() if kind == "focus" else self.sweep_key()
        rid = self.client.new_id()
        sizes = [s.focus_size] if kind == "focus" else list(s.sizes)
        request = ProfileRequest(
            id=rid, chain=self.text, sizes=sizes, modes=s.request_modes(), device=s.device, dtype=s.dtype, reps=s.reps
        )
        return ResultSet(key, self.text, kind, rid), request

    def start_focus_run(self, force: bool = False) -> None:
        self._debounce = None
        if self.parse_error is not None:
            return
        if self.ready is None:
            self._run_when_ready = True
            return
        key = self.focus_key()
        active = self.active
        if not force:
            if active is not None and not active.done and active.key.chain == key.chain and (
                (active.kind == "focus" and active.key == key) or (active.kind == "sweep" and active.matches(key))
            ):
                return  # already being measured (a sweep at the focus size feeds the kernel pane too)
            cached = self.cache.get(key)
            if cached is not None and cached.results and not cached.failures:
                self.shown_focus = cached
                self.refresh_panes()
                return
        rs, request = self._request_for("focus")
        self.pending_focus = rs
        self._launch(rs, request)

    def start_sweep(self) -> None:
        if self._debounce is not None:  # the sweep supersedes a pending re-profile of the same text
            self._debounce.stop()
            self._debounce = None
        rs, request = self._request_for("sweep")
        self.pending_sweep = rs
        self._launch(rs, request)

    def _launch(self, rs: ResultSet, request: ProfileRequest) -> None:
        self._cancel_active()
        self.active = rs
        self.progress = None
        self._started_at = time.monotonic()
        self._status(activity="sending", elapsed="")
        self._profile(rs, request)
        self.refresh_panes()

    def _cancel_active(self) -> None:
        old = self.active
        if old is not None and not old.done:
            old.done = True
            old.cancelled = True
            self.run_worker(self.client.cancel(old.request_id), group="cancel", exit_on_error=False)
        self.active = None

    @work(exclusive=True, group="profile", exit_on_error=False)
    async def _profile(self, rs: ResultSet, request: ProfileRequest) -> None:
        await stream_into(self.client, rs, request, self._handle_event)

    def _handle_event(self, rs: ResultSet, event: object) -> None:
        if isinstance(event, Progress):
            if self.active is rs:
                self.progress = event
                step = f" ({event.step}/{event.total})" if event.total else ""
                self._status(activity=f"{event.message}{step}")
        elif isinstance(event, MeasurementResult):
            m = event.measurement
            rs.add(m)
            if rs.kind == "focus":
                self.shown_focus = rs
                self._remember(rs.key, rs)
            else:
                self.shown_sweep = rs
                self._feed_focus_from_sweep(rs, m)
        elif isinstance(event, RequestFailed):
            rs.failures.append(event)
            where = " ".join(x for x in (event.mode or "", f"N={format_size(event.size)}" if event.size else "") if x)
            self._message(f"{where + ': ' if where else ''}{event.error.located()}", "bold red")
        elif isinstance(event, RequestDone):
            rs.done = True
            rs.cancelled = rs.cancelled or event.cancelled
            rs.elapsed_s = time.monotonic() - self._started_at
            if self.active is rs:
                self.active = None
                self.progress = None
                self._status(activity="", elapsed="")
                self.call_after_refresh(self.refresh_panes)  # once more, with the final layout
                if not rs.failures and not rs.cancelled:
                    took = "" if self.frozen else f" in {rs.elapsed_s:.1f} s"
                    what = "sweep" if rs.kind == "sweep" else "profile"
                    self._message(f"{what} done{took}", "green")
        self.refresh_panes()

    def _feed_focus_from_sweep(self, rs: ResultSet, m) -> None:  # noqa: ANN001
        """A sweep at the focus size also refreshes the kernel and op panes (same chain and settings)."""
        s = self.workspace.settings
        if m.size != s.focus_size:
            return
        key = RunKey(rs.key.chain, rs.key.device, rs.key.dtype, rs.key.modes, (s.focus_size,))
        focus = self.shown_focus if self.shown_focus is not None and self.shown_focus.key == key else None
        if focus is None:
            focus = ResultSet(key, rs.text, "focus", rs.request_id, done=True)
            self.shown_focus = focus
        focus.add(m)
        self._remember(key, focus)

    def _remember(self, key: RunKey, rs: ResultSet) -> None:
        """Keep recent results by chain and settings (switching back shows them at once)."""
        self.cache.pop(key, None)
        self.cache[key] = rs
        while len(self.cache) > CACHE_SIZE:
            self.cache.pop(next(iter(self.cache)))

    # -- rendering -------------------------------------------------------------------------------

    def _is_running(self, rs: ResultSet | None) -> bool:
        return rs is not None and self.active is rs and not rs.done

    def _is_stale(self, shown: ResultSet | None, pending: ResultSet | None, key: RunKey) -> bool:
        if shown is None:
            return False
        if self.parse_error is not None or not shown.matches(key):
            return True
        # The newest run for this very text failed without results: what is shown is older.
        return pending is not None and pending is not shown and pending.key == key and bool(pending.failures) and not pending.results

    def refresh_panes(self) -> None:
        if not self.is_mounted or self._kt_closing:
            return
        try:
            self._refresh_panes()
        except Exception as exc:  # noqa: BLE001 (a rendering bug must not take the app down)
            if os.environ.get("KERNEL_TUI_DEBUG"):
                raise
            self.log.error(f"refresh failed: {exc!r}")

    def _refresh_panes(self) -> None:
        s = self.workspace.settings
        focus_key = self.focus_key()
        stale = self._is_stale(self.shown_focus, self.pending_focus, focus_key)
        running = self._is_running(self.pending_focus)
        current_mode = self.progress.mode if running and self.progress is not None else None
        errors = []
        pending = self.pending_focus
        if pending is not None and pending is not self.shown_focus and pending.failures and not pending.results:
            errors = pending.failures
        state = PaneState(
            results=self.shown_focus,
            modes=s.request_modes(),
            size=s.focus_size,
            stale=stale,
            running=running,
            current_mode=current_mode,
            errors=errors,
        )
        kernels = self.query_one(KernelPane)
        kernels.show(state, compact=self.compact)
        main = self.query_one("#main")
        if self.compact:
            main.styles.grid_rows = None
        else:
            main.styles.grid_rows = f"10 {min(kernels.desired_height(False), max(8, self.size.height // 2 - 4))} 1fr"
        shown = self.shown_focus
        eager = shown.at(s.focus_size, "eager") if shown else None
        compiled = None
        if shown is not None:
            compiled = next((shown.at(s.focus_size, m) for m in s.request_modes() if m != "eager" and shown.at(s.focus_size, m)), None)
        self.query_one(OpChainPane).show(eager if "eager" in s.request_modes() else None, compiled, stale=stale)
        sweep_stale = self._is_stale(self.shown_sweep, self.pending_sweep, self.sweep_key())
        self.query_one(SweepPane).show(
            self.shown_sweep if self.shown_sweep is not None else (self.pending_sweep if self._is_running(self.pending_sweep) else None),
            stale=sweep_stale,
            running=self._is_running(self.pending_sweep),
            compile_mode=s.compile_mode,
            chart=s.chart,
            compact=self.compact,
            peak_gbps=self._peak(),
            sizes=s.sizes,
        )
        editor = self.query_one(ChainEditor)
        editor.border_title = f"chain · {self.workspace.chain.name}"
        if self.parse_error is not None:
            editor.border_subtitle = "✗ error" if self.text.strip() else "empty"
        elif running:
            editor.border_subtitle = "profiling…"
        elif stale:
            editor.border_subtitle = "edited"
        else:
            editor.border_subtitle = "✓"
        error_line = self.query_one(ChainErrorLine)
        if self.parse_error is not None and self.text.strip():
            error_line.show_error(self.parse_error)
        else:
            error_line.show_error(None)
        self._status(settings=self._settings_text())

    def _peak(self) -> float | None:
        if self.ready is None:
            return None
        name = self._device_name()
        return next((d.peak_gbps for d in self.ready.devices if d.name == name), None)

    def _settings_text(self) -> str:
        s = self.workspace.settings
        reps = "auto" if s.reps is None else str(s.reps)
        return f"{s.describe_modes()} · {s.dtype} · N={format_size(s.focus_size)} · reps {reps}"

    def _status(self, **changes: object) -> None:
        with contextlib.suppress(Exception):
            self.query_one(StatusBar).set(**changes)

    def _message(self, text: str, style: str = "") -> None:
        self.messages.append((text, style))
        del self.messages[:-50]
        self._status(message=text, message_style=style)

    def _tick(self) -> None:
        if self.active is None or self.active.done:
            return
        if self.frozen:
            return
        self._spin += 1
        self._status(elapsed=f"{time.monotonic() - self._started_at:.1f}s", spin=self._spin)

    # -- workspace -------------------------------------------------------------------------------

    def _schedule_save(self) -> None:
        if not self.autosave:
            return
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(AUTOSAVE_S, self.save_workspace)

    def save_workspace(self) -> None:
        if not self.autosave:
            return
        try:
            ws.save(self.workspace, self.workspace_path)
        except OSError as exc:
            self._message(f"could not save the workspace to {self.workspace_path}: {exc.strerror or exc}", "bold red")

    def _open_chain(self, index: int) -> None:
        self.workspace.current = index
        chain = self.workspace.chain
        self.query_one(ChainsPane).show_chains(self.workspace.chains, self.workspace.current)
        editor = self.query_one(ChainEditor)
        if editor.text != chain.text:
            editor.set_text(chain.text)
        else:
            self._check_text(schedule=True)
            self.refresh_panes()
        self._schedule_save()

    @on(OptionList.OptionSelected, "#chains")
    def _chain_selected(self, event: OptionList.OptionSelected) -> None:
        self._open_chain(event.option_index)
        self.query_one(ChainEditor).focus()

    def action_new_chain(self) -> None:
        index = self.workspace.add("", "chain")
        self._open_chain(index)
        self.query_one(ChainEditor).focus()
        self._message(f"new chain {self.workspace.chain.name}: type an expression", "")

    def action_duplicate_chain(self) -> None:
        index = self.workspace.duplicate()
        self._open_chain(index)
        self._message(f"duplicated as {self.workspace.chain.name}", "")

    def action_rename_chain(self) -> None:
        def done(value: str | None) -> None:
            if value:
                name = self.workspace.rename(value)
                self._open_chain(self.workspace.current)
                self._message(f"renamed to {name}", "")

        self.push_screen(
            InputDialog("Rename chain", "A name for this chain:", self.workspace.chain.name,
                        lambda v: None if v.strip() else "the name cannot be empty", id="rename-dialog"),
            done,
        )  # fmt: skip

    def action_delete_chain(self) -> None:
        name = self.workspace.chain.name

        def done(yes: bool | None) -> None:
            if yes:
                self.workspace.delete()
                self._open_chain(self.workspace.current)
                self._message(f"deleted {name}", "")

        self.push_screen(ConfirmDialog(f"Delete the chain '{name}'?"), done)

    # -- settings actions ------------------------------------------------------------------------

    def _settings_changed(self, what: str) -> None:
        self._schedule_save()
        self._message(what, "")
        self._check_text(schedule=False)
        if self.parse_error is None:
            cached = self.cache.get(self.focus_key())
            if cached is not None and cached.results and not cached.failures:
                self.shown_focus = cached
            else:
                if self._debounce is not None:
                    self._debounce.stop()
                self._debounce = self.set_timer(0.05, self.start_focus_run)
        self.refresh_panes()

    def action_cycle_modes(self) -> None:
        s = self.workspace.settings
        s.modes = ws.MODE_CHOICES[(ws.MODE_CHOICES.index(s.modes) + 1) % len(ws.MODE_CHOICES)]
        self._settings_changed(f"modes: {s.describe_modes()}")

    def set_modes(self, modes: str) -> None:
        self.workspace.settings.modes = modes
        self._settings_changed(f"modes: {self.workspace.settings.describe_modes()}")

    def action_cycle_compile_mode(self) -> None:
        s = self.workspace.settings
        s.compile_mode = ws.COMPILE_MODES[(ws.COMPILE_MODES.index(s.compile_mode) + 1) % len(ws.COMPILE_MODES)]
        self._settings_changed(f"compile mode: {s.compile_mode}")

    def set_compile_mode(self, mode: str) -> None:
        self.workspace.settings.compile_mode = mode
        self._settings_changed(f"compile mode: {mode}")

    def action_cycle_dtype(self) -> None:
        s = self.workspace.settings
        s.dtype = DTYPES[(DTYPES.index(s.dtype) + 1) % len(DTYPES)] if s.dtype in DTYPES else DTYPES[0]
        self._settings_changed(f"dtype: {s.dtype}")

    def set_dtype(self, dtype: str) -> None:
        self.workspace.settings.dtype = dtype
        self._settings_changed(f"dtype: {dtype}")

    def devices(self) -> list[str]:
        return [d.name for d in self.ready.devices] if self.ready else []

    def action_cycle_device(self) -> None:
        names = self.devices()
        if not names:
            self._message("the worker is still starting: devices are not known yet", "yellow")
            return
        current = self._device_name()
        nxt = names[(names.index(current) + 1) % len(names)] if current in names else names[0]
        self.set_device(nxt)

    def set_device(self, name: str) -> None:
        self.workspace.settings.device = name
        self._status(device=self._device_label())
        self._settings_changed(f"device: {name}")

    def action_set_sizes(self) -> None:
        s = self.workspace.settings

        def done(value: str | None) -> None:
            if value:
                s.sizes = parse_sizes(value)
                self._settings_changed("sweep sizes: " + ", ".join(format_size(n) for n in s.sizes))

        current = ",".join(format_size(n) for n in s.sizes)
        self.push_screen(
            InputDialog("Sweep sizes", "Comma-separated sizes N (1e6, 1_000_000 and 1M all work):", current,
                        _sizes_check, id="sizes-dialog"),
            done,
        )  # fmt: skip

    def action_set_focus_size(self) -> None:
        s = self.workspace.settings

        def done(value: str | None) -> None:
            if value:
                s.focus_size = parse_size(value)
                self._settings_changed(f"N = {format_size(s.focus_size)}")

        self.push_screen(
            InputDialog("Size N", "The size profiled on every edit:", format_size(s.focus_size), _size_check,
                        id="size-dialog"),
            done,
        )  # fmt: skip

    def action_set_reps(self) -> None:
        s = self.workspace.settings

        def done(value: str | None) -> None:
            if value is not None:
                s.reps = None if value.lower() in ("", "auto") else int(value)
                self._settings_changed(f"reps: {'auto' if s.reps is None else s.reps}")

        self.push_screen(
            InputDialog("Reps", "Timing reps per measurement (auto: sized to the kernel time):",
                        "auto" if s.reps is None else str(s.reps), _reps_check, id="reps-dialog"),
            done,
        )  # fmt: skip

    def action_cycle_chart(self) -> None:
        s = self.workspace.settings
        s.chart = CHART_VIEWS[(CHART_VIEWS.index(s.chart) + 1) % len(CHART_VIEWS)] if s.chart in CHART_VIEWS else "time"
        self._schedule_save()
        self.refresh_panes()

    def action_cycle_view(self) -> None:
        self.show_view(VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)])

    def show_view(self, view: str) -> None:
        self.view = view
        self._apply_layout(self.size.width, self.size.height)
        target = {"kernels": "#kernels", "ops": "#ops-table", "sweep": "#sweep-table"}[view]
        if view == "kernels":
            self.query_one(KernelPane).focus_table()
        else:
            with contextlib.suppress(Exception):
                self.query_one(target).focus()

    def action_toggle_chains(self) -> None:
        hidden = self.chains_hidden if self.chains_hidden is not None else self.compact
        self.chains_hidden = not hidden
        self._apply_layout(self.size.width, self.size.height)
        if not self.chains_hidden:
            self.query_one(ChainsPane).focus()

    # -- running ---------------------------------------------------------------------------------

    def action_run_now(self) -> None:
        if self.ready is None:
            self._run_when_ready = True
            if not any(w.group == "startup" and w.is_running for w in self.workers):
                self._message("starting the worker again…", "yellow")
                self._status(worker_state="starting", worker_detail="importing torch")
                self._start_worker()
            return
        self._check_text(schedule=False)
        if self.parse_error is not None:
            self._message(f"fix the chain first: {self.parse_error.located()}", "bold red")
            return
        self.cache.pop(self.focus_key(), None)
        self.start_focus_run(force=True)

    def action_sweep(self) -> None:
        self._check_text(schedule=False)
        if self.parse_error is not None:
            self._message(f"fix the chain first: {self.parse_error.located()}", "bold red")
            return
        if self.ready is None:
            self._message("the worker is still starting; try again in a moment", "yellow")
            return
        if self.compact:
            self.show_view("sweep")
        self.start_sweep()

    def action_stop(self) -> None:
        if self.active is None or self.active.done:
            self._message("nothing is running", "")
            return
        rs = self.active
        self._cancel_active()
        self.workers.cancel_group(self, "profile")
        self.progress = None
        self._status(activity="", elapsed="")
        self._message("cancelled", "yellow")
        rs.done = True
        self.refresh_panes()

    # -- focus -----------------------------------------------------------------------------------

    def action_edit(self) -> None:
        self.query_one(ChainEditor).focus()

    def action_leave_editor(self) -> None:
        if self.compact and self.view != "kernels":
            self.show_view(self.view)
        else:
            self.query_one(KernelPane).focus_table()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in LETTER_ACTIONS and isinstance(self.focused, (TextArea, Input)):
            return False
        return True

    @on(KernelPane.KernelChosen)
    def _kernel_chosen(self, event: KernelPane.KernelChosen) -> None:
        from tui.screens.kernel_detail import KernelDetail  # noqa: PLC0415 (rich.syntax: kept off start-up)

        self.push_screen(KernelDetail(event.measurement, event.row))

    # -- compare ---------------------------------------------------------------------------------

    def action_mark_compare(self) -> None:
        pane = self.query_one(ChainsPane)
        index = pane.highlighted if pane.highlighted is not None else self.workspace.current
        pane.marked = None if pane.marked == index else index
        pane.show_chains(self.workspace.chains, self.workspace.current)
        pane.highlighted = index
        if pane.marked is None:
            self._message("compare mark cleared", "")
        else:
            self._message(f"marked {self.workspace.chains[index].name}: o compares the current chain with it", "")

    def action_compare(self) -> None:
        marked = self.query_one(ChainsPane).marked
        if marked is not None and marked != self.workspace.current and marked < len(self.workspace.chains):
            self.compare_chains(marked)
        else:
            self.compare_modes()

    def _compare_modes_pair(self) -> tuple[str, str]:
        s = self.workspace.settings
        compiled = s.compile_mode if s.compile_mode in COMPILED_MODES else "compiled"
        return "eager", compiled

    def compare_modes(self) -> CompareScreen | None:
        """The current chain, eager (left) vs the compile mode (right)."""
        if self.ready is None:
            self._message("the worker is still starting; try again in a moment", "yellow")
            return None
        left_mode, right_mode = self._compare_modes_pair()
        return self._open_compare(
            [(self.text, left_mode, "left"), (self.text, right_mode, "right")], f"compare · {left_mode} vs {right_mode}"
        )

    def compare_chains(self, other: int) -> CompareScreen | None:
        """The current chain (left) vs chain ``other`` (right), in the last selected mode."""
        if self.ready is None:
            self._message("the worker is still starting; try again in a moment", "yellow")
            return None
        mode = self.workspace.settings.request_modes()[-1]
        chain = self.workspace.chains[other]
        return self._open_compare(
            [(self.text, mode, "left"), (chain.text, mode, "right")],
            f"compare · {self.workspace.chain.name} vs {chain.name} ({mode})",
        )

    def _open_compare(self, sides: list[tuple[str, str, str]], title: str) -> CompareScreen:
        from tui.screens.compare import CompareScreen, Side, side_label  # noqa: PLC0415 (off start-up)

        s = self.workspace.settings
        made: dict[str, Side] = {}
        wanted: dict[str, list[tuple[str, str]]] = {}
        for text, mode, which in sides:
            m = self._cached_measurement(text, mode)
            made[which] = Side(side_label(text, m, mode), m, pending=m is None)
            if m is None:
                wanted.setdefault(text, []).append((mode, which))
        screen = CompareScreen(made["left"], made["right"], title)
        self.push_screen(screen)
        for text, pairs in wanted.items():
            modes = [m for m in MODES if m in {mode for mode, _ in pairs}]
            try:
                parse_chain(text)
            except ChainError as exc:
                for mode, which in pairs:
                    failure = RequestFailed("", exc.info)
                    screen.update_side(which, Side(side_label(text, None, mode), None, failure, pending=False))
                continue
            self._compare_fetch(screen, text, modes, pairs, s.focus_size)
        return screen

    def _cached_measurement(self, text: str, mode: str):  # noqa: ANN202
        s = self.workspace.settings
        chain = RunKey.of(text, self._device_name(), s.dtype, [], []).chain
        for rs in [self.shown_focus, *reversed(self.cache.values())]:
            if rs is None or rs.key.chain != chain or rs.key.dtype != s.dtype or rs.key.device != self._device_name():
                continue
            m = rs.at(s.focus_size, mode)
            if m is not None:
                return m
        return None

    @work(group="compare", exit_on_error=False)
    async def _compare_fetch(self, screen: CompareScreen, text: str, modes: list[str], pairs: list[tuple[str, str]],
                             size: int) -> None:  # fmt: skip
        from tui.screens.compare import Side, side_label  # noqa: PLC0415 (off start-up)

        s = self.workspace.settings
        rid = self.client.new_id()
        key = RunKey.of(text, self._device_name(), s.dtype, modes, [size])
        rs = ResultSet(key, text, "focus", rid)
        request = ProfileRequest(id=rid, chain=text, sizes=[size], modes=modes, device=s.device, dtype=s.dtype, reps=s.reps)
        try:
            async for event in self.client.request(request):
                if isinstance(event, MeasurementResult):
                    rs.add(event.measurement)
                elif isinstance(event, RequestFailed):
                    rs.failures.append(event)
        except Exception as exc:  # noqa: BLE001
            rs.failures.append(RequestFailed(rid, ChainErrorInfo("worker", f"lost the worker: {exc}")))
        rs.done = True
        if rs.results and not rs.failures:
            self._remember(key, rs)
        for mode, which in pairs:
            m = rs.at(size, mode)
            failure = None if m is not None else (rs.failure_for(size, mode) or (rs.failures[0] if rs.failures else None))
            screen.update_side(which, Side(side_label(text, m, mode), m, failure, pending=False))

    # -- help ------------------------------------------------------------------------------------

    def binding_groups(self) -> list[tuple[str, list[Binding]]]:
        def bindings(cls: type) -> list[Binding]:
            return [b for b in cls.BINDINGS if isinstance(b, Binding)]

        app_keys = [b for b in bindings(KernelTuiApp) if b.action not in ("help_key", "quit_key", "help")]
        app_keys.insert(0, Binding("f1,?", "help", "Help (this screen)"))
        app_keys.append(Binding("q", "quit", "Quit (outside the editor)"))
        app_keys.append(Binding("ctrl+p", "command_palette", "Command palette: every action"))
        app_keys.append(Binding("tab, shift+tab", "focus", "Move between panes"))
        return [
            ("anywhere", [b for b in app_keys if b.key.startswith(("ctrl", "f1", "tab"))]),
            ("outside the editor", [b for b in app_keys if not b.key.startswith(("ctrl", "f1", "tab"))]),
            ("editor", bindings(ChainEditor)),
            ("chains pane", bindings(ChainsPane)),
            ("compare", [Binding("escape,q,o", "dismiss", "Close the compare screen")]),
            ("kernel table", bindings(KernelTable)),
        ]

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.binding_groups()))

    def action_help_key(self) -> None:
        self.action_help()

    # -- export ----------------------------------------------------------------------------------

    def current_results(self) -> list:
        seen = {}
        for rs in (self.shown_sweep, self.shown_focus):
            if rs is None:
                continue
            for m in rs.measurements():
                seen[(m.chain, m.size, m.mode, m.dtype, m.device)] = m
        return list(seen.values())

    def _export_target(self, suffix: str) -> Path:
        self.export_dir.mkdir(parents=True, exist_ok=True)
        return export.export_path(self.export_dir, self.workspace.chain.name, suffix)

    def _export(self, kind: str) -> Path | None:
        results = self.current_results()
        if not results and kind != "svg":
            self._message("nothing to export yet: no results", "yellow")
            self.notify("nothing to export yet", severity="warning")
            return None
        try:
            if kind == "json":
                ready = self.ready
                device = results[0].device
                label = next((d.label for d in ready.devices if d.name == device), device) if ready else device
                rep = export.report(
                    results,
                    device=device,
                    device_label=label,
                    torch_version=ready.torch_version if ready else "",
                    peak_gbps=next((m.peak_gbps for m in results if m.peak_gbps), None),
                )
                path = export.write(self._export_target(".json"), export.to_json(rep))
            elif kind == "csv":
                path = export.write(self._export_target(".csv"), export.to_csv(results))
            elif kind == "trace":
                path = export.write_trace(self._export_target(".trace.json"), results)
            else:
                target = self._export_target(".svg")
                path = Path(self.save_screenshot(filename=target.name, path=str(target.parent)))
        except OSError as exc:
            self._message(f"export failed: {exc.strerror or exc}", "bold red")
            return None
        self.last_export = path
        self._message(f"saved {path}", "green")
        self.notify(str(path), title=f"exported {kind}", timeout=6)
        return path

    def action_export_json(self) -> None:
        self._export("json")

    def action_export_csv(self) -> None:
        self._export("csv")

    def action_export_trace(self) -> None:
        self._export("trace")

    def action_export_svg(self) -> None:
        self._export("svg")

    # -- command palette -------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        s = self.workspace.settings
        yield SystemCommand("Run the sweep", "Measure every size in the selected modes (s)", self.action_sweep)
        yield SystemCommand("Run now", "Profile the chain at N now (ctrl+r)", self.action_run_now)
        yield SystemCommand("Stop", "Cancel the running request (x)", self.action_stop)
        yield SystemCommand("Mode: cycle", "eager / compiled / both (m)", self.action_cycle_modes)
        for choice in ws.MODE_CHOICES:
            yield SystemCommand(f"Mode: {choice}", f"Measure {choice}", lambda c=choice: self.set_modes(c), discover=False)
        yield SystemCommand("Compile mode: cycle", "default / max-autotune / reduce-overhead (c)", self.action_cycle_compile_mode)
        for mode in ws.COMPILE_MODES:
            yield SystemCommand(f"Compile mode: {mode}", f"torch.compile mode {mode}",
                                lambda m=mode: self.set_compile_mode(m), discover=False)  # fmt: skip
        yield SystemCommand("Dtype: cycle", f"now {s.dtype} (t)", self.action_cycle_dtype)
        for dtype in DTYPES:
            yield SystemCommand(f"Dtype: {dtype}", f"default inputs in {dtype}", lambda d=dtype: self.set_dtype(d), discover=False)
        yield SystemCommand("Device: cycle", "each cuda:N and cpu (d)", self.action_cycle_device)
        for name in self.devices():
            yield SystemCommand(f"Device: {name}", f"profile on {name}", lambda n=name: self.set_device(n), discover=False)
        yield SystemCommand("Sizes…", "the sweep's sizes (z)", self.action_set_sizes)
        yield SystemCommand("Size N…", "the size profiled on every edit (n)", self.action_set_focus_size)
        yield SystemCommand("Reps…", "timing reps per measurement (r)", self.action_set_reps)
        yield SystemCommand("Chart: cycle", "wall time / device time / GB/s (g)", self.action_cycle_chart)
        yield SystemCommand("View: cycle", "kernels / op chain / sweep on narrow screens (v)", self.action_cycle_view)
        for view in VIEWS:
            yield SystemCommand(f"View: {view}", f"show the {view} pane", lambda v=view: self.show_view(v), discover=False)
        yield SystemCommand("Chains pane: show/hide", "the workspace's chains (l)", self.action_toggle_chains)
        yield SystemCommand("Chain: new", "add an empty chain (n in the chains pane)", self.action_new_chain)
        yield SystemCommand("Chain: rename", "rename the current chain (r in the chains pane)", self.action_rename_chain)
        yield SystemCommand("Chain: duplicate", "copy the current chain (y in the chains pane)", self.action_duplicate_chain)
        yield SystemCommand("Chain: delete", "delete the current chain (delete in the chains pane)", self.action_delete_chain)
        for i, chain in enumerate(self.workspace.chains):
            yield SystemCommand(f"Open chain: {chain.name}", chain.text.splitlines()[0] if chain.text else "(empty)",
                                lambda i=i: self._open_chain(i), discover=False)  # fmt: skip
        yield SystemCommand("Compare: eager vs compiled", "this chain in both modes, side by side (o)", self.compare_modes)
        yield SystemCommand("Compare with…", "mark a chain with space in the chains pane, then o", self.action_compare)
        yield SystemCommand("Compare: mark the highlighted chain", "the chain o compares with (space in the chains pane)",
                            self.action_mark_compare)  # fmt: skip
        for i, chain in enumerate(self.workspace.chains):
            if i != self.workspace.current:
                yield SystemCommand(f"Compare with: {chain.name}", chain.text.splitlines()[0] if chain.text else "(empty)",
                                    lambda i=i: self.compare_chains(i), discover=False)  # fmt: skip
        yield SystemCommand("Export: JSON", "the current results as a replayable report (J)", self.action_export_json)
        yield SystemCommand("Export: CSV", "one row per kernel (C)", self.action_export_csv)
        yield SystemCommand("Export: Chrome/Perfetto trace", "the measured calls as a trace (T)", self.action_export_trace)
        yield SystemCommand("Export: SVG screenshot", "this screen as SVG (S)", self.action_export_svg)
        yield SystemCommand("Edit", "focus the editor (e)", self.action_edit)
        yield SystemCommand("Help", "every key binding (f1, ?)", self.action_help)
        yield from super().get_system_commands(screen)
