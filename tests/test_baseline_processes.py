"""The baseline gate across processes: a report is one process's readings, and a host's time per
call differs from one process to the next by more than that process's spread. The same chain
against its own report from another process never reads WORSE; a chain 30% slower still does."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from probes.link.baseline import compare, gate, regressions
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


def test_a_wall_time_mostly_kernels_allows_its_host_part_to_differ_between_processes() -> None:
    """The compiled call at N=1e8 (kernels ~93% of it) read +5.2% wall time in a second process
    on the H100, beyond one process's spread: within its host part, so no change; a change past
    the host part is still WORSE."""
    compiled = next(m for m in recorded() if (m.mode, m.size) == ("compiled", 10**8))
    host = 1 - compiled.device_time_us / compiled.wall_time_us
    assert 0.02 < host < HOST_BOUND_SHARE

    def wall_delta(factor: float) -> str:
        (delta,) = [
            d for d in compare([compiled], [slower(compiled, factor, wall_only=True)]) if d.metric == "wall_time"
        ]
        return delta.text()

    assert wall_delta(1 + host * 0.8).endswith("no change")
    assert wall_delta(1 + host * 1.5 + 0.02).endswith("WORSE")


def test_times_measured_on_a_busy_machine_are_not_judged() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("eager", 10**8))
    busy = dataclasses.replace(m, noisy=True, noise_reasons=[f"{BUSY_REASON}: 2.0 of 2 cores loaded"])
    deltas = [d for d in compare([m], [slower(busy, 1.3)]) if d.metric.endswith("_time")]
    assert deltas and all(d.verdict == "unclear" and "busy machine" in d.text() for d in deltas)


def busy(m: Measurement) -> Measurement:
    return dataclasses.replace(m, noisy=True, noise_reasons=[f"{BUSY_REASON}: 2.0 of 2 cores loaded"])


def test_a_gate_never_passes_on_a_reading_a_busy_machine_spoiled_and_asks_for_it_again() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("eager", 10**8))
    verdict = gate([m], [busy(slower(m, 3.0))], [("device_time", 0.10)])
    assert verdict.outcome == "unjudged" and verdict.regressed == []
    assert verdict.busy == [(10**8, "eager")]
    assert "busy machine" in verdict.unjudged[0]
    quiet_again = gate([m], [slower(m, 3.0)], [("device_time", 0.10)])
    assert quiet_again.outcome == "failed" and quiet_again.busy == []


def test_a_busy_baseline_is_not_measured_again_it_stays_unjudged() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("eager", 10**8))
    verdict = gate([busy(m)], [m], [("device_time", 0.10)])
    assert verdict.outcome == "unjudged" and verdict.busy == []


def test_counts_transfers_and_bytes_are_judged_on_a_busy_machine_too() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("eager", 10**8))
    more = dataclasses.replace(busy(m), kernels_per_call=m.kernels_per_call + 1)
    assert gate([m], [more], [("kernels", 0.0)]).outcome == "failed"
    assert gate([m], [busy(m)], [("kernels", 0.0), ("transfers", 0.0), ("bytes", 0.0)]).outcome == "passed"


def test_a_regression_fails_the_gate_whatever_else_it_could_not_judge() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("compiled", 100))
    verdict = gate([m], [slower(m, 3.0)], [("device_time", 0.10), ("wall_time", 0.10)])
    assert verdict.outcome == "failed" and verdict.unjudged  # the host-bound wall time has no verdict


def test_a_gated_figure_unknown_on_either_side_or_no_size_in_common_is_not_a_pass() -> None:
    m = next(m for m in recorded() if (m.mode, m.size) == ("eager", 10**8))
    unknown = dataclasses.replace(m, peak_memory_bytes=None)
    assert gate([m], [unknown], [("peak_memory", 0.05)]).outcome == "unjudged"
    elsewhere = dataclasses.replace(m, size=10**7)
    verdict = gate([m], [elsewhere], [("device_time", 0.05)])
    assert verdict.outcome == "unjudged" and "no size and mode in common" in verdict.unjudged[0]


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
    gates = ("--fail-on", "wall_time:10%", "--fail-on", "device_time:5%")
    proc = run_cli("--from", str(slow), "--baseline", str(SWEEP), *gates)
    assert proc.returncode == 1, proc.stderr
    assert "regression: wall_time compiled N=100,000,000" in proc.stderr
    assert run_cli("--from", str(SWEEP), "--baseline", str(SWEEP), "--fail-on", "device_time:5%").returncode == 0


def test_a_gate_on_host_bound_wall_times_exits_3_could_not_judge() -> None:
    """The sweep's small sizes are host-bound: their wall times have no verdict across processes,
    so a wall_time gate over them is not a pass."""
    proc = run_cli("--from", str(SWEEP), "--baseline", str(SWEEP), "--fail-on", "wall_time:10%")
    assert proc.returncode == 3, proc.stderr
    assert "could not judge: wall_time compiled N=100: " in proc.stderr and "host-bound" in proc.stderr


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
    """Two ``kernel-tui profile --json`` processes, then the gate: no time WORSE; the times the
    host decides (a CPU call under 100 µs, a host-bound wall time) cannot be judged: exit 3."""
    reports = []
    for name in ("first", "second"):
        proc = run_cli("(a + b).relu()", "--device", device, "--sizes", sizes, "--json")
        assert proc.returncode == 0, proc.stderr
        reports.append(tmp_path / f"{name}.json")
        reports[-1].write_text(proc.stdout)
    gates = ("--fail-on", "wall_time:10%", "--fail-on", "device_time:5%")
    proc = run_cli("--from", str(reports[1]), "--baseline", str(reports[0]), *gates)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "regression:" not in proc.stderr and "could not judge: wall_time" in proc.stderr
    times = [line for line in proc.stdout.splitlines() if line.startswith(("wall_time ", "device_time "))]
    assert len(times) == 4 * len(sizes.split(",")) and not any("WORSE" in line for line in times), proc.stdout


@contextlib.contextmanager
def busy_machine(processes: int = 2, limit_s: float = 150.0) -> Iterator[None]:
    """Processes that keep cores busy for as long as the block runs (each stops by itself after
    ``limit_s`` should the test die first)."""
    spin = f"import time\nend = time.monotonic() + {limit_s}\nwhile time.monotonic() < end:\n    pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(processes)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


@pytest.mark.slow
def test_a_heavier_chain_on_a_busy_machine_never_passes_the_gate(tmp_path: Path) -> None:
    """A chain three times heavier, measured while the test keeps the cores busy: the gate either
    judged it (1) or, after measuring again, says it could not (3); never a green 0."""
    cpu = ("--device", "cpu", "--sizes", "1e5", "--modes", "eager", "--reps", "3")
    base = run_cli("(a * b).sin()", *cpu, "--json")
    assert base.returncode == 0, base.stderr
    (tmp_path / "base.json").write_text(base.stdout)
    with busy_machine():
        heavier = "(a * b).sin().cos().sin().cos().sin().cos()"
        proc = run_cli(heavier, *cpu, "--baseline", str(tmp_path / "base.json"), "--fail-on", "device_time:10%")
    assert proc.returncode in (1, 3), proc.stdout + proc.stderr
    said = "regression: device_time" if proc.returncode == 1 else "could not judge: device_time"
    assert said in proc.stderr, proc.stderr
    if proc.returncode == 3 and "busy machine" in proc.stderr and "busy" not in base.stdout:
        assert "measuring again in 5 s (2 of 2)" in proc.stderr, proc.stderr  # only this run's was spoiled
