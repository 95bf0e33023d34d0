"""What a kernel is made of and the memory a fusion saves, as the app, the CLI and the exports show
them. The GPU results here are built in code from the protocol's dataclasses, with the launch
records the profiler gave on an H200 for ``(a + b).relu() * c`` at 1e6 and a cuBLAS matmul (no
recording of these fields exists yet: ``tests/data/record_gpu.sh`` makes one on the GPU box)."""

from __future__ import annotations

import csv
import dataclasses
import io
from types import SimpleNamespace

from rich.console import Console
from tui_helpers import settled, wait_for

from probes.link.baseline import compare, parse_fail_on, regressions
from probes.link.protocol import AutotuneTrial, CompileInfo, KernelRow, LaunchInfo, Measurement
from probes.link.report_tables import headline_table, kernels_table, sweep_table
from probes.link.summary import headline
from tui.export import CSV_COLUMNS, chrome_trace, to_csv
from tui.screens.kernel_detail import KernelDetail
from tui.widgets.headline import comparison_text
from tui.widgets.kernel_pane import kernel_table
from tui.widgets.sweep_pane import sweep_rows

CHAIN = "(a + b).relu() * c"
N = 1_000_000

FUSED = LaunchInfo(
    grid=[1954, 1, 1],
    block=[256, 1, 1],
    registers_per_thread=20,
    shared_memory_bytes=0,
    blocks_per_sm=8,
    occupancy=1.0,
    occupancy_limit="warps",
    num_warps=8,
    num_stages=1,
    block_sizes={"XBLOCK": 512},
    spills=0,
    autotune=[
        AutotuneTrial("XBLOCK=512, num_warps=8, num_stages=1", 0.0098, chosen=True),
        AutotuneTrial("XBLOCK=1024, num_warps=4, num_stages=1", 0.0121),
    ],
    autotune_cache="miss",
)
GEMM = LaunchInfo(
    grid=[2, 66, 1],
    block=[384, 1, 1],
    registers_per_thread=168,
    shared_memory_bytes=213188,
    blocks_per_sm=1,
    occupancy=0.1875,
    occupancy_limit="registers",
)


def kernel(name: str, launch: LaunchInfo | None, ops: list[str]) -> KernelRow:
    return KernelRow(name, name, "kernel", 1.0, 5.0, 5.0, 1.0, 12 * N, 2400.0, 55.0, ops=ops, launch=launch)


def result(mode: str, kernels: list[KernelRow], peak: int | None, device: str = "cuda:0") -> Measurement:
    arrays = 4 if mode != "eager" else 8  # read a, b, c, write the output; eager's intermediates twice more
    m = Measurement(
        CHAIN, mode, N, device, "fp32", kernels, [], float(len(kernels)), arrays * 4 * N, 10.0, 20.0, 10, False
    )
    m.ran_compiled = mode != "eager"
    m.input_bytes = 12 * N
    m.peak_memory_bytes = peak
    return m


def fused() -> Measurement:
    return result("compiled", [kernel("triton_poi_fused_add_mul_relu_0", FUSED, ["add", "relu", "mul"])], 4_000_256)


def eager() -> Measurement:
    rows = [kernel(f"vectorized_elementwise_kernel_{op}", None, [f"aten::{op}"]) for op in ("add", "relu", "mul")]
    return result("eager", rows, 8_000_512)


def rendered(renderable: object, width: int = 160) -> str:
    console = Console(width=width, file=io.StringIO())
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


async def detail_facts(make_app, m: Measurement, row: KernelRow) -> str:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="first results")
        app.push_screen(KernelDetail(m, row))
        await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the kernel detail")
        return rendered(app.screen.query_one(".detail-facts").content)


async def test_kernel_detail_shows_what_a_triton_kernel_is_made_of(make_app) -> None:
    m = fused()
    facts = await detail_facts(make_app, m, m.kernels[0])
    assert "grid 1954 x 1 x 1 · block 256 x 1 x 1" in facts
    assert "20 per thread" in facts
    assert "100% theoretical: 8 blocks of 8 warps per SM, limited by warps" in facts
    assert "XBLOCK=512, num_warps=8, num_stages=1" in facts
    assert "XBLOCK=512, num_warps=8, num_stages=1: 9.8 µs  <- chosen" in facts
    assert "XBLOCK=1024, num_warps=4, num_stages=1: 12.1 µs" in facts
    assert "4.00 MB per call above its inputs" in facts


async def test_kernel_detail_shows_a_cublas_kernels_grid_registers_and_shared_memory(make_app) -> None:
    m = result("eager", [kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", GEMM, ["aten::mm"])], 33_554_432)
    facts = await detail_facts(make_app, m, m.kernels[0])
    assert "grid 2 x 66 x 1 · block 384 x 1 x 1" in facts
    assert "168 per thread" in facts and "213 kB per block" in facts
    assert "19% theoretical: 1 block of 12 warps per SM, limited by registers" in facts
    assert "triton" not in facts, "a cuBLAS kernel has no Triton configuration"


async def test_on_the_cpu_the_detail_says_launch_configuration_is_a_gpu_kernels(make_app) -> None:
    m = result("eager", [kernel("aten::add", None, ["aten::add"])], 8_000_000, device="cpu")
    m.cpu_threads = 2
    facts = await detail_facts(make_app, m, m.kernels[0])
    assert "grid, block, registers and occupancy are a GPU kernel's; torch ran this one on 2 threads" in facts


def test_the_wide_kernel_table_gets_an_occupancy_column_for_gpu_kernels_only() -> None:
    labels, rows, _ = kernel_table(fused(), 160, with_ops=True, stale=False)
    assert [label.plain for label in labels][-2:] == ["occ", "ops"]
    assert rows[0][-2].plain == "100%"
    labels, _, _ = kernel_table(eager(), 160, with_ops=True, stale=False)
    assert "occ" not in [label.plain for label in labels], "no column of dashes where no kernel has a launch"
    labels, _, _ = kernel_table(fused(), 70, with_ops=False, stale=False)
    assert "occ" not in [label.plain for label in labels], "a narrow table keeps its columns"


def test_a_spilling_kernel_is_marked_in_the_table() -> None:
    m = fused()
    m.kernels[0].launch = LaunchInfo(occupancy=0.5, spills=12)
    _, rows, _ = kernel_table(m, 160, with_ops=True, stale=False)
    assert rows[0][-2].plain == "50%!"


def test_the_headline_says_each_modes_peak_memory() -> None:
    expected = "eager 3 kernels / 8N / 8.00 MB peak -> compiled 1 kernel / 4N / 4.00 MB peak"
    assert headline(eager(), fused()).startswith(expected)
    assert comparison_text(eager(), [fused()], 200).plain.startswith(expected), "the app's headline says the same"


def test_the_cli_tables_show_registers_occupancy_and_peak_memory() -> None:
    both = [eager(), fused()]
    kernels = rendered(kernels_table(N, both))
    assert "regs/occ" in kernels and "20/100%" in kernels
    assert "peak mem" in rendered(headline_table(both)) and "8.00 MB" in rendered(headline_table(both))
    assert "4.00 MB" in rendered(sweep_table(both))
    cpu = result("eager", [kernel("aten::add", None, ["aten::add"])], None, device="cpu")
    assert "regs/occ" not in rendered(kernels_table(N, [cpu])) and "peak" not in rendered(headline_table([cpu]))


def test_peak_memory_is_a_baseline_metric() -> None:
    assert parse_fail_on("peak_memory:5%") == ("peak_memory", 0.05)
    (worse,) = regressions(compare([fused()], [result("compiled", fused().kernels, 8_000_512)]), "peak_memory", 0.05)
    assert worse.text() == "peak_memory compiled N=1,000,000: 4.00 MB -> 8.00 MB, +100.0%: WORSE"


def test_exports_carry_the_launch_and_peak_memory() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv([eager(), fused()]))))
    assert tuple(rows[0]) == CSV_COLUMNS
    compiled = next(r for r in rows if r["mode"] == "compiled")
    assert (compiled["grid"], compiled["block"], compiled["registers_per_thread"]) == ("1954x1x1", "256x1x1", "20")
    assert (compiled["occupancy"], compiled["block_sizes"], compiled["spills"]) == ("1.0", "XBLOCK=512", "0")
    assert compiled["peak_memory_bytes"] == "4000256"
    assert next(r for r in rows if r["mode"] == "eager")["grid"] == ""
    (event,) = [e for e in chrome_trace([fused()])["traceEvents"] if e["ph"] == "X"]
    assert event["args"]["registers per thread"] == 20 and event["args"]["theoretical occupancy %"] == 100.0


def test_the_sweep_table_gets_a_peak_memory_column_where_results_have_one() -> None:
    def sweep(*results: Measurement) -> SimpleNamespace:
        found = {(m.size, m.mode): m for m in results}
        return SimpleNamespace(measurements=lambda: list(results), modes=("eager", "compiled"), at=found.get)

    columns, rows = sweep_rows(sweep(eager(), fused()), narrow=False, peak=None, stale=False)
    labels = [c.plain for c in columns]
    assert "mem" in labels and labels.index("mem") < labels.index("speedup")
    assert [row[labels.index("mem")].plain for row in rows] == ["8.00 MB", "4.00 MB"]
    recorded_before = [dataclasses.replace(m, peak_memory_bytes=None) for m in (eager(), fused())]
    columns, _ = sweep_rows(sweep(*recorded_before), narrow=False, peak=None, stale=False)
    assert "mem" not in [c.plain for c in columns], "a report recorded without peaks keeps its columns"


async def test_in_80x24_the_detail_keeps_room_for_the_source_below_a_long_list_of_facts(make_app) -> None:
    m = fused()
    m.compile = CompileInfo(1.0, 1, 0, generated_source={m.kernels[0].name: "@triton.jit\ndef kernel():\n    pass\n"})
    m.diagnostics = [f"note {i}" for i in range(8)]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="first results")
        app.push_screen(KernelDetail(m, m.kernels[0]))
        await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the kernel detail")
        await pilot.pause()
        facts = app.screen.query_one(".detail-facts-scroll")
        assert facts.virtual_size.height > facts.size.height, "the facts scroll"
        assert app.screen.query_one(".detail-source").size.height >= 3
