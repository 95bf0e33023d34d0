"""What a kernel is made of, and the memory a fusion saves, on CUDA (run where there is a GPU).

Each figure is checked against its own source: the compiled kernel's launch against Triton's
compiled-kernel metadata, a cuBLAS row against the profiler's record, a spill against Triton's
``n_spills``, peak memory against the size of the intermediate eager makes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

from probes.engine import torch_compat  # noqa: E402
from probes.engine.kernel_launch import device_limits  # noqa: E402
from probes.engine.occupancy import theoretical_occupancy  # noqa: E402
from probes.engine.sweep import run_profile  # noqa: E402
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]


def profile(chain: str, size: int, modes: list[str]) -> dict[str, Measurement]:
    events: list = []
    run_profile(ProfileRequest(id="k", chain=chain, sizes=[size], modes=modes, device="cuda"), events.append)
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    return {e.measurement.mode: e.measurement for e in events if isinstance(e, MeasurementResult)}


def triton_launcher(kernel_name: str) -> object:
    """The chosen launcher of the compiled Triton kernel of that name, as Inductor holds it."""
    for module in reversed(torch_compat.inductor_modules()):
        autotuner = module.__dict__.get(kernel_name)
        if getattr(autotuner, "launchers", None):
            return autotuner.launchers[0]
    raise AssertionError(f"no compiled kernel {kernel_name} in Inductor's wrapper modules")


def test_seed_chains_compiled_kernel_shows_tritons_own_launch() -> None:
    # A size no other test compiles the chain at: Triton's launcher is looked up by kernel name in
    # the newest of Inductor's modules, which must be this compile's.
    compiled = profile("(a + b).relu()", 9_999_991, ["compiled"])["compiled"]
    (row,) = compiled.kernels
    launcher = triton_launcher(row.name)
    info = row.launch
    assert info is not None
    assert info.num_warps == launcher.config.num_warps
    assert info.num_stages == launcher.config.num_stages
    assert info.block_sizes == dict(launcher.config.kwargs)
    assert info.registers_per_thread == launcher.n_regs, "the profiler's record and Triton agree"
    assert info.block == [launcher.config.num_warps * 32, 1, 1]
    assert info.spills == launcher.n_spills
    assert info.grid is not None and info.grid[0] >= 1
    expected = theoretical_occupancy(device_limits(0), info.block[0], launcher.n_regs, info.shared_memory_bytes or 0)
    assert expected is not None and info.occupancy == expected.occupancy


def test_a_cublas_matmul_row_shows_grid_block_registers_and_shared_memory() -> None:
    eager = profile("x: [N, 4096] bf16\nw: [4096, 4096] bf16\nx @ w", 4096, ["eager"])["eager"]
    row = next(k for k in eager.kernels if "aten::mm" in k.ops)  # the GEMM itself: the longest row
    info = row.launch
    assert info is not None, f"no launch record for {row.name}"
    assert info.grid is not None and info.block is not None
    assert info.registers_per_thread is not None and info.registers_per_thread > 0
    assert info.shared_memory_bytes is not None and info.shared_memory_bytes > 0, "a GEMM tiles through shared memory"
    assert info.occupancy is not None and 0 < info.occupancy <= 1


@contextlib.contextmanager
def persistent_reductions_forced() -> Iterator[None]:
    """Inductor builds every reduction persistent (a whole row in registers) and never splits one:
    a row of 65536 floats then cannot fit a thread's registers and Triton spills them."""
    from torch._inductor.choices import InductorChoices
    from torch._inductor.virtualized import V

    class Persistent(InductorChoices):
        @staticmethod
        def should_use_persistent_reduction(features: object, cooperative_reduction: bool) -> bool:
            return True

    V.set_choices_handler(Persistent())
    try:
        with torch_compat.inductor_settings({"split_reductions": False}):
            yield
    finally:
        V.set_choices_handler(InductorChoices())


def test_a_kernel_made_to_spill_shows_the_spill_diagnostic() -> None:
    chain = "x: [N, 65536]\ny: [N, 65536]\n(x * y).var(-1) + x.amax(-1)"
    with persistent_reductions_forced():
        compiled = profile(chain, 64, ["compiled"])["compiled"]
    spilling = [k for k in compiled.kernels if k.launch is not None and k.launch.spills]
    assert spilling, [(k.name, k.launch) for k in compiled.kernels]
    launcher = triton_launcher(spilling[0].name)
    assert spilling[0].launch.spills == launcher.n_spills > 0
    assert any(d.startswith(f"{spilling[0].short_name} spills") for d in compiled.diagnostics)


@pytest.mark.parametrize("n", [1_000_000, 100_000_000])
def test_eager_peak_memory_is_above_compiled_by_the_intermediate(n: int) -> None:
    results = profile("(a + b).relu() * c", n, ["eager", "compiled"])
    eager, compiled = results["eager"], results["compiled"]
    array = 4 * n
    rounding = 2 * 1024 * 1024  # the caching allocator rounds a large block up to 2 MiB
    assert compiled.peak_memory_bytes == pytest.approx(array, abs=rounding), "the output alone"
    assert eager.peak_memory_bytes is not None and compiled.peak_memory_bytes is not None
    assert eager.peak_memory_bytes - compiled.peak_memory_bytes == pytest.approx(array, abs=rounding)


def test_a_cuda_graph_modes_peak_is_unknown_not_zero() -> None:
    """A CUDA graph's memory pool is taken at capture: a replay allocates almost nothing, which is
    not the chain's peak."""
    graphed = profile("(a + b).relu() * c", 1_000_000, ["reduce-overhead"])["reduce-overhead"]
    assert graphed.ran_compiled and graphed.peak_memory_bytes is None
