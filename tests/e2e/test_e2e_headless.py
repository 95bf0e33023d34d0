"""``kernel-tui profile`` as scripts use it: a closed pipe is no traceback, ``--from REPORT --json``
prints the report, a malformed report is one line and exit status 2, repeated modes measure once;
piped through ``cat`` a real measurement shows every kernel name whole with no trailing spaces, and
a sweep where one size fails exits 1 with that failure on one line."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from app_terminal import RECORDING, ROOT

CPU_PROFILE = ["profile", "a + b", "--sizes", "1e3", "--device", "cpu"]


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "KERNEL_TUI_STATE_DIR": str(tmp_path / "state"),
        "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"),
    }


def kernel_tui(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=ROOT,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_profile_into_head_prints_its_first_line_and_no_traceback(tmp_path: Path) -> None:
    command = f"{sys.executable} -m tui profile --from {RECORDING} | head -1"
    done = subprocess.run(
        ["sh", "-c", command], cwd=ROOT, env=environment(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert done.stdout.count("\n") == 1 and done.stdout.strip()
    assert done.stderr == ""


def test_a_pipe_closed_before_the_first_line_is_no_traceback(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before a line is written (``| true``, a quitted pager)
    with subprocess.Popen(
        [sys.executable, "-m", "tui", "profile", "--from", str(RECORDING)],
        cwd=ROOT,
        env=environment(tmp_path),
        stdout=writer,
        stderr=subprocess.PIPE,
        text=True,
    ) as program:
        os.close(writer)
        _, stderr = program.communicate(timeout=120)
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


def test_from_a_report_with_json_prints_the_report(tmp_path: Path) -> None:
    done = kernel_tui(tmp_path, "profile", "--from", str(RECORDING), "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    recorded = json.loads(RECORDING.read_text())
    assert printed["device_label"] == recorded["device_label"]

    def runs(report: dict) -> list[tuple]:
        return [
            (r["chain"], r["mode"], r["size"], r["kernels_per_call"], r["device_time_us"]) for r in report["results"]
        ]

    assert runs(printed) == runs(recorded)


def test_from_a_file_that_is_not_a_report_is_one_line_and_exit_2(tmp_path: Path) -> None:
    report = tmp_path / "empty.json"
    report.write_text("{}")
    done = kernel_tui(tmp_path, "profile", "--from", str(report))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "__init__" not in done.stderr, (
        done.stderr
    )
    assert str(report) in done.stderr or "report" in done.stderr


def test_a_mode_given_twice_is_measured_once(tmp_path: Path) -> None:
    done = kernel_tui(tmp_path, *CPU_PROFILE, "--modes", "eager,eager", "--json")
    assert done.returncode == 0, done.stderr
    assert [(r["mode"], r["size"]) for r in json.loads(done.stdout)["results"]] == [("eager", 1000)]


def piped(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kernel-tui ARGS | cat``, with the exit status of kernel-tui (pipefail)."""
    command = f"set -o pipefail; {shlex.quote(sys.executable)} -m tui {shlex.join(args)} | cat"
    return subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=environment(tmp_path), capture_output=True, text=True, timeout=600
    )


def test_a_measurement_through_cat_shows_every_kernel_name_whole(tmp_path: Path) -> None:
    done = piped(tmp_path, "profile", "(a + b).relu()", "--device", "cpu", "--sizes", "1e3", "--reps", "3")
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()
    assert {"aten::add", "aten::clamp_min", "cpp_fused_add_relu_0"} <= set(words), done.stdout
    assert [line for line in done.stdout.splitlines() if line != line.rstrip()] == []


def test_a_sweep_where_one_size_fails_exits_1_with_one_line(tmp_path: Path) -> None:
    done = piped(tmp_path, *CPU_PROFILE[:2], "--sizes", "1e3,1e11", "--device", "cpu", "--modes", "eager")
    assert done.returncode == 1
    assert "N = 1e3" in done.stdout
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert "N=1e11" in line and "GB" in line
