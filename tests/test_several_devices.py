"""`kernel-tui profile --device cpu,b:cpu --host b=COMMAND`: several workers side by side.

Two local workers stand in for two boxes: the second is reached through ``--host``, as
``ssh BOX kernel-tui worker`` would reach it, and a host whose COMMAND exits 255 with ssh's
message stands in for a box that cannot be reached.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from pathlib import Path

import pytest

from probes.cli import main
from probes.link.protocol import ProfileReport, ProfileRequest
from probes.link.settings import DeviceEntry, SettingError, check_device, check_hosts, parse_device_entries
from probes.link.spread import share_out, share_requests

CHAIN = "(a + b).relu()"
SECOND_BOX = f"b={shlex.join([sys.executable, '-P', '-m', 'probes.engine.worker'])}"
DEAD_BOX = "dead=sh -c 'echo ssh: connect to host dead port 22: Connection refused >&2; exit 255'"
ONE_SIZE = ["--sizes", "1e3", "--modes", "eager"]


def test_a_device_list_reads_as_entries_each_on_its_host() -> None:
    assert parse_device_entries("cpu") == [DeviceEntry(None, "cpu")]
    assert parse_device_entries("cuda:0, cuda:1") == [DeviceEntry(None, "cuda:0"), DeviceEntry(None, "cuda:1")]
    assert parse_device_entries("cpu,gpu2:CUDA:1") == [DeviceEntry(None, "cpu"), DeviceEntry("gpu2", "cuda:1")]
    assert [str(entry) for entry in parse_device_entries("cpu,b:cpu")] == ["cpu", "b:cpu"]


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("cpu,cpu", "named twice"),
        ("cpu,b:tpu", "unknown device 'tpu'"),
        (",".join(["cpu"] * 9), "too many"),
        ("b c:cpu", "not a host name"),
    ],
)
def test_a_bad_device_list_is_refused_in_one_line(text: str, refusal: str) -> None:
    with pytest.raises(SettingError, match=refusal) as refused:
        parse_device_entries(text)
    assert "\n" not in str(refused.value)


def test_a_one_device_check_refuses_a_list_saying_where_lists_work() -> None:
    for text in ("cpu,cuda", "b:cpu"):
        with pytest.raises(SettingError, match="for --device of kernel-tui and kernel-tui profile"):
            check_device(text)
    assert check_device("cuda:1") == "cuda:1"


def test_hosts_are_name_equals_command_each_defined_once() -> None:
    entries = parse_device_entries("cpu,b:cpu")
    assert check_hosts(entries, ["b=ssh b kernel-tui worker"]) == {"b": "ssh b kernel-tui worker"}
    for hosts, refusal in (
        ([], "unknown host 'b'"),
        (["b"], "not NAME=COMMAND"),
        (["b="], "empty command"),
        (["b=ssh 'b"], "quotation"),
        (["b=x", "b=y"], "defined twice"),
    ):
        with pytest.raises(SettingError, match=refusal):
            check_hosts(entries, hosts)


def test_an_unknown_host_is_one_usage_line(capfd: pytest.CaptureFixture[str]) -> None:
    assert main([CHAIN, *ONE_SIZE, "--device", "cpu,x:cpu"]) == 2
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err == "kernel-tui profile: unknown host 'x': define it with --host x=COMMAND\n"


def test_a_baseline_with_several_devices_is_refused_in_one_line(capfd: pytest.CaptureFixture[str]) -> None:
    code = main([CHAIN, *ONE_SIZE, "--device", "cpu,b:cpu", "--host", SECOND_BOX, "--baseline", "x.json"])
    assert code == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "--baseline" in err and "one device" in err


@pytest.mark.slow
def test_two_boxes_give_two_named_result_sets_and_a_side_by_side_summary(capfd: pytest.CaptureFixture[str]) -> None:
    code = main([CHAIN, *ONE_SIZE, "--device", "cpu,b:cpu", "--host", SECOND_BOX])
    out, err = capfd.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("cpu: CPU"))
    second = next(i for i, line in enumerate(lines) if line.startswith("b:cpu: CPU"))
    summary = lines.index("side by side")
    assert first < second < summary
    for part in (lines[first:second], lines[second:summary]):
        assert any("aten::add" in line for line in part)
    header = lines[summary + 2]
    assert "cpu device" in header and "b:cpu device" in header and "x cpu" in header
    row = lines[summary + 4]
    assert row.split()[:2] == ["1e3", "eager"] and "µs" in row


@pytest.mark.slow
def test_two_boxes_in_json_give_one_document_of_two_tagged_reports(capfd: pytest.CaptureFixture[str]) -> None:
    code = main([CHAIN, *ONE_SIZE, "--device", "cpu,b:cpu", "--host", SECOND_BOX, "--json"])
    out, err = capfd.readouterr()
    assert code == 0, err
    reports = json.loads(out)["reports"]
    assert [(r["host"], r["device"]) for r in reports] == [(None, "cpu"), ("b", "cpu")]
    for tagged in reports:
        report = tagged["report"]
        assert report["device"] == "cpu" and report["device_label"].startswith("CPU")
        assert [(m["size"], m["mode"]) for m in report["results"]] == [(1000, "eager")]
    assert reports[1]["report"]["host"] == "b"
    for (host, _), tagged in zip([(None, "cpu"), ("b", "cpu")], reports, strict=True):
        (identity,) = tagged["report"]["devices"]
        assert (identity["host"], identity["device"]) == (host, "cpu")
        assert identity["label"].startswith("CPU") and identity["torch"] and identity["driver"] is None


@pytest.mark.slow
def test_a_dead_host_is_one_line_naming_it_and_the_other_results_are_kept(capfd: pytest.CaptureFixture[str]) -> None:
    code = main([CHAIN, *ONE_SIZE, "--device", "cpu,dead:cpu", "--host", DEAD_BOX])
    out, err = capfd.readouterr()
    assert code == 1
    said = [line for line in err.splitlines() if "ctrl+c to stop" not in line]  # a wait for a busy CPU, if any
    refused = "ssh: connect to host dead port 22: Connection refused"
    assert said == [f"dead:cpu: the connection failed (ssh exit 255): {refused}"]
    assert out.startswith("cpu: CPU") and "aten::add" in out
    assert "dead:cpu: not reached" in out
    assert "side by side" not in out


def test_a_spread_sweep_shares_its_compiles_evenly_and_each_pair_once() -> None:
    pairs = [(size, mode) for size in (1000, 10_000, 100_000) for mode in ("eager", "compiled")]
    shares = share_out(pairs, 2)
    assert sorted(pair for share in shares for pair in share) == sorted(pairs)
    compiles = [sum(mode == "compiled" for _, mode in share) for share in shares]
    assert sorted(compiles) == [1, 2]
    for share in shares:  # each device measures its pairs in the sweep's order
        assert share == sorted(share, key=pairs.index)


def test_a_share_goes_out_as_one_request_per_set_of_modes() -> None:
    request = ProfileRequest("cli", CHAIN, sizes=[1000, 10_000, 100_000], modes=["eager", "compiled"])
    share = [(1000, "eager"), (1000, "compiled"), (10_000, "compiled"), (100_000, "compiled")]
    asked = [(r.sizes, r.modes) for r in share_requests(request, share, "1")]
    assert asked == [([1000], ["eager", "compiled"]), ([10_000, 100_000], ["compiled"])]
    assert len({r.id for r in share_requests(request, share, "1")}) == 2


@pytest.mark.parametrize(
    ("devices", "refusal"),
    [
        ("cpu,b:cuda", "cpu and cuda are mixed"),
        ("cpu", "several entries"),
    ],
)
def test_spread_over_devices_of_mixed_kinds_is_one_usage_line(
    capfd: pytest.CaptureFixture[str], devices: str, refusal: str
) -> None:
    assert main([CHAIN, *ONE_SIZE, "--device", devices, "--host", SECOND_BOX, "--spread"]) == 2
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("kernel-tui profile: --spread: ") and captured.err.count("\n") == 1
    assert refusal in captured.err


TWO_SIZES = ["--sizes", "1e3,1e4", "--modes", "eager"]


@pytest.mark.slow
def test_a_spread_sweep_prints_one_result_set_each_row_naming_its_device(capfd: pytest.CaptureFixture[str]) -> None:
    code = main([CHAIN, *TWO_SIZES, "--device", "cpu,b:cpu", "--host", SECOND_BOX, "--spread"])
    out, err = capfd.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("spread over cpu (CPU") and "b:cpu (CPU" in lines[0]
    assert [line.split("(")[0].strip() for line in lines if line.startswith("N = ")] == ["N = 1e3", "N = 1e4"]
    sweep = lines.index("sweep")
    assert lines[sweep + 2].split()[:3] == ["N", "mode", "on"]
    rows = [line.split()[:3] for line in lines[sweep + 4 : sweep + 6]]
    assert [row[:2] for row in rows] == [["1e3", "eager"], ["1e4", "eager"]]
    assert sorted(row[2] for row in rows) == ["b:cpu", "cpu"]  # one pair each: shared, not repeated
    assert "side by side" not in out


@pytest.mark.slow
def test_a_spread_sweep_in_json_is_one_report_each_measurement_naming_its_entry(
    capfd: pytest.CaptureFixture[str],
) -> None:
    code = main([CHAIN, *TWO_SIZES, "--device", "cpu,b:cpu", "--host", SECOND_BOX, "--spread", "--json"])
    out, err = capfd.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["device"] == "cpu,b:cpu"
    results = report["results"]
    assert [(m["size"], m["mode"]) for m in results] == [(1000, "eager"), (10_000, "eager")]
    assert sorted((m["host"], m["device"]) for m in results if m["host"]) == [("b", "cpu")]
    assert sum(m["host"] is None for m in results) == 1
    assert [(d["host"], d["device"]) for d in report["devices"]] == [(None, "cpu"), ("b", "cpu")]


@pytest.mark.slow
def test_a_dead_host_in_a_spread_names_what_it_left_and_the_rest_is_kept(capfd: pytest.CaptureFixture[str]) -> None:
    code = main([CHAIN, *TWO_SIZES, "--device", "cpu,dead:cpu", "--host", DEAD_BOX, "--spread"])
    out, err = capfd.readouterr()
    assert code == 1
    said = [line for line in err.splitlines() if "ctrl+c to stop" not in line]
    assert said[0].startswith("dead:cpu: the connection failed (ssh exit 255)")
    assert said[1:] == ["dead:cpu: not measured: eager N=1e3"]
    assert "spread over cpu (CPU" in out and "dead:cpu (not reached)" in out
    assert "N = 1e4" in out and "N = 1e3" not in out
    assert out.splitlines()[-1] == "1 of 2 sizes measured, 1e3 missing"


def test_a_saved_spread_report_prints_again_with_the_device_of_each_row(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    report = ProfileReport.from_json((Path(__file__).parent / "data" / "h200_add_relu_sweep.json").read_text())
    report.results = [dataclasses.replace(m, host="b" if i % 2 else None) for i, m in enumerate(report.results)]
    saved = tmp_path / "spread.json"
    saved.write_text(report.to_json())
    assert main(["--from", str(saved)]) == 0
    lines = capfd.readouterr().out.splitlines()
    sweep = lines.index("sweep")
    assert lines[sweep + 2].split()[:3] == ["N", "mode", "on"]
    device = report.results[0].device
    assert [line.split()[2] for line in lines[sweep + 4 : sweep + 6]] == [device, f"b:{device}"]
