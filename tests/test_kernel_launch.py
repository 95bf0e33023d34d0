"""What a kernel is made of: occupancy from the device's limits, launch records read from a
profile's Chrome trace, Triton's own facts merged in, and the lines that explain a spill or a low
occupancy. The worked rows are real ones, recorded on an H200 (torch 2.11, CUDA 13)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from probes.engine import torch_compat
from probes.engine.kernel_launch import (
    KnownLaunches,
    fill_launches,
    launch_diagnostics,
    launch_from_record,
    triton_launches,
    with_occupancy,
)
from probes.engine.occupancy import H200, DeviceLimits, theoretical_occupancy
from probes.engine.profile_events import kernel_records, read_kernel_records, read_trace
from probes.link.protocol import KernelRow, LaunchInfo, Measurement, ProfileReport

NVJET_ARGS = {
    "External id": 2,
    "queued": 0,
    "device": 0,
    "context": 1,
    "stream": 7,
    "correlation": 15,
    "registers per thread": 168,
    "shared memory": 213188,
    "blocks per SM": 1.0,
    "warps per SM": 12.0,
    "grid": [2, 66, 1],
    "block": [384, 1, 1],
    "est. achieved occupancy %": 0,
}
"""Kineto's record of cuBLAS's bf16 4096^2 matmul kernel on the H200."""
NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"


def chrome_trace(*kernels: dict) -> dict:
    """A Chrome trace as Kineto writes it: CPU ops, runtime calls and kernels."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"External id": 2}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cuLaunchKernelEx", "args": {"correlation": 15}},
    ]
    events += [{"ph": "X", "cat": "kernel", "name": name, "args": args} for name, args in kernels]
    return {"schemaVersion": 1, "traceEvents": events}


def row(name: str, pass_: str | None = None) -> KernelRow:
    return KernelRow(name, name, "kernel", 1.0, 10.0, 10.0, 1.0, None, None, None, pass_=pass_)


def test_a_triton_pointwise_kernel_of_256_threads_and_20_registers_fills_an_h200_sm() -> None:
    found = theoretical_occupancy(H200, 256, 20, 0)
    assert found is not None
    assert (found.blocks_per_sm, found.occupancy, found.limit) == (8, 1.0, "warps")


def test_cublas_nvjet_kernel_holds_one_block_of_12_warps_per_sm() -> None:
    found = theoretical_occupancy(H200, 384, 168, 213188)
    assert found is not None
    assert found.blocks_per_sm == 1
    assert found.occupancy == pytest.approx(12 / 64)  # 18.75%


def test_254_registers_per_thread_leave_room_for_one_block_of_256_threads() -> None:
    # 254 x 32 = 8128 registers per warp, allocated as 8192: 8 warps of 64 fit the register file
    found = theoretical_occupancy(H200, 256, 254, 67584)
    assert found is not None
    assert (found.blocks_per_sm, found.occupancy, found.limit) == (1, 0.125, "registers")


def test_shared_memory_counts_the_runtimes_reserved_kilobyte_per_block() -> None:
    # 8 blocks of 28 KiB (+1 KiB reserved each) need 232 KiB: more than the SM's 228 KiB
    found = theoretical_occupancy(H200, 64, 16, 28 * 1024)
    assert found is not None
    assert (found.blocks_per_sm, found.limit) == (7, "shared memory")
    older = DeviceLimits.for_capability(7, 0, 2048, 65536, 98304, 32)  # no reserve before sm_80
    assert theoretical_occupancy(older, 64, 16, 24 * 1024).blocks_per_sm == 4


def test_small_blocks_are_limited_by_the_blocks_an_sm_holds() -> None:
    found = theoretical_occupancy(H200, 32, 16, 0)
    assert found is not None
    assert (found.blocks_per_sm, found.occupancy, found.limit) == (32, 0.5, "blocks")


def test_a_block_larger_than_an_sm_has_no_occupancy() -> None:
    assert theoretical_occupancy(H200, 4096, 16, 0) is None
    assert theoretical_occupancy(H200, 0, 16, 0) is None


def test_a_recorded_kernel_event_becomes_its_launch_with_our_occupancy() -> None:
    records = kernel_records(chrome_trace((NVJET, NVJET_ARGS)))
    assert set(records) == {15}, "only kernels are kept, by correlation id"
    ((name, args),) = records[15]
    assert name == NVJET
    info = launch_from_record(args, H200)
    assert info.grid == [2, 66, 1]
    assert info.block == [384, 1, 1]
    assert info.registers_per_thread == 168
    assert info.shared_memory_bytes == 213188
    assert info.blocks_per_sm == 1
    assert info.occupancy == pytest.approx(0.1875), "Kineto's estimate reads 0 for this kernel; ours does not"


def test_a_profiles_kernel_records_are_read_back_from_the_trace_it_writes() -> None:
    class Written:
        def export_chrome_trace(self, path: str) -> None:
            Path(path).write_text(json.dumps(chrome_trace((NVJET, NVJET_ARGS))))

    assert read_kernel_records(Written())[15] == [(NVJET, NVJET_ARGS)]  # type: ignore[arg-type]


def test_a_trace_that_cannot_be_written_gives_no_records() -> None:
    class Broken:
        def export_chrome_trace(self, path: str) -> None:
            raise RuntimeError("kineto stopped")

    assert read_kernel_records(Broken()) == {}  # type: ignore[arg-type]


def test_each_row_gets_the_record_of_its_own_first_launch() -> None:
    add = {**NVJET_ARGS, "correlation": 40, "grid": [977, 1, 1], "block": [128, 1, 1], "registers per thread": 32}
    add["shared memory"] = 0
    rows = [row(NVJET, "forward"), row("vectorized_elementwise_kernel", "backward"), row("unrecorded")]
    first = {(NVJET, "forward"): 15, ("vectorized_elementwise_kernel", "backward"): 40, ("unrecorded", None): 99}
    fill_launches(rows, first, kernel_records(chrome_trace((NVJET, NVJET_ARGS), ("add", add))), {}, H200)
    assert rows[0].launch is not None and rows[0].launch.grid == [2, 66, 1]
    assert rows[1].launch is not None and rows[1].launch.grid == [977, 1, 1]
    assert rows[1].launch.occupancy == 1.0
    assert rows[2].launch is None


def test_a_cuda_graphs_kernels_share_one_launch_and_are_told_apart_by_name() -> None:
    relu = {**NVJET_ARGS, "grid": [977, 1, 1], "block": [128, 1, 1], "registers per thread": 32}
    records = kernel_records(chrome_trace((NVJET, NVJET_ARGS), ("relu_kernel", relu)))  # one cudaGraphLaunch
    assert len(records[15]) == 2
    rows = [row(NVJET), row("relu_kernel"), row("not_in_the_graph")]
    first = {(NVJET, None): 15, ("relu_kernel", None): 15, ("not_in_the_graph", None): 15}
    fill_launches(rows, first, records, {}, H200)
    assert rows[0].launch is not None and rows[0].launch.grid == [2, 66, 1]
    assert rows[1].launch is not None and rows[1].launch.grid == [977, 1, 1]
    assert rows[2].launch is None, "never another kernel's launch"


def triton_kernel(regs: int, spills: int, kwargs: dict, warps: int, stages: int, state: str) -> SimpleNamespace:
    """Stands in for Inductor's CachingAutotuner after tuning, with the attributes torch 2.11 has."""
    config = SimpleNamespace(kwargs=kwargs, num_warps=warps, num_stages=stages)
    launcher = SimpleNamespace(config=config, n_regs=regs, n_spills=spills, shared=0)
    return SimpleNamespace(launchers=[launcher], autotune_cache_info={"autotune_cache_state": state}, configs=None)


@pytest.mark.skipif(not torch_compat.checked(), reason="Triton's facts are read on checked torch versions only")
def test_a_triton_kernel_adds_its_warps_stages_block_sizes_and_the_configs_its_autotuner_timed() -> None:
    name = "triton_poi_fused_add_mul_relu_0"
    module = ModuleType("wrapper")
    setattr(module, name, triton_kernel(20, 0, {"XBLOCK": 256}, 4, 1, "miss"))
    trials = {
        name: [
            ("XBLOCK=512, num_warps=8, num_stages=1", 0.0121),
            ("XBLOCK=256, num_warps=4, num_stages=1", 0.0112),
        ]
    }
    triton = triton_launches([module], [name], trials)
    record = {**NVJET_ARGS, "grid": [1954, 1, 1], "block": [128, 1, 1], "registers per thread": 20}
    record["shared memory"] = 0
    rows = [row(name)]
    fill_launches(rows, {(name, None): 15}, {15: [(name, record)]}, triton, H200)
    info = rows[0].launch
    assert info is not None
    assert (info.num_warps, info.num_stages, info.block_sizes, info.spills) == (4, 1, {"XBLOCK": 256}, 0)
    assert info.grid == [1954, 1, 1], "the profile's record stays the source of the grid"
    assert info.autotune_cache == "miss"
    assert [(t.config, t.chosen) for t in info.autotune] == [
        ("XBLOCK=256, num_warps=4, num_stages=1", True),
        ("XBLOCK=512, num_warps=8, num_stages=1", False),
    ]


@pytest.mark.skipif(not torch_compat.checked(), reason="Triton's facts are read on checked torch versions only")
def test_without_a_profile_record_a_triton_kernels_own_facts_give_its_occupancy() -> None:
    name = "triton_red_fused_sum_0"
    module = ModuleType("wrapper")
    setattr(module, name, triton_kernel(32, 0, {"XBLOCK": 1, "R0_BLOCK": 2048}, 16, 1, "hit"))
    rows = [row(name)]
    fill_launches(rows, {}, {}, triton_launches([module], [name], {}), H200)
    info = rows[0].launch
    assert info is not None
    assert info.block == [512, 1, 1]
    assert info.occupancy == 1.0
    assert info.block_sizes == {"XBLOCK": 1, "R0_BLOCK": 2048}
    assert info.autotune == []


def test_a_spilling_kernel_is_explained_in_one_line() -> None:
    spilling = row("triton_red_fused_sum_0")
    spilling.launch = with_occupancy(LaunchInfo(block=[1024, 1, 1], registers_per_thread=64, spills=12), H200)
    (line,) = [d for d in launch_diagnostics([spilling]) if "spills" in d]
    assert line.startswith("triton_red_fused_sum_0 spills 12 registers per thread to local memory")
    assert "round trip" in line and "\n" not in line


def test_low_occupancy_is_explained_with_what_limits_it() -> None:
    reduction = row("triton_red_fused_sum_0")
    reduction.ops = ["sum"]
    reduction.launch = launch_from_record(NVJET_ARGS, H200)
    (line,) = launch_diagnostics([reduction])
    assert line.startswith("triton_red_fused_sum_0 has 19% theoretical occupancy (limited by registers)")
    assert "hide memory latency" in line


def test_a_matmuls_low_occupancy_is_its_design_and_says_nothing() -> None:
    gemm = row(NVJET)
    gemm.ops = ["mm"]
    gemm.launch = launch_from_record(NVJET_ARGS, H200)
    assert gemm.launch is not None and gemm.launch.occupancy is not None and gemm.launch.occupancy < 0.25
    assert launch_diagnostics([gemm]) == []


def test_a_full_occupancy_kernel_without_spills_says_nothing() -> None:
    add = row("triton_poi_fused_add_0")
    add.launch = with_occupancy(LaunchInfo(block=[256, 1, 1], registers_per_thread=20, spills=0), H200)
    assert launch_diagnostics([add]) == []


def test_launch_info_round_trips_through_a_report() -> None:
    kernel = row(NVJET)
    kernel.launch = launch_from_record(NVJET_ARGS, H200)
    m = Measurement("a @ b", "eager", 4096, "cuda:0", "bf16", [kernel], [], 1, None, 10.0, 12.0, 5, False)
    m.peak_memory_bytes = 33_554_432
    report = ProfileReport("cuda:0", "NVIDIA H200", "2.11", "today", [m])
    back = ProfileReport.from_json(report.to_json()).results[0]
    assert back.kernels[0].launch == kernel.launch
    assert back.peak_memory_bytes == 33_554_432


def test_a_call_measured_again_reuses_the_launches_read_for_it() -> None:
    known = KnownLaunches(size=2)
    first = [row(NVJET, "forward"), row("add", "backward")]
    first[0].launch = launch_from_record(NVJET_ARGS, H200)
    assert not known.fill("call", first), "nothing read yet"
    known.remember("call", first)
    again = [row(NVJET, "forward"), row("add", "backward")]
    assert known.fill("call", again)
    assert again[0].launch == first[0].launch and again[1].launch is None
    other = [row(NVJET, "forward"), row("a kernel this call did not run before")]
    assert not known.fill("call", other) and other[0].launch is None, "all rows known, or none given"
    known.remember("second", first)
    known.remember("third", first)
    assert not known.fill("call", again), "the oldest is forgotten past its size"


def test_a_real_profiles_trace_is_written_and_read_back() -> None:
    torch = pytest.importorskip("torch")
    from torch.autograd.profiler import profile

    a = torch.ones(1000)
    with profile(use_kineto=True) as prof:
        torch.add(a, a)
    names = {event.get("name") for event in read_trace(prof)["traceEvents"]}
    assert "aten::add" in names
    assert read_kernel_records(prof) == {}, "a CPU profile has no device kernels"
