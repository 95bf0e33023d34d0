"""``kernel-tui demo``: a guided walk through the story, one live measurement per step.

space / right: next step · left: back · q: quit. Each step sends one request through the worker
(the real one, or ``--replay``); its caption is built from what was measured (see
``tui.demo_steps``). Results are kept per step, so going back shows them at once.
"""

from __future__ import annotations

import asyncio
import contextlib

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from probes.client import WorkerClient
from probes.protocol import (
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WorkerReady,
)
from probes.summary import format_size
from tui.demo_steps import STEPS, DemoStep
from tui.results import ResultSet, RunKey, normalize, stream_into
from tui.widgets.kernel_pane import KernelPane, PaneState
from tui.widgets.sweep_pane import SweepPane


class DemoApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "kernel-tui demo"
    DEFAULT_CSS = """
    #demo-step { height: 1; padding: 0 1; background: $panel; }
    #demo-caption { height: auto; min-height: 4; padding: 0 1; border: round $accent; }
    #demo-status { height: 1; padding: 0 1; color: $text-muted; }
    DemoApp #kernels { height: auto; max-height: 1fr; }
    DemoApp #sweep { height: 1fr; }
    """
    BINDINGS = [
        Binding("space,right", "next", "Next"),
        Binding("left", "back", "Back"),
        Binding("q", "quit_demo", "Quit"),
        Binding("ctrl+q", "quit_demo", "Quit", show=False, priority=True),
    ]

    def __init__(self, *, worker_command: list[str] | str | None = None, device: str | None = None,
                 dtype: str = "fp32", reps: int | None = None, frozen: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.client = WorkerClient(worker_command, on_state=self._worker_state)
        self.device = device
        self.dtype = dtype
        self.reps = reps
        self.frozen = frozen
        self.ready: WorkerReady | None = None
        self.steps: list[DemoStep] = list(STEPS)
        self.index = 0
        self.results: dict[int, ResultSet] = {}
        self.active: ResultSet | None = None
        self.progress = ""
        self.worker_note = "worker starting: importing torch…"
        self.device_label = ""
        self._closing = False

    def compose(self) -> ComposeResult:
        yield Static(id="demo-step")
        yield Static(id="demo-caption")
        yield KernelPane(id="kernels")
        yield SweepPane(id="sweep")
        yield Static(id="demo-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._start()
        self.refresh_view()

    # -- worker ------------------------------------------------------------------------------------

    def _worker_state(self, state: str, detail: str) -> None:
        if not self._closing:
            self.worker_note = f"worker {state}" + (f": {detail}" if detail and state != "busy" else "")
            with contextlib.suppress(Exception):
                self.refresh_view()

    @work(group="startup", exit_on_error=False)
    async def _start(self) -> None:
        try:
            ready = await self.client.start()
        except Exception as exc:  # noqa: BLE001 (a message, never a traceback)
            self.worker_note = f"the worker did not start: {exc}"
            self.refresh_view()
            return
        self.ready = ready
        names = [d.name for d in ready.devices]
        if self.device == "cuda":
            self.device = next((n for n in names if n.startswith("cuda")), None)
        if self.device not in names:
            if self.device is not None:
                self.notify(f"device {self.device} is not available here; using {ready.default_device}", severity="warning")
            self.device = ready.default_device
        label = next((d.label for d in ready.devices if d.name == self.device), self.device)
        self.device_label = f"{label} · torch {ready.torch_version}"
        self.measure()

    @property
    def step(self) -> DemoStep:
        return self.steps[self.index]

    def sizes(self, step: DemoStep | None = None) -> tuple[int, ...]:
        return (step or self.step).sizes_on(self.device)

    def lookup(self, chain: str, size: int, mode: str) -> Measurement | None:
        """The measurement of the step on screen first (its own run), then of any other step."""
        current = self.results.get(self.index)
        for rs in ([current] if current is not None else []) + list(self.results.values()):
            if rs.key.chain == normalize(chain) and (m := rs.at(size, mode)) is not None:
                return m
        return None

    def measure(self) -> None:
        """Measure the current step unless it already has its results (or is being measured)."""
        if self.ready is None:
            return
        rs = self.results.get(self.index)
        if rs is not None and (not rs.done or (rs.results and not rs.failures)):
            if rs is self.active or rs.done:
                self.refresh_view()
                return
        step = self.step
        sizes = list(self.sizes(step))
        key = RunKey.of(step.chain, self.device, self.dtype, list(step.modes), sizes)
        rid = self.client.new_id()
        rs = ResultSet(key, step.chain, "sweep" if step.sweep else "focus", rid)
        self.results[self.index] = rs
        self._cancel_active()
        self.active = rs
        self.progress = "sending…"
        request = ProfileRequest(id=rid, chain=step.chain, sizes=sizes, modes=list(step.modes), device=self.device,
                                 dtype=self.dtype, reps=self.reps)  # fmt: skip
        self._profile(rs, request)
        self.refresh_view()

    def _cancel_active(self) -> None:
        old = self.active
        if old is not None and not old.done:
            old.done = old.cancelled = True
            self.results = {i: r for i, r in self.results.items() if r is not old}
            self.run_worker(self.client.cancel(old.request_id), group="cancel", exit_on_error=False)
        self.active = None

    @work(exclusive=True, group="profile", exit_on_error=False)
    async def _profile(self, rs: ResultSet, request: ProfileRequest) -> None:
        await stream_into(self.client, rs, request, self._event)

    def _event(self, rs: ResultSet, event: object) -> None:
        if isinstance(event, Progress):
            step = f" ({event.step}/{event.total})" if event.total else ""
            self.progress = f"{event.message}{step}"
        elif isinstance(event, MeasurementResult):
            rs.add(event.measurement)
        elif isinstance(event, RequestFailed):
            rs.failures.append(event)
        elif isinstance(event, RequestDone):
            rs.done = True
            rs.cancelled = rs.cancelled or event.cancelled
            if self.active is rs:
                self.active = None
                self.progress = ""
        self.refresh_view()

    # -- view ----------------------------------------------------------------------------------------

    def caption(self, index: int | None = None) -> str:
        step = self.steps[self.index if index is None else index]
        return step.caption_for(self.lookup, self.device)

    def refresh_view(self) -> None:
        if not self.is_mounted or self._closing:
            return
        step, rs = self.step, self.results.get(self.index)
        running = rs is not None and not rs.done
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(f" Step {self.index + 1}/{len(self.steps)} ", style="bold reverse")
        head.append(f"  {step.title}  ", style="bold")
        sizes = ", ".join(format_size(n) for n in self.sizes())
        head.append(f"{step.chain} · {' + '.join(step.modes)} · N = {sizes}", style="dim")
        self.query_one("#demo-step", Static).update(head)
        caption = Text()
        text = self.caption()
        if text:
            caption.append(text)
        elif running or rs is None:
            caption.append("measuring… " + self.progress, style="italic cyan")
        if rs is not None and rs.failures:
            f = rs.failures[0]
            caption.append(("\n" if text else "") + f"✗ {f.error.located()}", style="bold red")
        self.query_one("#demo-caption", Static).update(caption)
        kernels, sweep = self.query_one(KernelPane), self.query_one(SweepPane)
        kernels.display = not step.sweep
        sweep.display = step.sweep
        compact = self.size.width < 120
        if step.sweep:
            peak = next((d.peak_gbps for d in self.ready.devices if d.name == self.device), None) if self.ready else None
            sweep.show(rs, stale=False, running=running, compile_mode="compiled", chart="time", compact=compact,
                       peak_gbps=peak, sizes=list(self.sizes()))  # fmt: skip
        else:
            state = PaneState(results=rs, modes=list(step.modes), size=step.sizes[0], stale=False, running=running)
            kernels.show(state, compact=False)
        keys = "space/→ next · ← back · q quit"
        status = " · ".join(x for x in (self.worker_note, self.device_label, self.progress) if x)
        self.query_one("#demo-status", Static).update(Text(f"{status}   {keys}", no_wrap=True, overflow="ellipsis"))

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_view)

    # -- keys ----------------------------------------------------------------------------------------

    def action_next(self) -> None:
        if self.index + 1 < len(self.steps):
            self.index += 1
            self.measure()
            self.refresh_view()

    def action_back(self) -> None:
        if self.index > 0:
            self.index -= 1
            self.measure()
            self.refresh_view()

    def action_quit_demo(self) -> None:
        self.exit(0)  # the worker is shut down in on_unmount

    async def on_unmount(self) -> None:
        if not self._closing:
            self._closing = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.close(), 8)
