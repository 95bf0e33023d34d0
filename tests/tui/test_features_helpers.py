"""Pure helpers of spread, grad, roofline, pinned baseline and dynamic shapes, on real recordings
(the H200 ones have none of the new fields; the CPU ones under tests/tui/data have them)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from rich.cells import cell_len
from tui_helpers import recorded

from probes.link.protocol import Measurement
from probes.link.summary import Ratio, format_bytes, format_flop_rate, format_flops, ratio
from tui import workspace as ws
from tui.baseline_view import baseline_line, delta_cell, pin_deltas, pin_record, read_pin
from tui.widgets.cells import display_name, plural
from tui.widgets.headline import comparison_text, dynamic_line
from tui.widgets.op_chain_pane import compile_facts, op_groups
from tui.widgets.passes import backward_fusion, mentions, ordered_rows, pass_cells, pass_totals
from tui.widgets.roofline import chart_text
from tui.widgets.roofline_points import BOUNDS, Entry, Roof, Roofs, bound, entries, roofs
from tui.widgets.spread import cost_text, noise_line, plus_minus, ratio_text, time_text


def measurement(name: str, mode: str, size: int | None = None) -> Measurement:
    return next(m for m in recorded(name).results if m.mode == mode and size in (None, m.size))


def with_spread(m: Measurement, device: tuple[float, float], wall: tuple[float, float]) -> Measurement:
    return dataclasses.replace(m, device_time_us_iqr=list(device), wall_time_us_iqr=list(wall))


# -- spread and ratios ----------------------------------------------------------------------------


def test_a_ratio_whose_interval_straddles_one_is_no_clear_difference_never_a_speedup() -> None:
    unclear = Ratio(1.3, 0.9, 1.8)
    assert ratio_text(unclear, "wall").plain.startswith("wall no clear difference")
    assert "1.30x" not in ratio_text(unclear).plain and ratio_text(unclear, short=True).plain == "≈ same"
    assert ratio_text(Ratio(1.68, 1.6, 1.7)).plain == "1.68x"
    assert ratio_text(Ratio(1.68, 1.2, 2.1)).plain == "1.68x (1.20-2.10x)"  # wide: the interval is said


def test_a_host_bound_wall_ratio_is_its_interval_labelled_never_a_bare_verdict() -> None:
    found = Ratio(0.30, 0.27, 0.34, host_bound=True)
    assert ratio_text(found, "wall").plain == "wall host-bound 0.27-0.34x"
    assert ratio_text(found, short=True).plain == "0.27-0.34x hb"
    assert "red" not in str(ratio_text(found).style) and "0.30x" not in ratio_text(found).plain


def test_times_carry_their_spread_and_wide_spreads_are_marked() -> None:
    m = dataclasses.replace(measurement("modes", "eager"), device_time_us_iqr=None, wall_time_us_iqr=None)
    assert time_text(m, "device").plain == time_text(m, "device", wide=False).plain  # a result without spread
    d = m.device_time_us
    tight = with_spread(m, (d * 0.99, d * 1.01), (m.wall_time_us,) * 2)
    assert plus_minus(d, tight.device_time_us_iqr) == "±1%" and "~" not in time_text(tight, "device").plain
    wide = with_spread(m, (d * 0.8, d * 1.2), (m.wall_time_us,) * 2)
    assert time_text(wide, "device").plain.endswith("±20%~")


def test_noise_is_said_in_plain_words_once_per_reason() -> None:
    e, c = measurement("cpu_grad", "eager"), measurement("cpu_grad", "compiled")
    assert e.noisy and c.noisy  # recorded on the shared 2-core machine
    line = noise_line([e, c]).plain
    assert line.startswith("~ noisy (eager, compiled): machine busy")
    assert noise_line([dataclasses.replace(measurement("modes", "eager"), noisy=False, noise_reasons=[])]) is None


def test_dynamic_against_static_says_which_is_slower_or_no_clear_difference() -> None:
    static, dynamic = measurement("cpu_dynamic", "compiled", 10**6), measurement("cpu_dynamic", "dynamic", 10**6)
    found = ratio(dynamic, static, "device")
    words = cost_text(static, dynamic, "device").plain
    expected = {"faster": "slower", "slower": "faster", "unclear": "no clear difference"}[found.verdict]
    if found.unclear_reason is not None:  # a recording from a busy machine: no verdict at all
        expected = f"unclear: {found.unclear_reason}"
    assert expected in words
    line = dynamic_line(static, dynamic).plain
    assert line.startswith("dynamic vs compiled: device ") and " vs " in line
    quiet = {"device_time_us_iqr": None, "noise_reasons": [], "noisy": False}
    exact = dataclasses.replace(dynamic, device_time_us=static.device_time_us * 1.24, **quiet)
    assert cost_text(dataclasses.replace(static, **quiet), exact, "device").plain == "1.24x slower"


# -- grad -----------------------------------------------------------------------------------------


def test_pass_totals_split_counts_bytes_and_times() -> None:
    e = measurement("cpu_grad", "eager")
    fwd, bwd = pass_totals(e)
    assert fwd.kernels + bwd.kernels == e.kernels_per_call
    assert (fwd.time_us, bwd.time_us) == (e.forward_time_us, e.backward_time_us)
    assert fwd.bytes == sum(r.bytes for r in e.kernels if r.pass_ == "forward")
    rows = ordered_rows(e)
    passes = [r.pass_ for r in rows if r.kind == "kernel"]
    assert passes == sorted(passes, key=("forward", "backward").index)
    assert pass_cells(e)[0] == f"{fwd.kernels:g}+{bwd.kernels:g}"
    assert pass_totals(measurement("modes", "eager")) == []  # no grad recorded: nothing, no crash


def test_backward_ops_and_the_compiled_kernel_that_fused_them() -> None:
    e, c = measurement("cpu_grad", "eager"), measurement("cpu_grad", "compiled")
    forward, backward = op_groups(e, c)
    assert [op.op for op in forward.ops] == ["aten::add", "aten::relu", "aten::sum"]
    assert "aten::threshold_backward" in [op.op for op in backward.ops]
    assert not any(op.op.startswith("aten::_record_function") for op in forward.ops + backward.ops)
    assert mentions("graph_0_cpp_fused_expand_threshold_backward_0", "aten::threshold_backward")
    assert not mentions("cpp_fused_add_relu_0", "aten::threshold_backward")
    text = backward_fusion(c, backward.ops).plain
    assert "bwd cpp_fused_expand_threshold_backward_0 fused threshold_backward" in text
    assert "forward" in comparison_text(e, [c], 160).plain and "backward" in comparison_text(e, [c], 160).plain


@pytest.mark.parametrize("name", ["cpu_grad", "cpu_matmul_grad"])
def test_with_grad_each_pass_ops_map_to_kernels_of_that_pass_only(name: str) -> None:
    """A training step's ops in two groups, forward then backward, each op tied to the eager and
    compiled kernel rows of its own pass: a forward kernel named after what backward needs
    (``cpp_fused_add_relu_sum_threshold_backward_0``) is no backward op's, and of the three
    ``aten::mm`` of a matmul's step the first is the forward's."""
    e, c = measurement(name, "eager"), measurement(name, "compiled")
    groups = op_groups(e, c)
    assert [g.pass_ for g in groups] == ["forward", "backward"]
    for group in groups:
        assert group.ops
        for ran in (e, c):
            mine = {display_name(r) for r in ran.kernels if r.pass_ == group.pass_}
            names = group.eager if ran is e else [[n] for n in group.compiled if n]
            assert names and all(set(n) <= mine for n in names), (group.pass_, ran.mode, names, mine)
        assert group.compiled_kernels == len({r.name for r in c.kernels if r.pass_ == group.pass_})
    mm = [g.pass_ for g in groups for op in g.ops if op.op == "aten::mm"]
    assert mm in ([], ["forward", "backward", "backward"])
    facts = [f.plain for f in compile_facts(c, groups)]
    fwd, bwd = groups
    assert f"forward {plural(len(fwd.ops), 'op')} → {plural(fwd.compiled_kernels, 'kernel')}" in facts
    assert f"backward {plural(len(bwd.ops), 'op')} → {plural(bwd.compiled_kernels, 'kernel')}" in facts


def test_without_grad_the_op_chain_is_one_unlabelled_group() -> None:
    e, c = measurement("modes", "eager"), measurement("modes", "compiled")
    (group,) = op_groups(e, c)
    assert group.pass_ is None and group.compiled == ["triton_poi_fused_add_relu_0"] * 2
    assert [f.plain for f in compile_facts(c, [group])][0] == "2 ops → 1 kernel"


# -- roofline -------------------------------------------------------------------------------------


def test_only_kernels_with_known_flops_and_bytes_are_placed() -> None:
    report = recorded("cpu_matmul_grad")
    found = entries(report.results)
    placed = [e for e in found if e.placed]
    assert placed and all(e.row.flops and e.row.bytes for e in placed)
    assert all(e.why_not == "FLOPs unknown" for e in found if e.row.flops is None)
    assert any(e.why_not == "bytes unknown" for e in found)  # compiled mm: FLOPs but no bytes
    r = roofs(report.results, report.peak_gbps, report.compute_peaks_tflops)
    assert r.bandwidth_gbps == report.peak_gbps and r.compute[0].tflops == report.compute_peaks_tflops["fp32"]
    assert r.attainable(r.ridge / 10) == pytest.approx(r.ridge / 10 * r.bandwidth_gbps / 1000)
    assert r.attainable(r.ridge * 10) == pytest.approx(r.peak_tflops)
    unknown = [
        dataclasses.replace(m, kernels=[dataclasses.replace(k, flops=None) for k in m.kernels])
        for m in recorded("matmul_gelu").results
    ]  # a report from before FLOPs were counted
    assert not any(e.placed for e in entries(unknown))  # nothing placed, nothing guessed


@pytest.mark.parametrize(
    ("flops", "text"),
    [
        (0, "0 FLOP"),
        (999, "999 FLOP"),
        (999.6, "1 kFLOP"),
        (999_999, "1 MFLOP"),  # rounded into the next prefix, never "1e+03 kFLOP"
        (1_000_000, "1 MFLOP"),
        (131_072_000, "131 MFLOP"),
        (1_073_741_824, "1.07 GFLOP"),
        (137e9, "137 GFLOP"),
        (999.7e9, "1 TFLOP"),
        (3.4e12, "3.4 TFLOP"),
    ],
)
def test_flops_carry_the_si_prefix_their_rounded_value_needs(flops: float, text: str) -> None:
    assert format_flops(flops) == text


def test_rates_and_bytes_carry_the_si_prefix_their_value_needs() -> None:
    rates = {0.014: "14 GFLOP/s", 0.156: "156 GFLOP/s", 0.9999: "1 TFLOP/s", 789.0: "789 TFLOP/s", 2e-6: "2 MFLOP/s"}
    assert {t: format_flop_rate(t) for t in rates} == rates
    sizes = {4: "4 B", 400_000: "400 kB", 999_999: "1.00 MB", 12_345_678: "12.3 MB", 4e9: "4.00 GB"}
    assert {n: format_bytes(n) for n in sizes} == sizes


def placed_at(intensity: float | None, tflops: float | None, **row: object) -> Entry:
    """A kernel of a real recording with the figures a case needs."""
    m = measurement("cpu_matmul_grad", "eager")
    kernel = dataclasses.replace(m.kernels[0], launches_per_call=1, **row)
    why_not = None if intensity and tflops and kernel.flops else "FLOPs unknown"
    return Entry(m, kernel, intensity, tflops, why_not)


ROOFS = Roofs(1000.0, (Roof("fp32 peak", 100.0),))
"""1 TB/s and 100 TFLOP/s: the ridge at 100 FLOP/byte."""


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (placed_at(10, 8.0, time_per_call_us=50.0), "memory"),  # left of the ridge, 80% of its roof
        (placed_at(1000, 90.0, time_per_call_us=50.0), "compute"),  # right of the ridge
        (placed_at(10, 0.5, time_per_call_us=50.0), "latency"),  # 5% of its roof: both rates low
        (placed_at(1000, 5.0, time_per_call_us=50.0), "latency"),
        (placed_at(None, None, flops=None, gbps=600.0, time_per_call_us=50.0), "memory"),  # 60% of peak bytes
        (placed_at(None, None, flops=None, gbps=100.0, time_per_call_us=50.0), ""),  # could be compute
        (placed_at(None, None, flops=None, gbps=None, time_per_call_us=2.0), "latency"),  # the launch floor
        (placed_at(None, None, flops=None, gbps=900.0, time_per_call_us=2.0), "memory"),  # short but at peak
    ],
)
def test_each_kernel_is_memory_compute_or_latency_bound_by_the_documented_rule(entry: Entry, expected: str) -> None:
    assert bound(entry, ROOFS) == expected
    assert expected in (*BOUNDS, "")


def test_without_a_compute_peak_no_kernel_is_called_compute_bound() -> None:
    no_peak = Roofs(1000.0)
    assert bound(placed_at(1000, 500.0, gbps=100.0, time_per_call_us=50.0), no_peak) == ""
    assert bound(placed_at(10, 0.5, time_per_call_us=50.0), no_peak) == "latency"  # 5% of the bandwidth roof


PLOT_GLYPHS = re.compile(r"[\u2800-\u28ff ●◆○◇]*")
"""What the plot area may hold: braille dots of the roofs, the kernels' markers and blanks."""


@pytest.mark.parametrize("name", ["cpu_matmul_grad", "cpu_matmul"])
def test_the_roofline_draws_nothing_over_its_plot_and_nothing_past_its_edge(name: str) -> None:
    report = recorded(name)
    found = entries(report.results)
    r = roofs(report.results, report.peak_gbps, report.compute_peaks_tflops)
    for width, height in [(30, 8), (46, 10), (74, 10), (100, 14), (152, 31), (200, 40)]:
        for selected in (None, 0, 1):
            lines = chart_text(found, r, selected, width, height).plain.split("\n")
            assert len(lines) == height and all(cell_len(line) <= width for line in lines), (width, lines)
            margin = lines[-2].index("└")
            for line in lines[1:-2]:
                axis, plot = line[: margin + 1], line[margin + 1 :]
                assert axis[-1] in "┤│" and PLOT_GLYPHS.fullmatch(plot), (width, line)
            assert set(lines[-2][margin:]) <= set("└┬─"), lines[-2]


# -- pinned baseline ------------------------------------------------------------------------------


def test_a_pin_round_trips_without_generated_source() -> None:
    c = measurement("modes", "compiled")
    record = pin_record([c])
    json.dumps(record)
    back = read_pin(record)[0]
    assert back.compile.generated_source == {} and c.compile.generated_source
    assert dataclasses.replace(back, compile=c.compile) == c
    with pytest.raises(ValueError):
        read_pin([{"chain": 3}])


def test_deltas_against_the_pin_are_noise_aware_and_only_between_alike_results() -> None:
    e = measurement("modes", "eager")
    same = baseline_line([e], [e]).plain
    assert "eager: device no change" in same and "kernels" not in same
    fused = dataclasses.replace(e, kernels_per_call=1.0, device_time_us=e.device_time_us * 0.6)
    line = baseline_line([e], [fused]).plain
    assert "kernels 2 -> 1" in line and "device -40% better" in line
    slower = dataclasses.replace(e, device_time_us=e.device_time_us * 1.5)
    assert delta_cell(pin_deltas([e], [slower]), e.size, "eager").plain == "+50%"
    noisy = with_spread(slower, (e.device_time_us * 0.5, e.device_time_us * 2.5), (e.wall_time_us,) * 2)
    assert delta_cell(pin_deltas([e], [noisy]), e.size, "eager").plain == "≈"
    bf16 = dataclasses.replace(e, dtype="bf16")
    assert pin_deltas([e], [bf16]) == [] and "nothing measured alike" in baseline_line([e], [bf16]).plain


def test_pins_and_grad_persist_in_the_workspace_and_follow_renames() -> None:
    w = ws.Workspace.default()
    w.settings = dataclasses.replace(w.settings, grad=True)
    w.pins[w.chain.name] = pin_record([measurement("modes", "eager")])
    w.rename("fused")
    assert list(w.pins) == ["fused"]
    back, fixed = ws.Workspace.from_data(json.loads(w.to_json()))
    assert not fixed and back.settings.grad and read_pin(back.pins["fused"])[0].mode == "eager"
    back.delete()
    assert back.pins == {}
    junk, _ = ws.Workspace.from_data({"chains": [{"name": "x", "text": "a"}], "pins": {"x": "no", "y": []}})
    assert junk.pins == {}
    mixed, fixed = ws.Workspace.from_data({"settings": {"grad": "yes", "modes": "static+dynamic"}})
    assert not mixed.settings.grad and any("grad" in problem for problem in fixed)
    assert mixed.settings.modes == ("compiled", "dynamic")
    mixed.compile_mode = "dynamic"
    assert mixed.toggled(mixed.toggle).modes == ("compiled", "dynamic")


def test_a_chain_is_named_once_after_its_ops_and_then_only_by_the_user() -> None:
    w = ws.Workspace.default()
    w.add("")
    assert w.chain.name == "chain" and not w.chain.named
    assert not w.name_once()  # nothing typed: the placeholder stays
    w.chain.text = "(a + b"
    assert not w.name_once() and w.chain.name == "chain"  # not a chain yet
    w.chain.text = "((a + b) * c - a / b).relu().sum()"
    w.pins[w.chain.name] = pin_record([measurement("modes", "eager")])
    assert w.name_once() and w.chain.name == "add_mul_div_sum" and list(w.pins) == ["add_mul_div_sum"]
    for text in ("(a * b).sin().sum()", "a.relu()", "a +"):  # edits never rename it
        w.chain.text = text
        assert not w.name_once() and w.chain.name == "add_mul_div_sum", text
    back, fixed = ws.Workspace.from_data(json.loads(w.to_json()))
    assert not fixed and back.chain.named and back.chain.name == "add_mul_div_sum"
    w.rename("mine")
    assert w.chain.name == "mine" and not w.name_once()
    seeds = ws.Workspace.default()  # a seed keeps its name through an edit
    seeds.chain.text = "(a * b).sin().sum()"
    assert not seeds.name_once() and seeds.chain.name == "add_relu"
    assert seeds.chains[seeds.select_text("a - b")].name == "sub"  # from the command line: named at once
    assert seeds.chains[seeds.select_text("(a + b).relu()")].name == "add_relu_2"  # the seed's text changed
    unnamed = ws.Workspace.default()
    unnamed.add("")
    unnamed.chain.text = "a.exp()"  # quit before leaving the editor: named when next opened
    older = {
        "chains": [
            {"name": "chain_2", "text": "a.exp()"},
            {"name": "cli", "text": "a * b"},
            {"name": "mine", "text": "a - b"},
            {"name": "add_relu", "text": "a.cos()", "named": False},  # named after its text as it was edited
        ],
        "pins": {"chain_2": pin_record([measurement("modes", "eager")])},
    }
    opened, fixed = ws.Workspace.from_data(older)
    names = [c.name for c in opened.chains]
    assert not fixed and names == ["exp", "mul", "mine", "add_relu"] and list(opened.pins) == ["exp"]
    reopened, _ = ws.Workspace.from_data(json.loads(unnamed.to_json()))
    assert reopened.chain.name == "exp" and reopened.chain.named


def test_a_ratio_far_below_one_keeps_its_digits() -> None:
    """A compiled call 300x slower than eager (a busy CPU, a CUDA graph at a tiny size) reads
    0.0033x, not 0.00x; the usual ratios keep two decimals."""
    slower = Ratio(1 / 300, 1 / 310, 1 / 290)
    assert ratio_text(slower).plain == "0.0033x"
    assert slower.text() == "0.0033x"
    assert ratio_text(Ratio(0.3, 0.29, 0.31)).plain == "0.30x"
    assert ratio_text(Ratio(0.11, 0.0998, 0.12)).plain == "0.11x (0.10-0.12x)"  # not 0.1: one format on a line
    assert ratio_text(Ratio(0.094, 0.093, 0.095)).plain == "0.094x"
    assert ratio_text(Ratio(12.345, 12.3, 12.4)).plain == "12.35x"
