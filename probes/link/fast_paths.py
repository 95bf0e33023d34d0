"""The switches for kernel-tui's start-up and latency tricks, one per trick.

Each trick (a bytecode cache for the worker's imports, a deferred Dynamo import, a lighter
profiler range, ...) trades plain code for time a user feels: the first frame, the first rows,
an edit's rows, quit. Each has a name in ``TRICKS``; every place that makes up a trick asks
``enabled(name)`` and takes its plain path when that trick is off, so that the latency benchmark
can measure what each trick saves on its own (``benchmarks/tui_latency.py --fast-paths each``) and
a test can check that the plain paths give the same kernels, counts and bytes.

``KERNEL_TUI_FAST_PATHS``: unset or ``1``, every trick on; ``0``, every trick off; or a comma list
of tricks to turn off, each with a minus (``-bytecode_cache,-dynamo_deferral``), the others on.
The worker inherits the variable from the app, so one setting covers both processes; a setting
that names no trick is refused when the app or ``kernel-tui profile`` starts (``setting_error``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

ENV = "KERNEL_TUI_FAST_PATHS"
ALL_ON = "1"
ALL_OFF = "0"
OFF_MARK = "-"


@dataclass(frozen=True)
class Trick:
    buys: str
    """What it saves a user, and where it lives."""
    figures: tuple[str, ...]
    """The latency benchmark's sections that show what it saves: "frame" (launch -> first frame and
    first eager rows), "edit" (last key -> new and cache-hit rows), "quit" (q -> exit)."""
    devices: tuple[str, ...] = ("cpu", "cuda")
    """The device types where it does anything."""


TRICKS: dict[str, Trick] = {
    "early_worker": Trick(
        "first rows: the worker starts before Textual is imported, torch imports beside the app's start "
        "(tui/__main__.py, probes/link/worker_process.py)",
        ("frame",),
    ),
    "first_ready_worker": Trick(
        "first rows: of two workers starting together, whichever is ready first measures the eager rows "
        "(probes/link/worker_pair.py)",
        ("frame",),
    ),
    "bytecode_cache": Trick(
        "first rows and first frame: a private bytecode cache for sources that Python compiles at every "
        "import, the worker's torch and the app's Textual and kernel-tui (probes/link/bytecode_cache.py)",
        ("frame",),
    ),
    "dynamo_deferral": Trick(
        "first rows: Dynamo and Inductor imported with the first compile, after the first eager rows "
        "(probes/engine/dynamo_deferral.py)",
        ("frame",),
    ),
    "driver_context": Trick(
        "first rows on a GPU: the device's context made through the driver on a thread while torch imports "
        "(probes/engine/driver_context.py)",
        ("frame",),
        ("cuda",),
    ),
    "early_meta_run": Trick(
        "first rows: the context made on a thread beside a meta run that loads what the first request's "
        "memory check needs, before the worker says it is ready (probes/engine/worker.py)",
        ("frame",),
    ),
    "frozen_imports": Trick(
        "first rows and first compile: the worker's start and its compiler import run without the "
        "collector, and what they made is frozen (probes/engine/worker.py)",
        ("frame", "edit"),
    ),
    "app_collector_off": Trick(
        "first frame: the app's collector off until its first frame, what start-up made frozen (tui/__main__.py)",
        ("frame",),
    ),
    "start_screen": Trick(
        "first frame: the grid drawn from the workspace alone by a start screen, the session, panes and "
        "worker link imported after it (tui/screens/start.py, tui/app.py)",
        ("frame",),
    ),
    "after_first_frame": Trick(
        "first frame: the panes' first state, highlighting and the kernel pane's mode blocks made after "
        "the first frame (tui/screens/main.py, tui/widgets/editor.py, tui/widgets/kernel_pane.py)",
        ("frame",),
    ),
    "frame_rate": Trick(
        "edit -> rows: Textual's frame cap raised (TEXTUAL_FPS, tui/__main__.py)",
        ("frame", "edit"),
    ),
    "repaint_without_layout": Trick(
        "edit -> rows: panes, borders, the chains list and the status bar repainted without laying the "
        "screen out where only their text changes (tui/widgets/pane.py, chains_pane.py, status_bar.py)",
        ("edit",),
    ),
    "stop_signal": Trick(
        "edit -> rows: a stopped request woken out of a blocking call by a signal (probes/engine/worker.py)",
        ("edit",),
    ),
    "young_collections": Trick(
        "edit -> rows: only the young generations collected between requests "
        "(probes/engine/worker.py, probes/engine/memory_guard.py)",
        ("edit",),
    ),
    "spare_compile_wrapper": Trick(
        "new compiled rows: the next compile's torch.compile wrapper made while the worker is idle "
        "(probes/engine/compiling.py, probes/engine/worker.py)",
        ("edit",),
    ),
    "cpu_kernel_record": Trick(
        "new compiled rows on the CPU: the kernels' profiler range declared from torch's C shim "
        "(probes/engine/cpu_kernel_record.py)",
        ("edit",),
        ("cpu",),
    ),
    "raw_profile_events": Trick(
        "edit -> rows: the profiler's raw events read instead of function_events (probes/engine/profile_events.py)",
        ("edit",),
    ),
    "light_profiler": Trick(
        "edit -> rows: the profile taken with the profiler's own range, not torch.profiler.profile's "
        "(probes/engine/timing.py)",
        ("edit",),
    ),
    "profiler_set_up_ahead": Trick(
        "new compiled rows: a compiled mode's profile set up while it compiles (probes/engine/timing.py)",
        ("edit",),
    ),
    "short_warm_up": Trick(
        "edit -> rows: a short warm-up on the CPU, none on a GPU timed moments ago (probes/engine/timing.py)",
        ("edit",),
    ),
    "device_lock_during_compile": Trick(
        "compiled rows on a GPU: the device lock let go while Inductor compiles and benchmarks "
        "(probes/engine/device_lock.py)",
        ("edit",),
        ("cuda",),
    ),
    "host_heap": Trick(
        "CPU rows: glibc's heap thresholds pinned, so that runs do not take page faults (probes/engine/host_heap.py)",
        ("edit",),
    ),
    "quick_quit": Trick(
        "q -> exit: no wait for Textual's input thread nor the interpreter's teardown (tui/driver.py, tui/__main__.py)",
        ("quit",),
    ),
}


class SettingError(ValueError):
    """``KERNEL_TUI_FAST_PATHS`` holds what is not a setting."""


def turned_off(value: str) -> frozenset[str]:
    """The tricks ``value`` (the variable's text) turns off; SettingError for what names none."""
    value = value.strip()
    if value in ("", ALL_ON):
        return frozenset()
    if value == ALL_OFF:
        return frozenset(TRICKS)
    names = [part.strip() for part in value.split(",") if part.strip()]
    unmarked = [name for name in names if not name.startswith(OFF_MARK)]
    if unmarked:
        raise SettingError(
            f"{ENV}={value}: {unmarked[0]!r} needs a '{OFF_MARK}' in front (a list names tricks to turn off); "
            f"use {ALL_OFF} for all off, {ALL_ON} for all on"
        )
    unknown = [name for name in names if name[len(OFF_MARK) :] not in TRICKS]
    if unknown:
        raise SettingError(
            f"{ENV}={value}: no trick named {unknown[0][len(OFF_MARK) :]!r}; tricks: {', '.join(TRICKS)}"
        )
    return frozenset(name[len(OFF_MARK) :] for name in names)


def setting_error(env: Mapping[str, str] | None = None) -> str | None:
    """What is wrong with the variable's setting, in one line; None where it is a setting."""
    try:
        turned_off((os.environ if env is None else env).get(ENV, ALL_ON))
    except SettingError as exc:
        return str(exc)
    return None


def enabled(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether trick ``name`` is on, in this process's environment or in ``env`` (a worker's,
    before it starts). Read each time: tests flip it. A setting that names no trick turns none
    off here: the app and ``kernel-tui profile`` refuse it as they start."""
    if name not in TRICKS:
        raise KeyError(f"no fast path named {name!r}")
    try:
        return name not in turned_off((os.environ if env is None else env).get(ENV, ALL_ON))
    except SettingError:
        return True


def setting_without(names: list[str] | tuple[str, ...]) -> str:
    """The variable's value that turns ``names`` off and leaves the other tricks on."""
    return ",".join(OFF_MARK + name for name in names) or ALL_ON
