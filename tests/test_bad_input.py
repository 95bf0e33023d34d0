"""Bad input, as a user types it: the committed corpus (tests/data/bad_input_corpus.json) through
the parser, the engine (probes.engine.sweep.run_profile), the headless CLI and one real worker.

Each case must end in its plain-words message (or a result, for the valid ones), never a
traceback, and whatever ran it must still measure the next valid chain. The TUI tests drive the
same corpus through the app.
"""

from __future__ import annotations

import asyncio
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from probes.chain.expr import ChainError, parse_chain
from probes.link.protocol import (
    ChainErrorInfo,
    ErrorKind,
    InfoRequest,
    MeasurementResult,
    ProfileRequest,
    RequestDone,
    RequestFailed,
    WorkerReady,
)
from probes.link.summary import parse_sizes

CORPUS_PATH = Path(__file__).parent / "data" / "bad_input_corpus.json"
CORPUS: list[dict[str, Any]] = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))["cases"]
EXAMPLE = "(a + b).relu()"
STAGES = {"size", "parse", "guard", "run", None}
CASE_TIMEOUT_S = 120


def huge_allocations_refused() -> bool:
    """Whether the OS refuses a multi-terabyte allocation at once (so a real OOM is safe to provoke).

    Linux's vm.overcommit_memory 0 (heuristic) and 2 (strict) refuse it; 1 would grant it, and the
    chain would then touch the pages until the OOM killer steps in: those cases are skipped there.
    """
    try:
        return Path("/proc/sys/vm/overcommit_memory").read_text().strip() != "1"
    except OSError:
        return False


def _marks(case: dict[str, Any]) -> list[pytest.MarkDecorator]:
    marks = []
    if case.get("slow"):
        marks.append(pytest.mark.slow)
    return marks


def cases(select: typing.Callable[[dict[str, Any]], bool] = lambda case: True) -> list[Any]:
    return [pytest.param(case, id=case["name"], marks=_marks(case)) for case in CORPUS if select(case)]


def is_error(case: dict[str, Any]) -> bool:
    return case["expect"]["outcome"] == "error"


def assert_plain(message: str, case: dict[str, Any]) -> None:
    """A message a person reads: one line, no traceback, no Python file positions."""
    assert message.strip(), case["name"]
    assert "Traceback" not in message and 'File "' not in message, message
    assert "\n" not in message, f"{case['name']}: message spans lines: {message!r}"


def check_failure(error: ChainErrorInfo, case: dict[str, Any]) -> None:
    expect = case["expect"]
    shown = error.located()
    assert_plain(shown, case)
    assert error.kind == expect["kind"], f"{case['name']}: kind {error.kind!r}, expected {expect['kind']!r}: {shown}"
    assert expect["message_contains"] in shown, f"{case['name']}: {shown!r} lacks {expect['message_contains']!r}"


def request_for(case: dict[str, Any], rid: str = "bad") -> ProfileRequest:
    return ProfileRequest(
        rid,
        case["chain"],
        sizes=parse_sizes(",".join(case["sizes"])),
        modes=case.get("modes", ["eager"]),
        device="cpu",
        reps=1,
    )


def check_events(events: list[Any], case: dict[str, Any]) -> None:
    assert isinstance(events[-1], RequestDone) and not events[-1].cancelled, events[-1:]
    failures = [e for e in events if isinstance(e, RequestFailed)]
    results = [e for e in events if isinstance(e, MeasurementResult)]
    if is_error(case):
        assert failures, f"{case['name']}: expected an error, got {len(results)} result(s)"
        assert not results, f"{case['name']}: an error case also measured something"
        for failure in failures:
            assert_plain(failure.error.located(), case)
        check_failure(failures[0].error, case)
    else:
        assert not failures, f"{case['name']}: " + "; ".join(f.error.located() for f in failures)
        assert len(results) == len(request_for(case).sizes) * len(case.get("modes", ["eager"]))


# -- the corpus itself ----------------------------------------------------------------------------


def test_corpus_is_well_formed() -> None:
    names = [case["name"] for case in CORPUS]
    assert len(names) >= 60 and len(names) == len(set(names))
    chains = {case["chain"] for case in CORPUS}
    missing = [EXAMPLE[:i] for i in range(len(EXAMPLE) + 1) if EXAMPLE[:i] not in chains]
    assert not missing, f"prefixes of {EXAMPLE} not in the corpus: {missing}"
    kinds = set(typing.get_args(ErrorKind))
    for case in CORPUS:
        expect = case["expect"]
        assert expect["outcome"] in ("ok", "error") and case["stage"] in STAGES, case["name"]
        assert all(isinstance(size, str) for size in case["sizes"]), case["name"]
        assert ";" not in case["chain"] and "\\n" not in case["chain"], "the CLI would read these as newlines"
        if is_error(case):
            assert expect["kind"] in kinds and expect["message_contains"] and case["stage"], case["name"]
        else:
            assert expect["kind"] is None and case["stage"] is None, case["name"]
    covered = {case["stage"] for case in CORPUS}
    assert covered == STAGES
    assert any(len(case["chain"]) >= 10_000 and not is_error(case) for case in CORPUS)
    assert any(not case["chain"].isascii() for case in CORPUS)


# -- stage by stage, without running anything ---------------------------------------------------------


@pytest.mark.parametrize("case", cases())
def test_each_case_fails_at_its_stage(case: dict[str, Any]) -> None:
    """Size and parse errors come before torch: the TUI shows them inline as the user types."""
    stage = case["stage"]
    try:
        parse_sizes(",".join(case["sizes"]))
    except ValueError as exc:
        assert stage == "size", f"{case['name']}: sizes refused: {exc}"
        check_failure(ChainErrorInfo("input", str(exc)), case)
        return
    assert stage != "size", f"{case['name']}: the sizes parsed"
    try:
        parse_chain(case["chain"])
    except ChainError as exc:
        assert stage == "parse", f"{case['name']}: refused while parsing: {exc}"
        check_failure(exc.info, case)
        return
    assert stage != "parse", f"{case['name']}: the chain parsed"


# -- the engine, in this process ------------------------------------------------------------------------


def run_engine(request: ProfileRequest) -> list[Any]:
    from probes.engine.sweep import run_profile

    events: list[Any] = []
    run_profile(request, events.append)
    return events


def assert_example_still_works() -> None:
    events = run_engine(ProfileRequest("next", EXAMPLE, sizes=[1000], modes=["eager"], device="cpu", reps=1))
    results = [e for e in events if isinstance(e, MeasurementResult)]
    assert len(results) == 1 and results[0].measurement.kernels_per_call == 2, events


@pytest.mark.parametrize("case", cases())
def test_engine_answers_each_case_in_plain_words(case: dict[str, Any]) -> None:
    try:
        request = request_for(case)
    except ValueError as exc:  # an unparsable size never reaches the engine
        check_failure(ChainErrorInfo("input", str(exc)), case)
        return
    check_events(run_engine(request), case)
    if is_error(case):
        assert_example_still_works()


@pytest.mark.parametrize(
    ("size", "message"),
    [(0, "size 0 is not positive"), (-5, "size -5 is not positive"), (10**15, "absurdly large")],
)
def test_engine_refuses_raw_sizes_that_bypass_the_parser(size: int, message: str) -> None:
    events = run_engine(ProfileRequest("raw", EXAMPLE, sizes=[size], modes=["eager"], device="cpu", reps=1))
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert failures and message in failures[0].error.message and isinstance(events[-1], RequestDone)
    assert not any(isinstance(e, MeasurementResult) for e in events)


def rss_bytes(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not huge_allocations_refused(), reason="the OS would grant a terabyte allocation")
def test_an_out_of_memory_the_guard_lets_through_is_survived(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard sizes every chain before allocating, but free memory can go between its check and
    the allocation (another process took it). Told that exabytes are free, it lets a 4 TB factory
    call through, which the allocator refuses: the engine must say so in plain words, keep
    nothing, and measure the next chain."""
    from probes.engine import memory_guard

    monkeypatch.setattr(memory_guard, "free_memory", lambda device: (10**18, 10**18))
    case = {
        "name": "allocator_refuses",
        "chain": "torch.ones(N * N, device=a.device) + a.sum()",
        "sizes": ["1e6"],
        "expect": {"outcome": "error", "kind": "memory", "message_contains": "out of memory"},
    }
    assert_example_still_works()
    before = rss_bytes()
    for _ in range(3):
        check_events(run_engine(request_for(case)), case)
    assert_example_still_works()
    grown = rss_bytes() - before
    assert grown < 100e6, f"RSS grew by {grown / 1e6:.0f} MB over three out-of-memory runs"


# -- the headless CLI, in this process -------------------------------------------------------------------


def cli_cases() -> list[Any]:
    """Every case the command answers itself (a size or a chain it refuses before it starts a
    worker), and one case of each stage and error kind that a worker answers. What the worker says
    for each case is checked above (in-process) and in one worker below; through the command, a
    worker's answer of one stage and kind is printed as every other of that stage and kind is, and
    each costs a worker's start."""
    seen: set[tuple[Any, Any]] = set()
    chosen = []
    for case in CORPUS:
        key = (case["stage"], case["expect"].get("kind"))
        if case["stage"] in ("size", "parse") or key not in seen:
            seen.add(key)
            chosen.append(pytest.param(case, id=case["name"], marks=_marks(case)))
    return chosen


@pytest.mark.parametrize("case", cli_cases())
def test_cli_answers_each_case_in_one_line(case: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    from probes.cli import EXIT_BAD_INPUT, EXIT_FAILED, main

    argv = [
        f"--sizes={','.join(case['sizes'])}",
        f"--modes={','.join(case.get('modes', ['eager']))}",
        "--device=cpu",
        "--reps=1",
        "--",
        case["chain"],
    ]
    code = main(argv)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and 'File "' not in out + err, err[-2000:]
    expect = case["expect"]
    if not is_error(case):
        assert code == 0, err
        assert "kernels" in out and not err.strip(), err
        return
    lines = [line for line in err.splitlines() if expect["message_contains"] in line]
    assert len(lines) == 1, f"{case['name']}: the message is not on one stderr line:\n{err}"
    if case["stage"] in ("size", "parse"):
        assert code == EXIT_BAD_INPUT and lines[0].startswith("kernel-tui profile: "), (code, lines[0])
    else:
        assert code == EXIT_FAILED and lines[0].startswith("error ("), (code, lines[0])


def test_cli_still_measures_after_the_corpus(capfd: pytest.CaptureFixture[str]) -> None:
    from probes.cli import main

    assert main(["--sizes=1e3", "--modes=eager", "--device=cpu", "--reps=1", "--", EXAMPLE]) == 0
    assert "eager 2 kernels / 5N" in capfd.readouterr().out


# -- one real worker, the whole corpus ----------------------------------------------------------------------


async def _collect(client: Any, request: Any) -> list[Any]:
    async def gather() -> list[Any]:
        return [event async for event in client.request(request)]

    return await asyncio.wait_for(gather(), CASE_TIMEOUT_S)


async def test_one_worker_survives_the_whole_corpus(tmp_path: Path) -> None:
    """Every case that reaches the engine, in one worker: each answered in plain words, the next
    valid chain measured after each error, and the same process at the end (no case kills it)."""
    from probes.link.client import WorkerClient

    selected = [case for case in CORPUS if case["stage"] != "size" and not case.get("slow")]
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    problems: list[str] = []
    try:
        ready = await client.start()
        pid = client.pid
        assert pid == ready.pid
        for case in selected:
            events = await _collect(client, request_for(case, client.new_id()))
            try:
                check_events(events, case)
            except AssertionError as exc:
                problems.append(f"{case['name']}: {exc}")
            if is_error(case):
                again = await _collect(client, request_for({"chain": EXAMPLE, "sizes": ["1e3"]}, client.new_id()))
                if not any(isinstance(e, MeasurementResult) for e in again):
                    problems.append(f"{case['name']}: the next valid chain failed: {again}")
        assert client.pid == pid and client.restarts == 0, "a case killed the worker"
        info = [e for e in await _collect(client, InfoRequest(client.new_id())) if isinstance(e, WorkerReady)]
        assert info and info[0].pid == pid, "the worker no longer answers"
    finally:
        await client.close()
    assert not problems, f"{len(problems)} of {len(selected)} cases:\n" + "\n".join(problems)
