"""Ratios compare like with like: a reading from a busy machine, one whose reps drifted, or an
interval too wide makes the ratio "unclear", never a confident figure (the app, the CLI and the
demo all say it through ``probes.link.summary``)."""

from __future__ import annotations

import dataclasses

from probes.link.protocol import Measurement
from probes.link.summary import BUSY_REASON, DRIFT_REASON, comparisons, headline, ratio, sweep_verdict

BUSY = f"{BUSY_REASON}: 2.0 of 2 cores loaded (1.0 by other processes)"
DRIFT = f"the kernel times add up to 3.1x the call's wall time: {DRIFT_REASON}"


def reading(mode: str, time_us: float, *, size: int = 1_000_000, spread: float = 0.01, reasons=()) -> Measurement:
    """A measurement with a tight spread (``spread`` of its median either side) and ``reasons``."""
    iqr = [time_us * (1 - spread), time_us * (1 + spread)]
    return Measurement(
        "(a + b).relu()", mode, size, "cpu", "fp32", [], [], 1 if mode != "eager" else 2, 12 * size,
        time_us, time_us, 100, mode != "eager", wall_time_us_iqr=iqr, device_time_us_iqr=iqr,
        noisy=bool(reasons), noise_reasons=list(reasons),
    )  # fmt: skip


def test_a_quiet_pair_gives_its_ratio() -> None:
    found = ratio(reading("eager", 200.0), reading("compiled", 100.0), "device")
    assert found is not None and found.verdict == "faster" and found.text() == "2.00x"


def test_a_reading_from_a_busy_machine_makes_the_ratio_unclear_however_tight_its_interval() -> None:
    """The interval covers the spread inside each reading, not the load that moved one of them."""
    eager = reading("eager", 6600.0, reasons=[BUSY])  # taken under load: 66x, with a tight interval
    found = ratio(eager, reading("compiled", 100.0), "device")
    assert found is not None and found.low > 60
    assert found.verdict == "unclear" and found.text() == "unclear: machine busy, re-run"
    line = headline(eager, reading("compiled", 100.0))
    assert line.endswith("unclear: machine busy, re-run") and "66" not in line


def test_readings_whose_reps_drifted_or_whose_interval_is_wide_are_unclear() -> None:
    drifted = ratio(reading("eager", 200.0, reasons=[DRIFT]), reading("compiled", 100.0), "device")
    assert drifted is not None and drifted.text() == "unclear: the readings drifted, re-run"
    timed = ratio(reading("eager", 200.0, reasons=[DRIFT]), reading("compiled", 100.0), "wall")
    assert timed is not None and timed.text() == "2.00x", "the timed reps give the wall time: not in doubt"
    wide = ratio(reading("eager", 200.0, spread=0.2), reading("compiled", 100.0, spread=0.2), "wall")
    assert wide is not None and wide.high / wide.low > 1.4
    assert wide.verdict == "unclear" and wide.text() == "unclear: wide spread, re-run"


def test_a_sweep_whose_largest_size_was_measured_under_load_draws_no_verdict() -> None:
    results = [
        reading("eager", 20.0, size=100),
        reading("compiled", 10.0, size=100),
        reading("eager", 2000.0, size=10**8, reasons=[BUSY]),
        reading("compiled", 100.0, size=10**8),
    ]
    pairs = comparisons(results)
    assert sweep_verdict(pairs) == (
        "compiled vs eager per call is unclear at the largest size measured (machine busy, re-run)"
    )
    quiet = [r if r.size == 100 else dataclasses.replace(r, noise_reasons=[], noisy=False) for r in results]
    assert sweep_verdict(comparisons(quiet)) == "compiled is faster per call from N = 1e2 up"


def timed(mode: str, wall_us: float, device_us: float, *, size: int = 100, spread: float = 0.01) -> Measurement:
    """A quiet reading whose wall and device times differ (a host-bound call where the kernels
    take under half the wall time)."""
    return dataclasses.replace(
        reading(mode, wall_us, size=size, spread=spread),
        device_time_us=device_us,
        device_time_us_iqr=[device_us * (1 - spread), device_us * (1 + spread)],
    )


def test_a_host_bound_wall_ratio_is_labelled_with_its_spread_never_a_bare_figure() -> None:
    """At N=1e2 the compiled call's wall time is the host's (kernels a few % of it): five fresh
    processes read 0.26x to 0.42x. The figure says host-bound and gives its interval over reps."""
    eager, compiled = timed("eager", 16.0, 1.9), timed("compiled", 41.0, 0.9)
    wall = ratio(eager, compiled, "wall")
    assert wall is not None and wall.host_bound and wall.verdict == "slower"
    assert wall.text() == f"host-bound {wall.interval()}" and wall.low < wall.value < wall.high
    device = ratio(eager, compiled, "device")
    assert device is not None and not device.host_bound and device.text() == "2.11x"
    assert headline(eager, compiled).endswith(f"device 2.11x, per call host-bound {wall.interval()}")


def test_a_wall_ratio_of_calls_that_are_mostly_kernel_time_is_a_plain_figure() -> None:
    found = ratio(timed("eager", 476.0, 458.0, size=10**8), timed("compiled", 303.0, 270.0, size=10**8), "wall")
    assert found is not None and not found.host_bound and found.text().startswith("1.57x")


def test_a_sizes_line_and_the_sweep_verdict_state_one_verdict() -> None:
    """A run printed ``unclear: drifted`` for a size and ``compiled is faster from 1e6 up`` below:
    the device ratio and the per-call one, unnamed. Each size's line names both, and its per-call
    ratio is the one the sweep's verdict reads."""
    results = [
        timed("eager", 16.0, 1.9),
        timed("compiled", 41.0, 0.9),
        reading("eager", 2000.0, reasons=[DRIFT]),
        reading("compiled", 1000.0),
        reading("eager", 2000.0, size=10**8, reasons=[DRIFT]),
        reading("compiled", 1000.0, size=10**8),
    ]
    pairs = comparisons(results)
    assert sweep_verdict(pairs) == "compiled is faster per call from N = 1e6 up"
    for pair in pairs:
        line = headline(pair.eager, pair.compiled)
        assert line.endswith(f"per call {pair.wall_ratio.text()}")
        assert (pair.wall_ratio.verdict == "faster") == (pair.size >= 10**6)
        if pair.size >= 10**6:
            assert "device unclear: the readings drifted, re-run, per call 2.00x" in line
