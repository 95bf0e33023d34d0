"""The time budget for one call of a chain: the budget's logic, its setting, and a corpus of slow ops
with small memory that end through the real worker with one line.

An op that releases the GIL keeps the worker's heartbeats coming, so only the budget sees a call
that runs for hours (a long 1-D convolution: its cost grows as N squared).
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from probes.engine.watchdog import CallBudget, CallOverBudget, over_budget_message
from probes.link.protocol import ProfileRequest
from probes.link.settings import (
    DEFAULT_CALL_BUDGET_S,
    MAX_CALL_BUDGET_S,
    MIN_CALL_BUDGET_S,
    SettingError,
    check_call_budget,
    parse_call_budget,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def budget() -> Iterator[CallBudget]:
    yield CallBudget(grace_s=0.5, poll_s=0.01)


def spin_until(deadline_s: float) -> None:
    """Plain Python, which an exception raised from another thread stops at its next step."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        pass


def test_a_call_past_the_budget_is_stopped_with_the_size_and_budget(budget: CallBudget) -> None:
    begin = time.monotonic()
    with pytest.raises(CallOverBudget), budget.watching(0.2, 10**7, "eager"), budget.calls():
        spin_until(30.0)
    assert time.monotonic() - begin < 10.0
    assert budget.message() == over_budget_message(10**7, 0.2, "eager")
    assert "N=1e7" in budget.message() and "over 0.2 s" in budget.message()


def test_calls_within_the_budget_run_to_the_end(budget: CallBudget) -> None:
    with budget.watching(5.0, 1000):
        for _ in range(20):
            with budget.calls():
                spin_until(0.001)


def test_a_block_of_calls_gets_the_budget_of_each(budget: CallBudget) -> None:
    with budget.watching(0.3, 1000), budget.calls(count=10):
        spin_until(0.6)  # twice one call's budget, a fifth of the block's


def test_nothing_is_budgeted_outside_a_measurement_or_between_calls(budget: CallBudget) -> None:
    with budget.calls():  # not watching: a call outside a measurement (the memory guard's, a test's)
        spin_until(0.3)
    with budget.watching(0.1, 1000):
        with budget.calls():
            pass
        spin_until(0.3)  # between calls: the tool's own work, a compile


def test_a_call_that_never_returns_to_python_gets_the_last_resort(budget: CallBudget) -> None:
    called: list[str] = []
    budget.on_unstoppable = called.append
    libc = ctypes.CDLL(None)
    with pytest.raises(CallOverBudget), budget.watching(0.1, 200_000, "eager"), budget.calls():
        libc.usleep(2_000_000)  # C code without the GIL: the raise waits for it to return
    assert called == [over_budget_message(200_000, 0.1, "eager")]


def test_a_compile_is_not_a_call_but_what_runs_after_it_is(budget: CallBudget) -> None:
    with budget.watching(0.1, 1000, "compiled"):
        with budget.calls():
            budget.compile_started()
            spin_until(0.4)  # Dynamo compiling: the clock stands
            budget.compile_ended()
            spin_until(0.1)  # the rest of the call, within its allowance
        with pytest.raises(CallOverBudget):
            budget.compile_started()
            budget.compile_ended()  # a compile with no mark around it (the compile's own first call)
            spin_until(30.0)


def test_only_the_watched_thread_is_budgeted(budget: CallBudget) -> None:
    def other() -> None:
        with budget.calls():
            spin_until(0.3)

    with budget.watching(0.1, 1000):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()


def test_the_setting_has_limits_and_a_default() -> None:
    assert ProfileRequest(id="r", chain="a + b").call_budget_s == DEFAULT_CALL_BUDGET_S
    assert check_call_budget(2) == 2.0
    assert parse_call_budget("30s") == 30.0 and parse_call_budget(" 2.5 ") == 2.5
    for bad in (0, MIN_CALL_BUDGET_S / 2, MAX_CALL_BUDGET_S + 1, float("nan"), True, "5"):
        with pytest.raises(SettingError):
            check_call_budget(bad)
    for text in ("", "five", "-1", "1e400", "5 min"):
        with pytest.raises(SettingError):
            parse_call_budget(text)
    invalid = ProfileRequest(id="r", chain="a + b", call_budget_s=0.0).invalid()
    assert invalid is not None and "call budget" in invalid


SHORT_BUDGET = ["--call-budget", "1"]
"""The cases beside the first are stopped after one second, not the default five: what they show
(a sweep's smaller size measured first, a compiled call, other ops) does not depend on the length."""
CONV1D = ["--input", "x: [1, 1, N]", "--input", "w: [1, 1, N // 2]", "F.conv1d(x, w)"]
SLOW_OPS = [
    pytest.param([*CONV1D, "--sizes", "1e7"], id="conv1d"),
    pytest.param([*CONV1D, "--sizes", "1e3,1e7", *SHORT_BUDGET], id="conv1d-sweep"),
    pytest.param([*CONV1D, "--sizes", "1e7", "--modes", "compiled", *SHORT_BUDGET], id="conv1d-compiled"),
    pytest.param(
        ["--input", "x: [N]", "x.unfold(0, N // 2, 1).sum()", "--sizes", "4e6", *SHORT_BUDGET], id="unfold-sum"
    ),
    pytest.param(
        ["--input", "x: [4000, N // 4000]", "torch.cdist(x, x, p=1)", "--sizes", "4e7", *SHORT_BUDGET], id="cdist"
    ),
]


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("argv", SLOW_OPS)
def test_a_slow_op_ends_within_a_minute_with_one_line(argv: list[str]) -> None:
    """Each of these takes minutes to hours for one call at the largest size, with little memory."""
    begin = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tui", "profile", *argv, "--device", "cpu"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert time.monotonic() - begin < 60.0
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    budget = "1 s" if "--call-budget" in argv else "5 s"
    assert f"took over {budget} (the budget for one call)" in lines[0] and "--call-budget" in lines[0]
