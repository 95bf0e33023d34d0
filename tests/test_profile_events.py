"""The tool's reading of a profile (``probes.engine.profile_events.read_profile``): torch's events,
nested as torch nests them, and the launches of each rep read from them. Profiles as a
measurement's: the labelled eager call, then reps with the flush, forward + backward with the
backward labelled, and Inductor's kernels."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.autograd.profiler import profile, record_function  # noqa: E402

from probes.engine import profile_events  # noqa: E402
from probes.engine.compiling import prepare  # noqa: E402
from probes.engine.diagnostics import Diagnostics  # noqa: E402
from probes.engine.launches import REP_LABEL, read_profile  # noqa: E402
from probes.engine.plan import plan_request, plan_size  # noqa: E402
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


def check_reading(device: torch.device, mode: str, grad: bool) -> None:
    prof = one_profile(device, mode, grad)
    events = profile_events.read_profile(prof)
    assert len(events) == len(prof.function_events)
    assert any(e.cpu_children for e in events)
    assert all(child.cpu_parent is e for e in events for child in e.cpu_children)
    launches = read_profile(events, device)
    assert {launch.rep for launch in launches.launches} >= {0, 1, 2}
    if grad:
        assert {launch.pass_ for launch in launches.launches if launch.rep is not None} == {"forward", "backward"}


@pytest.mark.parametrize(("mode", "grad"), [("eager", False), ("eager", True), ("compiled", False)])
def test_a_cpu_profiles_launches_are_read_rep_by_rep(mode: str, grad: bool) -> None:
    check_reading(torch.device("cpu"), mode, grad)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize(("mode", "grad"), [("eager", False), ("eager", True), ("compiled", False), ("compiled", True)])
def test_a_cuda_profiles_launches_are_read_rep_by_rep(mode: str, grad: bool) -> None:
    check_reading(torch.device("cuda"), mode, grad)
