"""A torch outside the checked versions takes every plain fallback of probes.engine.torch_compat,
and the engine still measures: a new torch measures, perhaps with less detail, instead of breaking
on an internal that moved."""

from __future__ import annotations

import pytest
import torch

from probes.engine import torch_compat
from probes.engine.sweep import run_profile
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed


@pytest.fixture
def unchecked_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch as a version none of the private names was checked on."""
    monkeypatch.setattr(torch_compat, "torch_version", lambda: (9, 0))


def measured(chain: str, modes: list[str]) -> dict[str, Measurement]:
    events: list[object] = []
    run_profile(ProfileRequest("r", chain, sizes=[4096], modes=modes, device="cpu", reps=3), events.append)
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    return {e.measurement.mode: e.measurement for e in events if isinstance(e, MeasurementResult)}


def test_the_installed_torch_is_read_once_as_major_and_minor() -> None:
    version = torch_compat.torch_version()
    assert version is not None and f"{version[0]}.{version[1]}" in torch.__version__


@pytest.mark.usefixtures("unchecked_torch")
def test_every_private_name_falls_back_on_an_unchecked_torch() -> None:
    assert not torch_compat.checked()
    assert torch_compat.demangle("_ZN2at6native3addEv") == "_ZN2at6native3addEv"
    assert torch_compat.is_profiler_bookkeeping("aten::is_leaf")
    assert not torch_compat.is_profiler_bookkeeping("aten::add")
    assert torch_compat.unique_op() is None
    assert torch_compat.dynamo_cache_entries(test_every_private_name_falls_back_on_an_unchecked_torch.__code__) is None
    assert torch_compat.dynamo_counters() is None
    assert torch_compat.inductor_modules() == [] and torch_compat.inductor_module_count() == 0
    assert not torch_compat.is_compiler_error(RuntimeError("x"))
    assert torch_compat.defer_dynamo_marks([]) == 0
    assert torch_compat.cuda_driver_version() is None
    assert not torch_compat.profiler_set_up_apart()
    assert not torch_compat.raw_profile_events_readable()
    assert not torch_compat.compiler_to_import() and not torch_compat.compiler_imported()
    assert not torch_compat.wrap_inductor_benchmarks(lambda benchmark: benchmark)
    assert torch_compat.triton_launch_config(object()) is None
    assert torch_compat.inductor_bytes_estimate(object()) is None
    assert torch_compat.triton_kernel_facts(object()) is None
    assert torch_compat.memory_events(object()) is None
    assert torch_compat.range_start_ns(object(), "kernel_tui::backward") is None
    with torch_compat.recording_autotune_trials() as trials:
        assert trials == {}


def test_a_memory_profiles_allocations_and_frees_are_read_in_order() -> None:
    from torch.autograd.profiler import profile, record_function

    a = torch.ones(1000)
    with profile(use_kineto=True, profile_memory=True) as prof:
        b = a + a
        with record_function("kernel_tui::backward"):
            del b
    events = torch_compat.memory_events(prof.kineto_results)
    assert events is not None
    assert [nbytes for _, nbytes in events] == [4000, -4000]
    split = torch_compat.range_start_ns(prof.kineto_results, "kernel_tui::backward")
    assert split is not None and events[0][0] < split <= events[1][0]


def test_the_plain_tree_walks_agree_with_torchs_on_an_ops_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = torch.ones(2), torch.zeros(3)
    args = ((a, [b, None, 2], {"out": a}), {"dim": 0, "indices": (b,)})
    checked = torch_compat.tree_leaves(args), torch_compat.tree_map(lambda x: x, args)
    monkeypatch.setattr(torch_compat, "torch_version", lambda: (9, 0))
    plain = torch_compat.tree_leaves(args), torch_compat.tree_map(lambda x: x, args)
    assert [id(x) for x in plain[0]] == [id(x) for x in checked[0]]
    assert plain[1] == checked[1]


def test_the_bookkeeping_names_are_those_torch_drops() -> None:
    from torch.autograd.profiler_util import _filter_name

    assert all(_filter_name(name) for name in torch_compat.PROFILER_BOOKKEEPING)


def test_eager_rows_on_an_unchecked_torch_are_the_checked_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    checked = measured("(a + b).relu()", ["eager"])["eager"]
    monkeypatch.setattr(torch_compat, "torch_version", lambda: (9, 0))
    plain = measured("(a + b).relu()", ["eager"])["eager"]
    rows = lambda m: sorted((k.name, k.launches_per_call, k.bytes) for k in m.kernels)  # noqa: E731
    assert rows(plain) == rows(checked) == [("aten::add", 1.0, 3 * 4096 * 4), ("aten::clamp_min", 1.0, 2 * 4096 * 4)]


@pytest.mark.slow
@pytest.mark.usefixtures("unchecked_torch")
def test_a_compile_on_an_unchecked_torch_still_runs_compiled_and_shows_its_kernel() -> None:
    """Without Inductor's internals the kernel's source and bytes are unknown; the kernel, and
    that it ran compiled, still come from the profile."""
    compiled = measured("(a - b).relu()", ["compiled"])["compiled"]
    assert compiled.ran_compiled, compiled.fallback_reason
    assert [k.short_name for k in compiled.kernels] == ["cpp_fused_relu_sub_0"]
    assert compiled.kernels_per_call == 1
