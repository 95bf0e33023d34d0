"""`kernel-tui profile`: the JSON document's shape, the tables, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from probes.cli import main

JSON_KEYS = {
    "mode", "size", "kernels_per_call", "bytes_per_call", "device_time_us", "wall_time_us",
    "compile_time_s", "ran_compiled", "kernels",
}
KERNEL_KEYS = {"name", "short_name", "launches_per_call", "device_time_us", "bytes", "gbps", "ops"}


@pytest.mark.slow
def test_json_document_has_the_documented_shape(capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["(a + b).relu()", "--device", "cpu", "--sizes", "1e2,1_000", "--modes", "eager,compiled", "--reps", "3", "--json"])
    out = capfd.readouterr().out
    assert code == 0
    doc = json.loads(out)
    assert doc["device"] == "cpu" and doc["torch"]
    assert len(doc["results"]) == 4
    for result in doc["results"]:
        assert JSON_KEYS <= result.keys()
        assert isinstance(result["ran_compiled"], bool)
        for kernel in result["kernels"]:
            assert KERNEL_KEYS <= kernel.keys()
            assert isinstance(kernel["ops"], list)
    sizes = sorted({r["size"] for r in doc["results"]})
    assert sizes == [100, 1000]
    compiled = [r for r in doc["results"] if r["mode"] == "compiled"]
    assert all(r["ran_compiled"] and r["compile_time_s"] > 0 for r in compiled)


def test_tables_show_kernels_headline_and_sweep(capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["(a + b).relu()", "--device", "cpu", "--sizes", "1e3,1e4", "--modes", "eager", "--reps", "3"])
    out = capfd.readouterr().out
    assert code == 0
    assert "aten::add" in out and "aten::clamp_min" in out
    assert "eager 2 kernels / 5N" in out
    assert "sweep" in out and "1e3" in out and "1e4" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["(a + b).relu("], "'(' was never closed"),
        (["a + d"], "unknown name 'd'"),
        (["__import__('os')"], "not allowed"),
        (["a", "--sizes", "1x"], "is not a size"),
        (["a", "--sizes", "-5"], "positive"),
        (["a", "--modes", "turbo"], "unknown mode 'turbo'"),
        (["a", "--device", "tpu"], "device"),
    ],
)
def test_bad_input_exits_non_zero_with_one_line(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from probes.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr


def test_saved_report_prints_the_same_tables(capfd: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    report = Path(__file__).parent / "data" / "h200_add_relu_sweep.json"
    assert main(["--from", str(report)]) == 0
    out = capfd.readouterr().out
    assert "NVIDIA H200" in out and "triton_poi_fused_add_relu_0" in out
    assert "eager 2 kernels / 5N -> compiled 1 kernel / 3N" in out
    from probes.protocol import ProfileReport
    from probes.summary import comparisons, crossover, format_size

    where = crossover(comparisons(ProfileReport.from_json(report.read_text()).results))
    assert where is not None and f"compiled is faster per call from N = {format_size(where)} up" in out


def test_missing_chain_or_report_is_a_usage_error(capfd: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["--from", "/nonexistent.json"]) == 2
    err = capfd.readouterr().err
    assert "give an op chain" in err and "cannot read" in err
