"""Hostile text (tests/data/hostile_corpus.json): chains and arguments that would hang the worker in
plain Python, build huge text, slip past the memory guard, or carry escape sequences a terminal would
obey. Through the engine, the CLI as a subprocess, and one long-lived worker, every case ends within
45 s in one plain line (or its result), nothing reaches the terminal raw, and the next chain works.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from probes.link.protocol import ChainErrorInfo, MeasurementResult, ProfileRequest, RequestDone, RequestFailed
from probes.link.summary import parse_sizes

ROOT = Path(__file__).parents[1]
CORPUS: list[dict[str, Any]] = json.loads((ROOT / "tests" / "data" / "hostile_corpus.json").read_text())["cases"]
LIMIT_S = 45
EXAMPLE = "(a + b).relu()"
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What must never reach a terminal from the input: C0/C1 controls (ESC, BEL, CSI...) and bidi overrides."""


def engine_cases() -> list[Any]:
    return [pytest.param(case, id=case["name"]) for case in CORPUS if "argv" not in case]


def request_for(case: dict[str, Any], rid: str) -> ProfileRequest:
    return ProfileRequest(
        rid, case["chain"], sizes=parse_sizes(",".join(case["sizes"])), modes=["eager"], device="cpu", reps=1
    )


def assert_one_inert_line(message: str) -> None:
    assert message.strip() and "\n" not in message, repr(message)
    assert "Traceback" not in message and 'File "' not in message, message
    assert not RAW_CONTROLS.search(message), f"raw control characters in {message!r}"


def check(case: dict[str, Any], events: list[Any]) -> None:
    """The case's events: its result, or failures in one inert line each, the first as expected."""
    assert isinstance(events[-1], RequestDone) and not events[-1].cancelled, events[-1:]
    failures = [e.error for e in events if isinstance(e, RequestFailed)]
    results = [e for e in events if isinstance(e, MeasurementResult)]
    for error in failures:
        assert_one_inert_line(error.located())
    expect = case["expect"]
    if expect["outcome"] == "ok":
        assert results and not failures, [f.located() for f in failures]
        return
    assert failures and not results, f"{case['name']}: expected an error, got {len(results)} result(s)"
    check_error(case, failures[0])


def check_error(case: dict[str, Any], error: ChainErrorInfo) -> None:
    expect = case["expect"]
    shown = error.located()
    assert_one_inert_line(shown)
    assert error.kind == expect["kind"], f"{case['name']}: kind {error.kind}, expected {expect['kind']}: {shown}"
    assert expect["message_contains"] in shown, f"{case['name']}: {shown!r} lacks {expect['message_contains']!r}"


def test_the_corpus_covers_every_category() -> None:
    names = [case["name"] for case in CORPUS]
    assert len(names) == len(set(names)) >= 40
    assert {case["category"] for case in CORPUS} == {"hang", "slow-text", "guard", "escape"}
    assert any(RAW_CONTROLS.search(case["chain"] + "".join(case.get("argv", []))) for case in CORPUS)


@pytest.mark.parametrize("case", engine_cases())
def test_the_engine_ends_each_case_in_one_plain_line(case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """...and refuses every error case before it allocates its inputs (the guard runs first)."""
    from probes.engine import plan, sweep

    allocated: list[int] = []

    def make_inputs(specs: list[Any], device: Any, n: int) -> list[Any]:
        allocated.append(n)
        return real_make_inputs(specs, device, n)

    real_make_inputs = plan.make_inputs
    monkeypatch.setattr(plan, "make_inputs", make_inputs)
    begin = time.monotonic()
    try:
        request = request_for(case, "hostile")
    except ValueError as exc:  # a size the parser refuses never reaches the engine
        check_error(case, ChainErrorInfo("input", str(exc)))
        return
    events: list[Any] = []
    sweep.run_profile(request, events.append)
    assert time.monotonic() - begin < LIMIT_S
    check(case, events)
    if case["expect"]["outcome"] == "error":
        assert not allocated, f"{case['name']}: inputs were allocated before the refusal"
    after: list[Any] = []
    sweep.run_profile(
        ProfileRequest("next", EXAMPLE, sizes=[1000], modes=["eager"], device="cpu", reps=1), after.append
    )
    assert any(isinstance(e, MeasurementResult) for e in after), after


def cli_argv(case: dict[str, Any]) -> list[str]:
    options = [f"--sizes={','.join(case['sizes'])}", "--modes=eager", "--reps=1", *case.get("argv", ["--device=cpu"])]
    return [*options, "--", case["chain"]]


def cli_problems(case: dict[str, Any], code: int, out: str, err: str) -> list[str]:
    """What is wrong with the CLI's answer to ``case``. It reads ';' as a newline, so for escape
    sequences (which contain ';') what is checked is what matters on that path: nothing raw on the
    terminal, at most one line, an end."""
    problems = []
    if RAW_CONTROLS.search(out + err):
        problems.append(f"raw control characters in the output: {(out + err)[:300]!r}")
    if "Traceback" in out + err:
        problems.append(f"a traceback: {err[-500:]}")
    lines = [line for line in err.splitlines() if line.strip()]
    if case["expect"]["outcome"] == "ok" or case["category"] == "escape":
        if code not in (0, 1, 2) or len(lines) > 1:
            problems.append(f"exit {code}, stderr {err[-500:]!r}")
        return problems
    wanted = case["expect"]["message_contains"]
    if code not in (1, 2) or len(lines) != 1 or wanted not in lines[0]:
        problems.append(f"exit {code}, stderr {err[-500:]!r} lacks {wanted!r}")
    return problems


def cli_cases() -> list[Any]:
    """Every case of arguments or escape sequences (the command's own reading and printing of
    them), and one case of each category, outcome and error kind that a worker answers: what the
    worker says for each case is checked through the engine and one worker, and through the
    command one answer of a kind is printed as every other of that kind is, each at the cost of a
    worker's start."""
    seen: set[tuple[Any, ...]] = set()
    chosen = []
    for case in CORPUS:
        key = (case["category"], case["expect"]["outcome"], case["expect"].get("kind"))
        if "argv" in case or case["category"] == "escape" or key not in seen:
            seen.add(key)
            chosen.append(pytest.param(case, id=case["name"]))
    return chosen


@pytest.mark.parametrize("case", cli_cases())
def test_the_cli_answers_each_case_in_one_plain_line(case: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    from probes.cli import main

    begin = time.monotonic()
    code = main(cli_argv(case))
    out, err = capfd.readouterr()
    assert time.monotonic() - begin < LIMIT_S
    assert not cli_problems(case, code, out, err)


def run_cli(case: dict[str, Any]) -> tuple[dict[str, Any], subprocess.CompletedProcess[bytes] | None]:
    argv = [sys.executable, "-m", "tui", "profile", *cli_argv(case)]
    try:
        return case, subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=LIMIT_S, check=False)
    except subprocess.TimeoutExpired:
        return case, None


def test_the_cli_as_a_process_ends_in_time_and_writes_nothing_raw() -> None:
    """The issue's cases and every escape, as a user would run them: ``python -m tui profile ...``
    in a fresh process (two at a time), each ended within LIMIT_S."""
    problems = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for case, done in pool.map(run_cli, [case for case in CORPUS if case.get("subprocess")]):
            if done is None:
                problems.append(f"{case['name']}: still running after {LIMIT_S} s")
                continue
            out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
            problems += [f"{case['name']}: {problem}" for problem in cli_problems(case, done.returncode, out, err)]
    assert not problems, "\n".join(problems)


async def test_one_worker_ends_each_case_and_measures_the_next_chain(tmp_path: Path) -> None:
    from probes.link.client import WorkerClient

    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    problems: list[str] = []

    async def answer(request: ProfileRequest) -> list[Any]:
        async def gather() -> list[Any]:
            return [event async for event in client.request(request)]

        return await asyncio.wait_for(gather(), LIMIT_S)

    try:
        await client.start()
        pid = client.pid
        for case in CORPUS:
            if "argv" in case:
                continue
            try:
                request = request_for(case, client.new_id())
            except ValueError:
                continue  # the sizes never reach a worker
            try:
                check(case, await answer(request))
            except (AssertionError, TimeoutError) as exc:
                problems.append(f"{case['name']}: {exc!r}")
            again = await answer(
                ProfileRequest(client.new_id(), EXAMPLE, sizes=[1000], modes=["eager"], device="cpu", reps=1)
            )
            if not any(isinstance(e, MeasurementResult) for e in again):
                problems.append(f"{case['name']}: the next chain failed: {again}")
        assert client.pid == pid and client.restarts == 0, "a case cost the worker its life"
    finally:
        await client.close()
    assert not problems, "\n".join(problems)


def test_a_hostile_report_is_printed_inert(tmp_path: Path) -> None:
    """A report from someone else (``--from``) whose fields carry escape sequences and markup:
    printed as text, in one piece, never obeyed or parsed."""
    report = json.loads((ROOT / "tests" / "data" / "h200_add.json").read_text())
    report["device_label"] = "NVIDIA H200\x1b]52;c;S1RVSQ==\x07 [red]x[/red] [/oops]"
    report["results"][0]["kernels"][0]["short_name"] = "k\x1b]0;KTUI\x07[/bad]"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    done = subprocess.run(
        [sys.executable, "-m", "tui", "profile", "--from", str(path)],
        cwd=ROOT,
        capture_output=True,
        timeout=LIMIT_S,
        check=False,
    )
    out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0 and "Traceback" not in out, out[-800:]
    assert not RAW_CONTROLS.search(out) and "[/oops]" in out
