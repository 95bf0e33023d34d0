"""The wire format round-trips, recorded reports load, and derived figures are right."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from probes.link.protocol import (
    ChainErrorInfo,
    Measurement,
    MeasurementResult,
    ProfileReport,
    ProfileRequest,
    ProtocolError,
    RequestFailed,
    decode,
    encode,
)
from probes.link.summary import (
    comparisons,
    crossover,
    format_size,
    format_transfers,
    headline,
    input_dtypes,
    parse_size,
)

DATA = Path(__file__).parent / "data"


def test_messages_round_trip() -> None:
    for message in (
        ProfileRequest("r1", "(a + b).relu()", sizes=[100, 10**8], modes=["eager", "reduce-overhead"], device="cuda:1"),
        RequestFailed("r2", ChainErrorInfo("syntax", "'(' was never closed", 1, 13), size=100, mode="eager"),
    ):
        assert decode(encode(message)) == message


@pytest.mark.parametrize("line", ["not json", "{}", '{"type": "launch_missiles"}', "[1, 2]"])
def test_unknown_lines_are_protocol_errors(line: str) -> None:
    with pytest.raises(ProtocolError):
        decode(line)


def test_recorded_gpu_report_round_trips() -> None:
    report = ProfileReport.from_json((DATA / "h200_add_relu_sweep.json").read_text())
    assert report.device_label == "NVIDIA H200" and report.torch.startswith("2.11")
    again = ProfileReport.from_json(report.to_json())
    assert again.results == report.results
    message = MeasurementResult("r", report.results[0])
    assert decode(encode(message)) == message


def test_rows_sent_before_their_wall_time_cross_the_wire_without_one() -> None:
    """An early-rows result reads as such on the other side (and not as a wall time of 0)."""
    recorded = ProfileReport.from_json((DATA / "h200_add_relu_sweep.json").read_text()).results[1]
    early = MeasurementResult("r", dataclasses.replace(recorded, wall_time_us=None, wall_time_us_iqr=None))
    again = decode(encode(early))
    assert again == early and again.measurement.wall_pending and not recorded.wall_pending
    request = ProfileRequest("r", "(a + b).relu()", early_rows=True)
    assert decode(encode(request)).early_rows


def test_rows_go_out_before_their_wall_time_on_a_gpu_only() -> None:
    asked = ProfileRequest("r", "a + b", early_rows=True)
    assert asked.rows_before_wall_time("cuda:0") and asked.rows_before_wall_time("cuda")
    assert not asked.rows_before_wall_time("cpu")  # the app's frames would land in the wall-time reps
    assert not ProfileRequest("r", "a + b").rows_before_wall_time("cuda:0")


def test_sweep_story_from_the_h200_recording() -> None:
    results: list[Measurement] = ProfileReport.from_json((DATA / "h200_add_relu_sweep.json").read_text()).results
    pairs = comparisons(results)
    assert [p.size for p in pairs] == [10**2, 10**4, 10**6, 10**7, 10**8]
    big = pairs[-1]
    assert format_transfers(big.eager) == "5N" and format_transfers(big.compiled) == "3N"
    assert big.device_ratio is not None and big.device_ratio.value > 1.4
    assert headline(big.eager, big.compiled).startswith("eager 2 kernels / 5N -> compiled 1 kernel / 3N")
    assert crossover(pairs) in {p.size for p in pairs}


@pytest.mark.parametrize(
    ("text", "value"), [("1e6", 10**6), ("1_000_000", 10**6), ("1M", 10**6), ("10k", 10**4), ("8", 8)]
)
def test_sizes_parse_in_every_documented_form(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["0", "-5", "abc", "1e15", "1.5", ""])
def test_bad_sizes_are_refused_in_plain_words(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_size(text)
    assert "Traceback" not in str(info.value) and str(info.value)


def test_format_size_reads_like_the_article() -> None:
    assert [format_size(n) for n in (100, 10**6, 3 * 10**7, 8, 1234)] == ["1e2", "1e6", "3e7", "8", "1,234"]


def test_transfers_count_input_sized_arrays_only_where_the_inputs_are_n_element_arrays() -> None:
    """5N -> 3N for add+relu; a matmul's bytes stay bytes (its inputs are [N, K] and [K, K]: an
    'N' unit would be a meaningless big number)."""
    sweep = ProfileReport.from_json((DATA / "h200_add_relu_sweep.json").read_text()).results
    assert {format_transfers(m) for m in sweep if m.mode == "eager"} == {"5N"}
    assert {format_transfers(m) for m in sweep if m.mode == "compiled"} == {"3N"}
    matmul = ProfileReport.from_json((DATA / "h200_gelu_matmul_grad.json").read_text()).results
    eager = next(m for m in matmul if m.mode == "eager")
    assert format_transfers(eager).endswith("MB") and "N" not in format_transfers(eager)


def test_a_measurement_names_the_dtypes_its_inputs_had_not_only_the_runs() -> None:
    """The H200 training step declares bf16 inputs in an fp32 run: its titles read "fp32" over
    bf16 matmuls. Declared dtypes win; the run's dtype is for the inputs that declare none."""
    matmul = ProfileReport.from_json((DATA / "h200_gelu_matmul_grad.json").read_text()).results[0]
    assert matmul.dtype == "fp32" and input_dtypes(matmul) == "bf16"
    sweep = ProfileReport.from_json((DATA / "h200_add_relu_sweep.json").read_text()).results[0]
    assert input_dtypes(sweep) == sweep.dtype == "fp32"
    mixed = dataclasses.replace(matmul, chain="x: [N] fp16\nx + a", dtype="bf16")
    assert input_dtypes(mixed) == "fp16+bf16"
    broken = dataclasses.replace(matmul, chain="(a +", dtype="fp16")
    assert input_dtypes(broken) == "fp16"
