"""A worker's eager rows never wait for Dynamo's import; its compiles meet torch as torch left it.

Each check runs in a fresh interpreter: this one has long imported Dynamo (other tests compile).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object as its last line."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_worker_starts_and_measures_eager_rows_without_importing_dynamo() -> None:
    """The worker's start (device, the memory guard's first meta run) and an eager request
    (meta run, profiled reps, timed reps) used to import Dynamo: a second before the first rows."""
    got = run_fresh("""
        import json, sys
        from probes.engine.worker import _initialise_device
        from probes.engine.sweep import run_profile
        from probes.link.protocol import MeasurementResult, ProfileRequest
        _initialise_device()
        after_start = "torch._dynamo" in sys.modules
        events = []
        request = ProfileRequest("r", "(a + b).relu() * a.sum()", sizes=[1000], modes=["eager"], device="cpu")
        run_profile(request, events.append)
        rows = [e.measurement.kernels for e in events if isinstance(e, MeasurementResult)]
        print(json.dumps({"after_start": after_start, "after_eager": "torch._dynamo" in sys.modules,
                          "kernels": len(rows[0]) if rows else 0}))
    """)
    assert got == {"after_start": False, "after_eager": False, "kernels": got["kernels"]}
    assert got["kernels"] >= 2


@pytest.mark.slow  # compiles in a fresh interpreter
def test_a_compile_after_the_deferral_finds_torch_as_torch_left_it() -> None:
    """The first compile takes every stand-in away: it runs compiled, and no function of torch
    keeps a stand-in for its Dynamo mark."""
    got = run_fresh("""
        import gc, json, sys, types
        from probes.engine.dynamo_deferral import defer_dynamo_import
        from probes.engine.torch_compat import DYNAMO_MARK as MARK
        from probes.engine.sweep import run_profile
        from probes.link.protocol import MeasurementResult, ProfileRequest
        deferred = defer_dynamo_import()
        events = []
        request = ProfileRequest("r", "(a + b).relu()", sizes=[1000], modes=["compiled"], device="cpu")
        run_profile(request, events.append)
        measured = [e.measurement for e in events if isinstance(e, MeasurementResult)]
        stand_ins = sum(1 for f in gc.get_objects() if type(f) is types.FunctionType
                        and getattr(getattr(f, MARK, None), "__name__", "") == "dynamo_mark_deferred")
        print(json.dumps({"deferred": deferred, "ran_compiled": bool(measured) and measured[0].ran_compiled,
                          "stand_ins_left": stand_ins}))
    """)
    assert got["deferred"] > 0, "torch no longer wraps its functions as probes.engine.torch_compat expects"
    assert got["ran_compiled"] is True
    assert got["stand_ins_left"] == 0


def test_a_stand_in_called_once_dynamo_is_imported_puts_the_real_mark_in_place() -> None:
    """Dynamo imported by anything else (a notebook's own compile): the next call of a deferred
    function is marked as torch marks it, not called straight through."""
    got = run_fresh("""
        import json
        import torch
        from probes.engine.dynamo_deferral import defer_dynamo_import
        from probes.engine.torch_compat import DYNAMO_MARK as MARK, deferred_functions
        defer_dynamo_import()
        deferred = deferred_functions()
        import torch._dynamo
        x = torch.empty(4, device="meta")
        x + x
        marks = [getattr(fn, MARK, None) for fn in deferred]
        real = [m for m in marks if m is not None and getattr(m, "__name__", "") != "dynamo_mark_deferred"]
        print(json.dumps({"real": len(real), "stand_ins": len(marks) - len(real)}))
    """)
    assert got["real"] >= 1
    assert got["stand_ins"] >= 1


@pytest.mark.slow  # compiles in a fresh interpreter
def test_a_first_request_of_both_modes_sends_its_eager_rows_before_importing_the_compiler() -> None:
    """On the CPU the app's first request asks for eager and compiled rows at once: the eager rows
    leave before the worker imports Dynamo and Inductor for the compile (a second here)."""
    got = run_fresh("""
        import io, json, sys
        from probes.engine import worker
        from probes.link.protocol import MeasurementResult, ProfileRequest
        worker._initialise_device()
        running = worker.Worker(io.StringIO())
        seen = []
        emit = running.emit
        def recording(event):
            if isinstance(event, MeasurementResult):
                seen.append([event.measurement.mode, event.measurement.ran_compiled, "torch._dynamo" in sys.modules])
            emit(event)
        running.emit = recording
        running._handle(ProfileRequest("r", "(a + b).relu()", sizes=[1000], modes=["eager", "compiled"], device="cpu"))
        print(json.dumps(seen))
    """)
    assert got == [["eager", False, False], ["compiled", True, True]]
