"""``kernel-tui demo``: a guided walk through the story, one live measurement per step.

space / right: next step · left: back · q: quit. Each step sends one request through the worker
bridge (the real worker, or ``--replay``); its caption is built from the same kernel rows the
kernel pane shows (see ``tui.demo_steps``). Results are kept per step, so going back shows them
at once.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.driver import Driver
from textual.filter import LineFilter
from textual.widgets import Footer, Static

from probes.chain.matching import normalize
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, Progress, RequestDone, RequestFailed
from probes.link.settings import Settings
from probes.link.summary import format_size
from probes.link.worker_process import EarlyWorker
from tui.bridge import WorkerBridge, WorkerEvent, WorkerStateChanged
from tui.demo_steps import STEPS, DemoStep
from tui.driver import driver_class
from tui.runs import Run, SweepResults, Target
from tui.sixteen_colours import with_sixteen_colours
from tui.views import FocusView, ModeActivity, ModeView, SweepPaneState, SweepView, step_activity
from tui.widgets.cells import plain
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.sweep_pane import SweepPane


def step_view(rs: SweepResults | None, step: DemoStep, size: int) -> FocusView:
    """What the kernel pane shows for one step: its own rows, fresh (each step is its own run)."""
    running = rs is not None and not rs.run.done
    progress = rs.run.progress if rs is not None else None
    views = []
    for mode in step.modes:
        m = rs.at(size, mode) if rs else None
        failure = next((f for f in rs.run.failures if f.mode in (None, mode)), None) if rs else None
        activity: ModeActivity = ""
        if m is None and running:
            measuring = progress is not None and progress.mode == mode
            activity = step_activity(progress) if progress is not None and measuring else "waiting"
        views.append(ModeView(mode, m, m is not None, activity, failure))
    return FocusView(size, tuple(views), busy=running)


class DemoApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "kernel-tui demo"
    # CSS, not DEFAULT_CSS: the app's own styles (CSS_PATH) win over any DEFAULT_CSS, and there
    # #kernels fills its grid cell (height: 100%), which here pushed the step and its caption off
    # the top of the screen.
    CSS = """
    #demo-step { height: auto; padding: 0 1; background: $panel; }
    #demo-caption { height: auto; min-height: 4; padding: 0 1; border: round $accent; }
    #demo-body { height: 1fr; }
    #demo-status { height: auto; padding: 0 1; color: $text-muted; }
    Screen #kernels { max-height: 100%; }
    Screen #sweep { height: 1fr; }
    """
    AUTO_FOCUS = None
    """Nothing has the focus: the steps' keys are the app's, and a kernel table would take the
    arrows (and offer ``enter Detail``, which the demo has not)."""
    BINDINGS = [
        Binding("space,right", "next", "Next"),
        Binding("left", "previous", "Back"),
        Binding("q", "quit_demo", "Quit"),
        Binding("ctrl+q,ctrl+c", "quit_demo", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        *,
        worker_command: list[str] | str | None = None,
        early_worker: EarlyWorker | None = None,
        early_compiler: EarlyWorker | None = None,
        settings: Settings | None = None,
        frozen: bool = False,
    ) -> None:
        super().__init__()
        self.bridge = WorkerBridge(self, worker_command, early=early_worker, early_compiler=early_compiler)
        self.settings = settings or Settings()
        """The device, dtype and reps of every step (each step says its own sizes and modes)."""
        self.frozen = frozen
        self.steps: list[DemoStep] = list(STEPS)
        self.index = 0
        self.results: dict[int, SweepResults] = {}
        self.worker_note = "worker starting: importing torch…"
        self.device_label = ""
        self.drawn = False
        """Composed and mounted: the step, caption and panes can be drawn."""
        self._ids = 0

    def get_driver_class(self) -> type[Driver]:
        return driver_class(self)

    def get_line_filters(self) -> Sequence[LineFilter]:
        return with_sixteen_colours(self.console, super().get_line_filters())

    def compose(self) -> ComposeResult:
        yield Static(id="demo-step")
        yield Static(id="demo-caption")
        with Vertical(id="demo-body"):  # the room left; the status stays above the footer
            yield KernelPane(id="kernels")
            yield SweepPane(id="sweep")
        yield Static(id="demo-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.bridge.start()
        self.drawn = True
        self.refresh_view()

    def on_ready(self) -> None:
        gc.enable()  # off while the app started (tui.__main__.main)

    # -- worker ------------------------------------------------------------------------------------

    @on(WorkerStateChanged)
    def _worker_state(self, event: WorkerStateChanged) -> None:
        self.worker_note = f"worker {event.state}" + (
            f": {event.detail}" if event.detail and event.state != "busy" else ""
        )
        ready = event.ready
        if event.state == "ready" and ready is not None:
            names = [d.name for d in ready.devices]
            device = self.device
            if device == "cuda":
                device = next((n for n in names if n.startswith("cuda")), None)
            if device not in names:
                if device is not None:
                    self.notify(
                        f"device {device} is not available here; using {ready.default_device}",
                        severity="warning",
                        markup=False,
                    )
                device = ready.default_device
            self.settings = dataclasses.replace(self.settings, device=device)
            label = next((d.label for d in ready.devices if d.name == self.device), self.device)
            self.device_label = f"{label} · torch {ready.torch_version}"
            self.measure()
        self.refresh_view()

    @on(WorkerEvent)
    def _worker_event(self, message: WorkerEvent) -> None:
        rs = next((r for r in self.results.values() if r.run.request.id == message.request_id), None)
        if rs is None:
            return
        event = message.event
        if isinstance(event, Progress):
            rs.run.progress = event
        elif isinstance(event, MeasurementResult):
            rs.results[(event.measurement.size, event.measurement.mode)] = event.measurement
        elif isinstance(event, RequestFailed):
            rs.run.failures.append(event)
        elif isinstance(event, RequestDone):
            rs.run.done = True
            rs.run.cancelled = rs.run.cancelled or event.cancelled
        self.refresh_view()

    @property
    def device(self) -> str | None:
        return self.settings.device

    @property
    def step(self) -> DemoStep:
        return self.steps[self.index]

    def sizes(self, step: DemoStep | None = None) -> tuple[int, ...]:
        return (step or self.step).sizes_on(self.device)

    def step_done(self) -> bool:
        rs = self.results.get(self.index)
        return rs is not None and rs.run.done

    def lookup(self, chain: str, size: int, mode: str) -> Measurement | None:
        """The measurement of the step on screen first (its own run), then of any other step."""
        current = self.results.get(self.index)
        for rs in ([current] if current is not None else []) + list(self.results.values()):
            if rs.run.chain == normalize(chain) and (m := rs.at(size, mode)) is not None:
                return m
        return None

    def measure(self) -> None:
        """Measure the current step unless it has its results or is being measured; any other
        step still running is cancelled (its partial results are dropped)."""
        if self.bridge.ready is None:
            return
        for i, other in list(self.results.items()):
            if i != self.index and not other.run.done:
                self.bridge.cancel(other.run.request.id)
                del self.results[i]
        rs = self.results.get(self.index)
        if rs is not None and (not rs.run.done or (rs.results and not rs.run.failures)):
            return
        step = self.step
        self._ids += 1
        request = ProfileRequest.of(
            f"d{self._ids}",
            step.chain,
            self.settings,
            sizes=list(self.sizes(step)),
            modes=list(step.modes),
            source=step.source,
        )
        target = Target(self.device, request.dtype, request.reps)
        run = Run(request, "other", normalize(step.chain), target, time.monotonic())
        self.results[self.index] = SweepResults(run)
        self.bridge.send(request)

    # -- view ----------------------------------------------------------------------------------------

    def caption(self, index: int | None = None) -> str:
        step = self.steps[self.index if index is None else index]
        return step.caption_for(self.lookup, self.device)

    def refresh_view(self) -> None:
        if not self.drawn:
            return
        step, rs = self.step, self.results.get(self.index)
        running = rs is not None and not rs.run.done
        head = Text()
        head.append(f" Step {self.index + 1}/{len(self.steps)} ", style="bold reverse")
        head.append(f"  {step.title}  ", style="bold")
        sizes = ", ".join(format_size(n) for n in self.sizes())
        head.append(f"{step.chain} · {' + '.join(step.modes)} · N = {sizes}", style="dim")
        self.query_one("#demo-step", Static).update(head)
        caption = Text()
        text = self.caption()
        if text:
            caption.append_text(plain(text, one_line=False))
        elif running or rs is None:
            progress = rs.run.progress.message if rs is not None and rs.run.progress else ""
            caption.append_text(plain(f"measuring… {progress}", "italic cyan"))
        if rs is not None and rs.run.failures:
            caption.append("\n" if text else "")
            caption.append_text(plain(f"✗ {rs.run.failures[0].error.located()}", "bold red", one_line=False))
        self.query_one("#demo-caption", Static).update(caption)
        kernels, sweep = self.query_one(KernelPane), self.query_one(SweepPane)
        kernels.display = not step.sweep
        sweep.display = step.sweep
        if step.sweep:
            ready = self.bridge.ready
            peak = next((d.peak_gbps for d in ready.devices if d.name == self.device), None) if ready else None
            view = SweepView(rs, self.sizes(), "compiled", None, running)
            sweep.state = SweepPaneState(view, "time", peak, "measuring the sweep")
        else:
            kernels.state = step_view(rs, step, step.sizes[0])
        status = " · ".join(x for x in (self.worker_note, self.device_label) if x)  # the keys: in the footer
        self.query_one("#demo-status", Static).update(plain(status, one_line=False))

    @on(KernelPane.HeightChanged)
    def _kernels_height(self, event: KernelPane.HeightChanged) -> None:
        """The pane as tall as its rows (an auto height cut its last row off when the headline
        wrapped); no taller than the room left (max-height)."""
        event.stop()
        kernels = self.query_one(KernelPane)
        kernels.styles.height = kernels.desired_height()

    # -- keys ----------------------------------------------------------------------------------------

    def action_next(self) -> None:
        if self.index + 1 < len(self.steps):
            self.index += 1
            self.measure()
            self.refresh_view()

    def action_previous(self) -> None:
        if self.index > 0:
            self.index -= 1
            self.measure()
            self.refresh_view()

    async def action_quit_demo(self) -> None:
        self.bridge.kill()  # they die while the demo takes itself down; on_unmount waits for them
        self.exit(0)

    async def on_unmount(self) -> None:
        await self.bridge.close()
