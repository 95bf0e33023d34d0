"""The tool's raw reading of a profile (``probes.engine.profile_events.read_events``) against
torch's own (``profile.function_events``), on one profile: the same events, nested the same way,
and the same launches read from them. Profiles as a measurement's: the labelled eager call, then
reps with the flush, forward + backward with the backward labelled, and Inductor's kernels."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.autograd.profiler import profile, record_function  # noqa: E402

from probes.engine.compiling import prepare  # noqa: E402
from probes.engine.diagnostics import Diagnostics  # noqa: E402
from probes.engine.launches import REP_LABEL, read_profile  # noqa: E402
from probes.engine.plan import plan_request, plan_size  # noqa: E402
from probes.engine.profile_events import ProfileEvent, from_function_events, read_events  # noqa: E402
from probes.engine.timing import L2Flusher  # noqa: E402
from probes.engine.trace import recording_ops  # noqa: E402
from probes.link.protocol import ProfileRequest  # noqa: E402

CHAIN = "(a @ b).relu().sum(dim=0) * 2"


def one_profile(device: torch.device, mode: str, grad: bool) -> profile:
    n = 64
    request = ProfileRequest("events", CHAIN, sizes=[n], modes=[mode], device=str(device), grad=grad)
    prepared = prepare(plan_size(plan_request(request), n), mode, Diagnostics())
    call = prepared.profiled_call or prepared.call
    flush = L2Flusher(device)
    with profile(use_device="cuda" if device.type == "cuda" else None, use_kineto=True) as prof:
        if mode == "eager":
            with recording_ops(label_ops=True):
                call()
        for _ in range(3):
            flush()
            with record_function(REP_LABEL):
                call()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return prof


def described(events: list[ProfileEvent]) -> list[tuple]:
    def key(e: ProfileEvent | None) -> tuple | None:
        return None if e is None else (e.name, round(e.start_us, 3), round(e.end_us, 3))

    return [
        (
            *key(e),
            e.device_type,
            e.correlation_id,
            e.thread,
            e.is_async,
            e.is_user_annotation,
            key(e.cpu_parent),
            [key(c) for c in e.cpu_children],
        )
        for e in events
    ]


def check_same_reading(device: torch.device, mode: str, grad: bool) -> None:
    prof = one_profile(device, mode, grad)
    ours, theirs = read_events(prof.kineto_results), from_function_events(prof.function_events)
    assert described(ours) == described(theirs)
    assert any(e.cpu_children for e in ours)
    launches = read_profile(ours, device)
    assert launches == read_profile(theirs, device)
    assert {launch.rep for launch in launches.launches} >= {0, 1, 2}
    if grad:
        assert {launch.pass_ for launch in launches.launches if launch.rep is not None} == {"forward", "backward"}


@pytest.mark.parametrize(("mode", "grad"), [("eager", False), ("eager", True), ("compiled", False)])
def test_a_cpu_profile_reads_as_torch_reads_it(mode: str, grad: bool) -> None:
    check_same_reading(torch.device("cpu"), mode, grad)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize(("mode", "grad"), [("eager", False), ("eager", True), ("compiled", False), ("compiled", True)])
def test_a_cuda_profile_reads_as_torch_reads_it(mode: str, grad: bool) -> None:
    check_same_reading(torch.device("cuda"), mode, grad)
