"""The tool's CPU compiles name each kernel in the profiler without paying for Inductor's
profiling header: every kernel is built with the light range, and still shows by its name."""

from __future__ import annotations

from typing import Any

import pytest

from probes.engine.cpu_kernel_record import (
    HEAVY_INCLUDE,
    HEAVY_RECORD,
    LIGHT_RECORD,
    light_kernel_records,
    light_record_source,
)
from tests.test_engine_truth import profile


@pytest.mark.slow
def test_a_cpu_compile_builds_its_kernels_with_the_light_range_and_the_profiler_still_names_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from torch._inductor.codecache import CppCodeCache, CppPythonBindingsCodeCache

    built: list[str] = []
    load = CppCodeCache.__dict__["load_async"].__func__

    def spy(cls: type, main_code: str, *args: Any, **kwargs: Any) -> Any:
        built.append(main_code)
        return load(cls, main_code, *args, **kwargs)

    monkeypatch.setattr(CppPythonBindingsCodeCache, "load_async", classmethod(spy))
    results, failures = profile("(a * 2.75 + b).sin()", [4_096], ["compiled"], reps=3)
    assert not failures, failures
    (m,) = results
    assert m.ran_compiled, m.fallback_reason
    assert [k.short_name for k in m.kernels] == ["cpp_fused_add_mul_sin_0"]
    assert m.kernels[0].name.startswith("graph_") and m.kernels[0].device_time_us > 0
    assert built and all(LIGHT_RECORD in code and HEAVY_INCLUDE not in code for code in built)
    assert LIGHT_RECORD not in "".join(m.compile.generated_source.values()), "the source shown is Inductor's own"


def test_a_kernel_without_a_range_opened_by_name_alone_is_left_as_it_is() -> None:
    plain = '#include <torch/csrc/inductor/cpp_prefix.h>\nextern "C" void kernel(const float* in_ptr0) {}\n'
    with_inputs = HEAVY_INCLUDE + 'extern "C" void kernel() { ' + HEAVY_RECORD + 'record_k_("k", nullptr, {input}); }\n'
    by_name = HEAVY_INCLUDE + 'extern "C" void kernel() { ' + HEAVY_RECORD + 'record_k_("k", nullptr); }\n'
    assert light_record_source(plain) == plain
    assert light_record_source(with_inputs) == with_inputs
    assert LIGHT_RECORD in light_record_source(by_name)


@pytest.mark.parametrize(("cache", "light"), [("CppPythonBindingsCodeCache", True), ("CppWrapperCodeCache", False)])
def test_only_the_kernels_own_cache_builds_the_light_range(
    monkeypatch: pytest.MonkeyPatch, cache: str, light: bool
) -> None:
    import torch._inductor.codecache as codecache

    owner = getattr(codecache, cache)
    built: list[str] = []
    monkeypatch.setattr(
        owner, "load_async", classmethod(lambda cls, code, *args, **kwargs: built.append(code) or (lambda: None))
    )
    source = HEAVY_INCLUDE + 'extern "C" void kernel() { ' + HEAVY_RECORD + 'record_k_("k", nullptr); }\n'
    with light_kernel_records():
        owner.load_pybinding_async(["float*"], source)
    (code,) = built
    assert (LIGHT_RECORD in code and HEAVY_INCLUDE not in code) if light else code.startswith(source)
    owner.load_pybinding_async(["float*"], source)
    assert built[1].startswith(source), "outside the block every source is built as it is"
