"""The live session with several devices (``--device cpu,b:cpu``): one decision, every device's
results kept apart under the same keys; pure, no app."""

from __future__ import annotations

from test_session import TIMING, measurement, ready, sends

from probes.link.protocol import (
    ChainErrorInfo,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
)
from probes.link.settings import Settings
from tui.session import Cancel, LiveSession, Notice, Send


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


def test_a_first_device_that_is_down_holds_up_nothing_and_leads_again_once_back() -> None:
    session = two_devices()
    assert session.worker_lost(0) == [] and session.tick(0.0) == []
    [sent] = [e for e in session.worker_ready(ready(), 0.0, entry=1) if isinstance(e, Send)]
    assert session.lead == 1 and sent.entries == (1,)  # nothing to the box that is down
    for mode in sent.request.modes:
        session.on_event(MeasurementResult(sent.request.id, measurement(sent.request.chain, mode)), 0.1, 1)
    session.on_event(RequestDone(sent.request.id), 0.1, 1)
    assert all(v.fresh for v in session.focus_view(0.1, 1).modes)
    [back] = [e for e in session.worker_ready(ready(), 0.2) if isinstance(e, Send)]
    assert session.lead == 0 and back.entries == (0,)  # what it lacks, to it alone
    assert back.request.modes == sent.request.modes


SWEEP = Settings(sizes=(100, 10_000, 1_000_000), modes=("eager", "compiled"), spread=True)


def spread_over_two() -> tuple[LiveSession, dict[int, list[ProfileRequest]]]:
    """Two devices of one kind, both ready, a spread sweep started: its requests by device."""
    session = LiveSession(SWEEP, "(a + b).relu()", timing=TIMING)
    session.set_entries(["cpu", "b:cpu"], spread=True)
    [focus] = [e for e in session.worker_ready(ready(), 0.0) if isinstance(e, Send)]
    assert focus.entries == (0,)  # the live size: the lead's alone
    session.worker_ready(ready(), 0.0, entry=1)
    shares: dict[int, list[ProfileRequest]] = {}
    for effect in session.start_sweep(0.1):
        if isinstance(effect, Send) and isinstance(effect.request, ProfileRequest):
            [entry] = effect.entries
            shares.setdefault(entry, []).append(effect.request)
    return session, shares


def pairs_of(requests: list[ProfileRequest]) -> set[tuple[int, str]]:
    return {(size, mode) for request in requests for size in request.sizes for mode in request.modes}


def test_a_spread_sweep_measures_each_pair_once_on_one_device_and_shows_one_sweep_in_size_order() -> None:
    session, shares = spread_over_two()
    assert set(shares) == {0, 1}
    everything = {(size, mode) for size in SWEEP.sizes for mode in SWEEP.modes}
    assert not pairs_of(shares[0]) & pairs_of(shares[1]) and pairs_of(shares[0]) | pairs_of(shares[1]) == everything
    for entry in (1, 0):  # the second device first: the sweep is shown in size order all the same
        for request in shares[entry]:
            for size, mode in pairs_of([request]):
                session.on_event(MeasurementResult(request.id, measurement(request.chain, mode, size)), 0.2, entry)
            session.on_event(RequestDone(request.id), 0.2, entry)
    view = session.sweep_view()
    assert view.spread == ("cpu", "b:cpu") and not view.running and view.results is not None
    rows = [(m.size, m.mode) for m in view.results.measurements()]
    assert rows == [(size, mode) for size in SWEEP.sizes for mode in SWEEP.modes]
    assert {pair: entry for pair, entry in view.results.measured_by.items()} == {
        pair: entry for entry in (0, 1) for pair in pairs_of(shares[entry])
    }
    assert {(m.size, m.mode) for m in session.shown_measurements(1)} >= pairs_of(shares[1])


def test_a_device_that_drops_out_of_a_spread_sweep_names_what_it_leaves_in_one_line() -> None:
    session, shares = spread_over_two()
    for request in shares[0]:
        for size, mode in pairs_of([request]):
            session.on_event(MeasurementResult(request.id, measurement(request.chain, mode, size)), 0.2)
        session.on_event(RequestDone(request.id), 0.2)
    first, *rest = shares[1]
    (size, mode), *left = sorted(pairs_of(shares[1]))
    effects = session.on_event(MeasurementResult(first.id, measurement(first.chain, mode, size)), 0.3, 1)
    effects += session.on_event(RequestFailed(first.id, ChainErrorInfo("link", "the connection failed")), 0.3, 1)
    effects += session.on_event(RequestDone(first.id), 0.3, 1)
    effects += session.worker_lost(1)  # the rest of its share ends with it
    for request in rest:
        effects += session.on_event(RequestDone(request.id), 0.4, 1)
    [line] = [e.text for e in effects if isinstance(e, Notice)]
    assert line.startswith("b:cpu: not measured: ")
    named = line.removeprefix("b:cpu: not measured: ").split(", ")
    assert len(named) == len(left) and all(f"{m} N=" in line for _, m in left)
    view = session.sweep_view()
    assert view.results is not None and pairs_of(shares[0]) | {(size, mode)} == set(view.results.results)


def test_a_device_of_a_spread_sweep_other_than_the_lead_says_it_measures_its_share_and_waits_for_nothing() -> None:
    session, _ = spread_over_two()
    other = session.focus_view(0.2, 1)
    assert all(view.activity == "" for view in other.modes) and not other.busy
    assert other.held == (
        "this device measures only its share of the sweep (--spread); the size measured on every edit runs on cpu"
    )
    lead = session.focus_view(0.2)
    assert lead.held is None and any(view.activity for view in lead.modes)
