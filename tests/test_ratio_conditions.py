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
