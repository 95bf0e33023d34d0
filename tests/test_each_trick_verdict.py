"""The latency benchmark's verdict on each start-up trick (benchmarks/tui_latency.py --fast-paths each).

A trick is kept only where turning it off costs a figure 20 ms or more; a difference smaller than
its own spread must read as noise, not as a saving, so that no trick is kept or removed on chance.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "tui_latency.py"


@functools.cache
def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tui_latency", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_steady_cost_of_20_ms_or_more_is_a_trick_that_buys_its_time() -> None:
    latency = benchmark()
    assert latency.verdict(latency.spread([0.030, 0.035, 0.040, 0.032])) == "buys >= 20 ms"


def test_a_steady_cost_under_20_ms_is_a_trick_that_does_not() -> None:
    latency = benchmark()
    assert latency.verdict(latency.spread([0.005, 0.006, 0.007, 0.006])) == "< 20 ms"


def test_a_difference_inside_its_own_spread_is_noise() -> None:
    latency = benchmark()
    assert latency.verdict(latency.spread([-0.200, 0.300, 0.050, -0.100])).startswith("within noise")


def test_differences_are_paired_round_by_round_and_chain_by_chain() -> None:
    latency = benchmark()
    samples = {
        "edit": {
            latency.ALL_ON: [{"new_eager": [1.0, 2.0]}, {"new_eager": [3.0, 4.0]}],
            "short_warm_up": [{"new_eager": [1.1, 2.1]}, {}],  # the second round's launch failed
        }
    }
    found = latency.trick_differences(samples)["short_warm_up"]
    new_eager = found["figures"]["new_eager"]["off_minus_on_s"]
    assert new_eager["n"] == 2 and abs(new_eager["median"] - 0.1) < 1e-9
    assert found["verdict"] == "buys >= 20 ms"
    assert found["figures"]["hit_eager"]["verdict"] == "not measured"
