"""The baseline gate across processes: a report is one process's readings, and a host's time per
call differs from one process to the next by more than that process's spread. The same chain
against its own report from another process never reads WORSE; a chain 30% slower still does."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from probes.link.baseline import compare, regressions
from probes.link.protocol import Measurement, ProfileReport
from probes.link.summary import BUSY_REASON, HOST_BOUND_SHARE

DATA = Path(__file__).parent / "data"
SWEEP = DATA / "h200_add_relu_sweep.json"
NEEDS_CUDA = pytest.mark.skipif(
    not (Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists()), reason="needs CUDA"
)


def recorded(path: Path = SWEEP) -> list[Measurement]:
    return ProfileReport.from_json(path.read_text()).results


def slower(m: Measurement, factor: float, *, wall_only: bool = False) -> Measurement:
    """``m`` with its times (and their spreads) ``factor`` times longer."""

    def scaled(iqr: list[float] | None) -> list[float] | None:
        return [x * factor for x in iqr] if iqr else None

    wall = m.wall_time_us * factor if m.wall_time_us is not None else None
    if wall_only:
        return dataclasses.replace(m, wall_time_us=wall, wall_time_us_iqr=scaled(m.wall_time_us_iqr))
    return dataclasses.replace(
        m,
        wall_time_us=wall,
        wall_time_us_iqr=scaled(m.wall_time_us_iqr),
        device_time_us=m.device_time_us * factor,
        device_time_us_iqr=scaled(m.device_time_us_iqr),
    )


def test_a_host_bound_wall_time_is_not_judged_whatever_it_moved() -> None:
    """The H200's compiled call at N=100 (kernels 1-2% of it) read 38 µs in one process and 71 µs in
    another: not a regression the gate can tell from the host."""
    compiled = next(m for m in recorded() if (m.mode, m.size) == ("compiled", 100))
    (delta,) = [d for d in compare([compiled], [slower(compiled, 1.85, wall_only=True)]) if d.metric == "wall_time"]
    assert delta.verdict == "unclear" and regressions([delta], "wall_time", 0.10) == []
    assert "+85.0%: not judged (host-bound: kernels are 1% of the call" in delta.text()
    assert "WORSE" not in delta.text()


def test_a_chain_30_percent_slower_is_caught_by_device_time_and_by_wall_time_where_kernels_dominate() -> None:
    base = recorded()
    deltas = compare(base, [slower(m, 1.3) for m in base])
    device = regressions(deltas, "device_time", 0.05)
    assert {(d.mode, d.size) for d in device} == {(m.mode, m.size) for m in base}
    kernels_dominate = {(m.mode, m.size) for m in base if m.device_time_us >= HOST_BOUND_SHARE * m.wall_time_us}
    assert {("eager", 10**8), ("compiled", 10**8)} <= kernels_dominate
    assert {(d.mode, d.size) for d in regressions(deltas, "wall_time", 0.10)} == kernels_dominate


def test_times_measured_on_a_busy_machine_are_not_judged() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("eager", 10**8))
    busy = dataclasses.replace(m, noisy=True, noise_reasons=[f"{BUSY_REASON}: 2.0 of 2 cores loaded"])
    deltas = [d for d in compare([m], [slower(busy, 1.3)]) if d.metric.endswith("_time")]
    assert deltas and all(d.verdict == "unclear" and "busy machine" in d.text() for d in deltas)


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", "profile", *argv], capture_output=True, text=True, timeout=300)


def test_the_gate_fails_a_recorded_chain_made_30_percent_slower(tmp_path: Path) -> None:
    data = json.loads(SWEEP.read_text())
    for result in data["results"]:
        for key in ("device_time_us", "wall_time_us"):
            result[key] *= 1.3
        for key in ("device_time_us_iqr", "wall_time_us_iqr"):
            result[key] = [x * 1.3 for x in result[key]] if result[key] else None
    slow = tmp_path / "slower.json"
    slow.write_text(json.dumps(data))
    gate = ("--fail-on", "wall_time:10%", "--fail-on", "device_time:5%")
    proc = run_cli("--from", str(slow), "--baseline", str(SWEEP), *gate)
    assert proc.returncode == 1, proc.stderr
    assert "regression: wall_time compiled N=100,000,000" in proc.stderr
    assert run_cli("--from", str(SWEEP), "--baseline", str(SWEEP), *gate).returncode == 0


@pytest.mark.parametrize(
    ("device", "sizes"),
    [
        pytest.param("cpu", "1e2", marks=pytest.mark.slow, id="cpu"),
        pytest.param("cuda", "1e2,1e8", marks=[pytest.mark.gpu, NEEDS_CUDA], id="cuda"),
    ],
)
def test_a_chain_against_its_own_report_from_another_process_reads_no_worse(
    device: str, sizes: str, tmp_path: Path
) -> None:
    """Two ``kernel-tui profile --json`` processes, then the gate: exit 0, no time WORSE."""
    reports = []
    for name in ("first", "second"):
        proc = run_cli("(a + b).relu()", "--device", device, "--sizes", sizes, "--json")
        assert proc.returncode == 0, proc.stderr
        reports.append(tmp_path / f"{name}.json")
        reports[-1].write_text(proc.stdout)
    gate = ("--fail-on", "wall_time:10%", "--fail-on", "device_time:5%")
    proc = run_cli("--from", str(reports[1]), "--baseline", str(reports[0]), *gate)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    times = [line for line in proc.stdout.splitlines() if line.startswith(("wall_time ", "device_time "))]
    assert len(times) == 4 * len(sizes.split(",")) and not any("WORSE" in line for line in times), proc.stdout
