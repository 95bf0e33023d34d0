"""Timestamps of an edit's way through every process, for ``show.py`` (in this folder).

With this folder first on PYTHONPATH and ``TIMELINE_FILE`` set, each Python process started (the
benchmark, the app, its workers) appends ``time<TAB>pid<TAB>event<TAB>detail`` lines to that file,
on the one monotonic clock of the machine. Nothing of the tool is changed: a few of its functions
are wrapped as their modules are imported. Events: ``lastkey`` and ``seen`` (the benchmark's last
key and the moment it saw the rows), ``start`` and ``torch imported`` (each process), ``ready
sent`` and ``ready read`` (a worker's WorkerReady, written and read), ``edited``, ``send``,
``recv``, ``render_panes``, ``layout``, ``composited``, ``display`` (the app: an edit, a request
out, a worker's event in, the panes given their state, Textual's layout, render and write of a
frame), ``handle`` and ``emit`` (a worker: a request's run and each event it sends), ``compile>``,
``compile<`` (a worker's compile of a chain: its detail the compile and first call's own time,
ms), ``prepared``, ``reps chosen``, ``bytes read``, ``profile run>``, ``profile run<``,
``profile<`` (a measurement's steps to its rows: its call made ready, its reps sized and the call
warmed up, the compiled kernels' bytes, the profiled reps, and with the FLOPs counted, all but the
wall time), ``profiler`` (the profiler's own times of a session, ms), ``events read`` (the tool's
reading of a session's events, ms), ``gc`` (any process: a
garbage collection of 1 ms or more, its generation and ms).
"""

import gc
import importlib.abc
import importlib.util
import os
import sys
import time

PATH = os.environ.get("TIMELINE_FILE")


def mark(event, detail=""):
    with open(PATH, "a") as out:
        out.write(f"{time.monotonic():.6f}\t{os.getpid()}\t{event}\t{detail}\n")


def wrap(owner, name, before=None, after=None):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        if before:
            before(*args, **kwargs)
        result = original(*args, **kwargs)
        if after:
            after(result, *args, **kwargs)
        return result

    wrapper.__name__ = original.__name__
    wrapper.__wrapped__ = original
    setattr(owner, name, wrapper)


def describe(event):
    measurement = getattr(event, "measurement", None)
    early = " early" if measurement is not None and measurement.wall_time_us is None else ""
    return f"{type(event).__name__} {getattr(measurement, 'mode', '')}{early} {getattr(event, 'stage', '')}"


def patch_session(module):
    wrap(module.LiveSession, "edit", lambda self, text, *a, **k: mark("edited", text))


def patch_live_loop(module):
    # the draw itself: render_panes only asks for one, after the loop's turn
    wrap(module.LiveLoop, "_draw", lambda *a: mark("render_panes>"), lambda *a: mark("render_panes<"))


def patch_bridge(module):
    wrap(
        module.WorkerBridge,
        "send",
        lambda self, request, *a, **k: mark(
            "send", f"{type(request).__name__} {getattr(request, 'modes', '')} {getattr(request, 'chain', '')}"
        ),
    )
    post = module.WorkerBridge._post

    def _post(self, target, message):
        if hasattr(message, "event"):
            mark("recv", describe(message.event))
        post(self, target, message)

    module.WorkerBridge._post = _post


def patch_screen(module):
    wrap(module.Screen, "_refresh_layout", lambda *a, **k: mark("layout>"), lambda *a, **k: mark("layout<"))
    wrap(module.Screen, "_compositor_refresh", None, lambda *a, **k: mark("composited"))


def patch_textual_app(module):
    wrap(module.App, "_display", None, lambda *a, **k: mark("display"))


def patch_sweep(module):
    wrap(module, "prepare", None, lambda *a, **k: mark("prepared"))  # the build stage, called from the sweep
    run_profile = module.run_profile

    def traced(request, emit, *args, **kwargs):
        mark("handle>", f"{getattr(request, 'modes', '')} {getattr(request, 'chain', '')}")

        def traced_emit(event):
            mark("emit", describe(event))
            emit(event)

        try:
            return run_profile(request, traced_emit, *args, **kwargs)
        finally:
            mark("handle<")

    module.run_profile = traced


def patch_compiling(module):
    wrap(
        module,
        "_compile",
        lambda *a, **k: mark("compile>"),
        lambda compiled, *a, **k: mark("compile<", f"{1000 * compiled.info.compile_time_s:.1f}"),
    )


def patch_measure(module):
    """The steps of a measurement between its compile and its rows (``-v`` of show.py lists them)."""
    wrap(module, "choose_reps", None, lambda *a, **k: mark("reps chosen"))
    wrap(module, "compiled_bytes", None, lambda *a, **k: mark("bytes read"))
    wrap(module, "profile_run", lambda *a, **k: mark("profile run>"), lambda *a, **k: mark("profile run<"))
    wrap(module, "_profile", None, lambda *a, **k: mark("profile<"))


def watch_collections():
    began = [0.0]

    def collection(phase, info):
        if phase == "start":
            began[0] = time.monotonic()
        elif (ms := 1000 * (time.monotonic() - began[0])) >= 1.0:
            mark("gc", f"gen{info['generation']} {ms:.1f}")

    gc.callbacks.append(collection)


def patch_autograd_profiler(module):
    """The profiler's own account of a session once it has stopped: ms to prepare, enable and
    disable it."""

    def stats(result, self, *args, **kwargs):
        st = self._stats
        mark(
            "profiler",
            " ".join(
                f"{name} {getattr(st, field, 0) / 1000:.1f}"
                for name, field in (
                    ("prepare", "profiler_prepare_call_duration_us"),
                    ("enable", "profiler_enable_call_duration_us"),
                    ("disable", "profiler_disable_call_duration_us"),
                )
            ),
        )

    wrap(module.profile, "__exit__", None, stats)


def patch_profile_events(module):
    """The tool's reading of a session's events: ms and the event count."""
    began = [0.0]

    def before(*args, **kwargs):
        began[0] = time.monotonic()

    def after(events, *args, **kwargs):
        mark("events read", f"{1000 * (time.monotonic() - began[0]):.1f} ms, {len(events)} events")

    wrap(module, "read_events", before, after)


def patch_terminal(module):
    wrap(module.Terminal, "type_slowly", None, lambda result, *a, **k: mark("lastkey", f"{result:.6f}"))
    wrap(module.Terminal, "wait_for", None, lambda result, self, condition, timeout=30.0, what="": mark("seen", what))


def patch_protocol(module):
    """WorkerReady written (in a worker) and read (in the app): a worker's start, seen from both sides."""
    encode, decode = module.encode, module.decode

    def traced_encode(message):
        if type(message).__name__ == "WorkerReady":
            mark("ready sent")
        return encode(message)

    def traced_decode(line):
        message = decode(line)
        if type(message).__name__ == "WorkerReady":
            mark("ready read")
        return message

    module.encode, module.decode = traced_encode, traced_decode


PATCHES = {
    "torch": lambda module: mark("torch imported"),
    "probes.link.protocol": patch_protocol,
    "tui.session": patch_session,
    "tui.screens.live_loop": patch_live_loop,
    "tui.bridge": patch_bridge,
    "textual.screen": patch_screen,
    "textual.app": patch_textual_app,
    "probes.engine.sweep": patch_sweep,
    "probes.engine.compiling": patch_compiling,
    "probes.engine.measure": patch_measure,
    "torch.autograd.profiler": patch_autograd_profiler,  # the worker's runs (the worker itself runs as __main__)
    "probes.engine.profile_events": patch_profile_events,
    "terminal": patch_terminal,  # tests/e2e/terminal.py, the benchmark's tmux driver
}


class Patcher(importlib.abc.MetaPathFinder):
    """Finds each module of PATCHES as usual, and patches it once it has run."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            PATCHES[fullname](module)

        spec.loader.exec_module = exec_and_patch
        return spec


if PATH:
    mark("start", " ".join(sys.argv[:2]))
    watch_collections()
    sys.meta_path.insert(0, Patcher())
