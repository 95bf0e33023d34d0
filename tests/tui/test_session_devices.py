"""The live session with several devices (``--device cpu,b:cpu``): one decision, every device's
results kept apart under the same keys; pure, no app."""

from __future__ import annotations

from test_session import TIMING, measurement, ready, sends

from probes.link.protocol import ChainErrorInfo, MeasurementResult, Progress, RequestDone, RequestFailed
from probes.link.settings import Settings
from tui.session import Cancel, LiveSession


def two_devices(text: str = "(a + b).relu()") -> LiveSession:
    session = LiveSession(Settings(), text, timing=TIMING)
    session.set_entries(["cuda:0", "b:cuda:0"])
    return session


def test_the_first_device_decides_and_the_others_results_are_kept_under_the_same_keys() -> None:
    session = two_devices()
    [request] = sends(session.worker_ready(ready(), 0.0))
    for mode in request.modes:
        m = measurement(request.chain, mode)
        session.on_entry_event(1, MeasurementResult(request.id, m))
    session.on_entry_event(1, RequestDone(request.id))
    other = session.focus_view(0.1, 1)
    assert other.entry == "b:cuda:0" and all(v.fresh and v.measurement is not None for v in other.modes)
    first = session.focus_view(0.1)
    assert first.entry == "cuda:0" and all(v.measurement is None for v in first.modes) and first.busy
    assert session.tick(0.2) == []  # another device's rows decide nothing: the request is still out


def test_a_request_another_device_still_runs_is_cancelled_there_too() -> None:
    session = two_devices()
    [request] = sends(session.worker_ready(ready(), 0.0))
    for mode in request.modes:
        session.on_event(MeasurementResult(request.id, measurement(request.chain, mode)), 0.1)
    session.on_event(RequestDone(request.id), 0.1)  # done on the first device, not on the other
    session.on_entry_event(1, Progress(request.id, "compiling", "compiling", "compiled", 1_000_000, 2, 2))
    effects = session.edit("(a * b).relu()", 0.2)
    assert Cancel(request.id) in effects


def test_a_device_that_is_lost_keeps_its_failure_to_itself() -> None:
    session = two_devices()
    [request] = sends(session.worker_ready(ready(), 0.0))
    session.on_entry_event(1, RequestFailed(request.id, ChainErrorInfo("link", "lost the worker: gone")))
    session.on_entry_event(1, RequestDone(request.id))
    session.worker_lost(1)
    assert all(v.failure is not None for v in session.focus_view(0.1, 1).modes)
    assert all(v.failure is None for v in session.focus_view(0.1).modes)


def test_following_moves_through_the_devices_and_back() -> None:
    session = two_devices()
    assert session.followed == 0
    assert session.follow_next() == "b:cuda:0" and session.followed == 1
    assert session.follow_next() == "cuda:0" and session.followed == 0
