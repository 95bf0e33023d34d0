"""The profiler's set-up runs beside the work before the profiled reps
(``probes.engine.timing.ProfilerSetUp``).

On a GPU setting a profile up costs milliseconds of every measurement; a compile hides it when it
runs on a thread of its own (eager runs set theirs up as they start). The first of a process runs
where it is asked for (Kineto must initialise on the thread that imported torch), and one a failed
measurement never used is ended.
"""

from __future__ import annotations

import fcntl
import os
import threading

import pytest
import torch

from probes.engine import sweep, timing
from probes.engine.device_lock import device_lock
from probes.engine.errors import MeasureError
from probes.engine.sweep import run_profile
from probes.link.protocol import ChainErrorInfo, MeasurementResult, ProfileRequest, RequestFailed

pytestmark = pytest.mark.slow


@pytest.fixture
def set_ups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[timing.ProfilerSetUp, str]]:
    """Each set-up made, with the name of the thread its set-up ran on."""
    made: list[tuple[timing.ProfilerSetUp, str]] = []
    prepare = timing.ProfilerSetUp._prepare

    def recorded(self: timing.ProfilerSetUp) -> None:
        made.append((self, threading.current_thread().name))
        prepare(self)

    monkeypatch.setattr(timing.ProfilerSetUp, "_prepare", recorded)
    return made


def profile(chain: str, modes: list[str]) -> tuple[list, list]:
    events: list = []
    run_profile(ProfileRequest(id="t", chain=chain, sizes=[4096], modes=modes, device="cpu", reps=3), events.append)
    return [e.measurement for e in events if isinstance(e, MeasurementResult)], [
        e for e in events if isinstance(e, RequestFailed)
    ]


def test_the_profiler_is_set_up_on_its_own_thread_while_the_chain_compiles(
    set_ups: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing.ProfilerSetUp, "_first_done", True)  # as in a worker that has measured before
    results, failures = profile("(a * b).sin()", ["eager", "compiled"])
    assert not failures, failures
    assert [m.mode for m in results] == ["eager", "compiled"]
    assert [k.short_name for k in results[1].kernels][0].startswith("cpp_fused_mul_sin")
    assert [thread for _, thread in set_ups] == ["profiler set-up"]  # the compiled mode's; eager sets up its own


def test_the_first_set_up_of_a_process_runs_on_the_measuring_thread(
    set_ups: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing.ProfilerSetUp, "_first_done", False)
    results, failures = profile("a - b", ["compiled"])
    assert not failures and results[0].kernels
    assert [thread for _, thread in set_ups] == [threading.current_thread().name]


def test_a_set_up_the_measurement_never_used_is_ended(set_ups: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compile fails after the profiler was set up: the profile is ended (its results read),
    not left attached to the process, and the next measurement has its rows."""

    def failing_compile(*args: object, **kwargs: object) -> None:
        raise MeasureError(ChainErrorInfo("compile", "Inductor failed"))

    with monkeypatch.context() as patched:
        patched.setattr(sweep, "prepare", failing_compile)
        results, failures = profile("a + b", ["compiled"])
    assert not results and failures[0].error.message == "Inductor failed"
    [(set_up, _)] = set_ups
    assert set_up.profiler.kineto_results is not None
    results, failures = profile("a + b", ["eager"])
    assert not failures and results[0].kernels


def test_the_set_up_waits_while_another_process_measures_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attaching the profiler is kept out of another worker's reps: the set-up takes the device's
    lock, as a measurement does."""
    monkeypatch.setattr(timing.ProfilerSetUp, "_first_done", True)
    monkeypatch.setattr(timing, "SET_UP_AFTER_S", 0.0)  # due at once: what holds it up is the lock
    path = device_lock("cpu").path
    assert path is not None
    other = os.open(path, os.O_RDWR | os.O_CREAT)  # a descriptor of its own: another process's flock
    fcntl.flock(other, fcntl.LOCK_EX)
    try:
        set_up = timing.ProfilerSetUp(torch.device("cpu"))
        assert set_up._thread is not None
        set_up._thread.join(timeout=0.5)
        assert set_up._thread.is_alive() and not set_up.profiler.entered
    finally:
        os.close(other)
    assert set_up.take() is set_up.profiler and set_up.profiler.entered
    set_up.discard()


def test_rows_that_need_the_profiler_before_its_due_time_start_its_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The set-up waits ``SET_UP_AFTER_S`` into a compile (the other worker's eager rows first),
    unless the rows need it sooner: a compile that ends early does not wait for that moment."""
    monkeypatch.setattr(timing.ProfilerSetUp, "_first_done", True)
    monkeypatch.setattr(timing, "SET_UP_AFTER_S", 600.0)
    set_up = timing.ProfilerSetUp(torch.device("cpu"))
    taken = threading.Thread(target=set_up.take)
    taken.start()
    taken.join(timeout=60)
    assert not taken.is_alive() and set_up.profiler.entered
    set_up.discard()
