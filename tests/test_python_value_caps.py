"""Python values a chain grows past the caps, whatever made them (tests/data/python_value_corpus.json).

Each torch function and tensor method a chain may call that returns a Python value is grown the ways
its value can grow: a sequence repeated with ``*`` (by a number and by an integer tensor), doubled
with ``+`` and nested; an integer shifted, raised and squared. Every such chain is refused in one
line: by the allow-list before it runs, or by the run-time caps (probes.chain.limits) while the
worker's memory guard traces it, within 30 s and under 1 GB (the slow test runs the real engine on
the CPU, in a process limited to 4 GB of address space).
"""

from __future__ import annotations

import ast
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from probes.chain import kinds
from probes.chain.expr import ChainError, parse_chain
from probes.chain.limits import MAX_INT_BITS, MAX_ITEMS, binop
from probes.link.protocol import ChainErrorInfo

ROOT = Path(__file__).parents[1]
CORPUS: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "python_value_corpus.json").read_text())
NAMESPACE: dict[str, object] = {"torch": torch, "F": F}
DECLARATION = "m: [8, 8]\n"
LIMIT_S = 30.0
LIMIT_RSS_BYTES = 1 << 30
"""The most a growth case may add to the process's peak memory."""
ADDRESS_SPACE_BYTES = 4 << 30
GROWTH: dict[str, dict[str, str]] = {
    "sequence": {
        "repeat": "x = {S} * (6 * 10 ** 8)\na + len(x)",
        "repeat by a tensor": "x = {S} * torch.tensor(6 * 10 ** 8)\na + len(x)",
        "double": "x = {S}\n" + "x = x + x\n" * 24 + "a + len(x)",
        "nest": "x = ({S},)\nx = x * 4096\nx = (x,)\nx = x * 4096\na + len(x)",
    },
    "integer": {
        "shift": "x = (abs({S}) + 2) << (2 * 10 ** 10)\na + x",
        "power": "(abs({S}) + 2) ** 10 ** 18 + a",
        "square": "x = abs({S}) + 2\n" + "x = x * x\n" * 16 + "a + (x > 0)",
    },
    "other": {
        "repeat": "x = {S} * (6 * 10 ** 8)\na + len(x)",
        "shift": "x = {S} << (2 * 10 ** 10)\na",
        "power": "{S} ** 10 ** 18 + a",
        "double": "x = {S}\n" + "x = x + x\n" * 24 + "a",
    },
}
"""How each kind of value is grown: a sequence and an integer past the caps (refused as such); a
value that cannot grow (a dtype, None, a float) fails the operator in one line, or stays small."""


def growth_cases() -> list[tuple[str, str, str, str]]:
    """(id, chain, value, source) for each corpus entry and each way its value grows."""
    return [
        (f"{case['name']} {how}", DECLARATION + chain.replace("{S}", case["source"]), case["value"], case["source"])
        for case in CORPUS["cases"]
        for how, chain in GROWTH[case["value"]].items()
    ]


def bare(source: str) -> str:
    """The chain that only makes the value."""
    return f"{DECLARATION}x = {source}\na"


def assert_one_line(info: ChainErrorInfo) -> None:
    shown = info.located()
    assert shown.strip() and "\n" not in shown and "Traceback" not in shown, shown


def test_the_corpus_covers_every_python_valued_name_of_the_call_kind_table() -> None:
    """A name the table says returns anything but a tensor is in the corpus, or says why no chain
    can call it; a torch upgrade that adds one fails here until the corpus grows."""
    prefixes = {
        "TORCH": "torch.",
        "FUNCTIONAL": "F.",
        "LINALG": "torch.linalg.",
        "FFT": "torch.fft.",
        "SPECIAL": "torch.special.",
        "TENSOR_METHODS": "Tensor.",
    }
    listed = {case["name"] for case in CORPUS["cases"]} | set(CORPUS["unreachable"])
    missing = [
        prefixes[table] + name
        for table, prefix in prefixes.items()
        for name, kind in kinds._CALLS[table].items()
        if kind is not kinds.Kind.TENSOR and prefix + name not in listed
    ]
    assert not missing, missing
    assert {case["value"] for case in CORPUS["cases"]} == set(GROWTH)
    assert len(CORPUS["cases"]) >= 150


@pytest.mark.parametrize("case", CORPUS["cases"], ids=[case["name"] for case in CORPUS["cases"]])
def test_each_source_is_a_valid_chain(case: dict[str, Any]) -> None:
    parse_chain(bare(case["source"]))


@pytest.mark.parametrize("chain", [pytest.param(chain, id=name) for name, chain, _, _ in growth_cases()])
def test_growth_is_refused_by_the_allow_list_or_routed_through_the_caps(chain: str) -> None:
    """Before anything runs: the chain is refused in one line, or every operator that grows a
    Python value goes through the run-time caps (the slow test runs them)."""
    try:
        function = parse_chain(chain).build_function(NAMESPACE)
    except ChainError as exc:
        assert exc.info.kind == "rejected", exc
        assert_one_line(exc.info)
        return
    assert "_kt_binop" in function.__code__.co_names, chain


@pytest.mark.parametrize(
    ("chain", "words"),
    [
        ("x = torch.get_num_interop_threads() << (2 * 10 ** 10)\na + x", "both sides of << must be number literals"),
        ("torch.get_num_interop_threads() ** 10 ** 18 + a", "both sides of ** must be number literals"),
        ("x = a.numel() ** 2\na", "both sides of ** must be number literals"),
        ("x = torch.typename(a)\nx % a", "%-formatting of strings is not allowed"),
    ],
)
def test_certain_python_values_meet_the_allow_list(chain: str, words: str) -> None:
    with pytest.raises(ChainError) as caught:
        parse_chain(chain)
    assert caught.value.info.kind == "rejected" and words in caught.value.info.message


@pytest.mark.parametrize(
    ("chain", "words"),
    [
        ("x = torch.get_float32_matmul_precision() * (5 * 10 ** 8)\na + len(x)", "repeating a str 500,000,000 times"),
        ("x = a.dim_order() * (6 * 10 ** 8)\na + len(x)", "repeating a tuple 600,000,000 times"),
        ("x = a.unbind()\n" + "x = x + x\n" * 22 + "a", "over 4,096 items"),
        ("a.shape * torch.tensor(10 ** 9)", "repeating a Size 1,000,000,000 times"),
        ("x = a.max(0)\nx * torch.tensor(10 ** 9)", "repeating a max 1,000,000,000 times"),
        ("max(a.shape[:0], default='x') * torch.tensor(10 ** 9)", "repeating a str 1,000,000,000 times"),
        ("s = (0,)\nt = s * 4096\nu = (t,)\nv = u * 4096\na", "repeating a tuple 4,096 times"),
        ("x = torch.get_num_threads() << (2 * 10 ** 10)\na", "Python integer of over 10,000 bits"),
    ],
)
def test_the_caps_stop_python_values_of_any_origin_as_they_run(chain: str, words: str) -> None:
    """The issue's cases (and their kin) on small real tensors: refused before the value is built,
    on the line and column of the operator."""
    function = parse_chain(chain).build_function(NAMESPACE)
    with pytest.raises(ChainError) as caught:
        function(torch.ones(8), N=8)
    info = caught.value.info
    assert info.kind == "rejected" and words in info.message, info
    assert info.line is not None and info.col is not None


@pytest.mark.parametrize(
    ("chain", "kind"),
    [
        ("a.size(0) * a", kinds.Kind.TENSOR),
        ("a.shape[-1] * a", kinds.Kind.TENSOR),
        ("a.numel() * a", kinds.Kind.TENSOR),
        ("a.max(-1).values * 2", kinds.Kind.TENSOR),
        ("a.sort()[0] * 2", kinds.Kind.TENSOR),
        ("torch.split(a, 2)[0] * 2", kinds.Kind.TENSOR),
        ("a * a.shape", kinds.Kind.UNKNOWN),
        ("a * a.max()", kinds.Kind.TENSOR),
        ("a * a.max(0)", kinds.Kind.UNKNOWN),
        ("a.max(0)", kinds.Kind.TENSORS),
        ("torch.max(a, b)", kinds.Kind.TENSOR),
        ("torch.max(a, dim=0)", kinds.Kind.TENSORS),
        ("a.max(N)", kinds.Kind.TENSORS),
        ("a.max(a.shape)", kinds.Kind.SOME_TENSORS),
        ("torch.where(a > 0, a, b)", kinds.Kind.TENSOR),
        ("torch.where(a > 0)", kinds.Kind.TENSORS),
        ("torch.where(condition=a > 0)", kinds.Kind.TENSORS),
        ("a.nonzero()", kinds.Kind.TENSOR),
        ("torch.nonzero(a, as_tuple=True)", kinds.Kind.TENSORS),
        ("torch.nonzero(a, as_tuple=N > 1)", kinds.Kind.SOME_TENSORS),
        ("a == 'x'", kinds.Kind.UNKNOWN),
        ("a.unbind()", kinds.Kind.TENSORS),
        ("torch.get_float32_matmul_precision()", kinds.Kind.TEXT),
        ("a.size()", kinds.Kind.SHAPE),
        ("max(a.shape)", kinds.Kind.NUMBER),
        ("max(a.shape, default=a)", kinds.Kind.UNKNOWN),
        ("not a", kinds.Kind.NUMBER),
    ],
)
def test_the_kind_of_an_expression(chain: str, kind: kinds.Kind) -> None:
    from probes.chain.expr import _analyse

    _, module, validator = _analyse(chain)
    last = module.body[-1]
    assert isinstance(last, ast.Expr)
    assert validator.kind(last.value) is kind


@pytest.mark.parametrize(
    ("op", "left", "right"),
    [
        ("*", "ab", torch.tensor(10**9)),
        ("*", torch.tensor(10**9), (1, 2)),
        ("+", tuple(range(4096)), (1,)),
        ("*", ((0,) * 4096,), 2),
        ("**", 3, 10**6),
        ("<<", 1, 10**6),
    ],
)
def test_binop_refuses_before_it_computes(op: str, left: object, right: object) -> None:
    with pytest.raises(ChainError) as caught:
        binop(op, left, right)
    assert f"{MAX_ITEMS:,} items" in str(caught.value) or f"{MAX_INT_BITS:,} bits" in str(caught.value)


def run_growth_cases_here() -> None:
    """Run each source alone, then every growth case, through the engine in this process, one JSON
    line each (the slow test runs this in a child process limited to ADDRESS_SPACE_BYTES)."""
    from probes.engine import sweep
    from probes.link.protocol import MeasurementResult, ProfileRequest, RequestFailed

    def peak_rss() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    sources = [(f"{case['name']} alone", bare(case["source"])) for case in CORPUS["cases"]]
    # What growth costs is counted above the peak the sources alone reached: torch's own libraries
    # (a CUDA build maps more of them than a CPU build) are not the chain's.
    baseline = 0
    for index, (name, chain) in enumerate([*sources, *((name, chain) for name, chain, _, _ in growth_cases())]):
        if index == len(sources):
            baseline = peak_rss()
        print(json.dumps({"start": name}), flush=True)
        events: list[Any] = []
        begin = time.monotonic()
        request = ProfileRequest(f"r{index}", chain, sizes=[8], modes=["eager"], device="cpu", reps=1)
        sweep.run_profile(request, events.append)
        line = {
            "name": name,
            "seconds": time.monotonic() - begin,
            "rss_bytes": peak_rss() - baseline,
            "errors": [
                [event.error.kind, event.error.located()] for event in events if isinstance(event, RequestFailed)
            ],
            "results": sum(isinstance(event, MeasurementResult) for event in events),
        }
        print(json.dumps(line), flush=True)


def growth_problems(case: tuple[str, str, str, str], answer: dict[str, Any], alone: dict[str, Any]) -> list[str]:
    """What is wrong with the engine's answer to a growth case: a value that can grow must be
    refused in one line, by the caps, or as its source alone is when the memory guard cannot trace
    that source (an op with no meta version): either way nothing is measured."""
    name, _, value, _ = case
    errors = answer["errors"]
    problems = []
    if answer["seconds"] > LIMIT_S or answer["rss_bytes"] > LIMIT_RSS_BYTES:
        problems.append(f"{name}: {answer['seconds']:.1f} s, {answer['rss_bytes'] / 2**20:.0f} MiB")
    if any("\n" in shown or "Traceback" in shown for _, shown in errors) or len(errors) > 1:
        problems.append(f"{name}: {errors}")
    if value == "other":
        return problems
    if answer["results"] or not errors:
        problems.append(f"{name}: measured, not refused")
    elif errors[0][0] != "rejected" and errors != alone["errors"]:
        problems.append(f"{name}: {errors[0]}, not refused by the caps (alone: {alone['errors']})")
    return problems


@pytest.mark.slow
def test_the_engine_refuses_every_growth_case_in_time_and_memory() -> None:
    code = "import sys; sys.path.insert(0, 'tests'); import test_python_value_caps as t; t.run_growth_cases_here()"
    argv = ["prlimit", f"--as={ADDRESS_SPACE_BYTES}", sys.executable, "-c", code]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    answers = {line["name"]: line for line in lines if "name" in line}
    started = [line["start"] for line in lines if "start" in line]
    cases = growth_cases()
    assert done.returncode == 0 and len(answers) == len(cases) + len(CORPUS["cases"]), (
        started[-1:],
        done.stderr[-2000:],
    )
    names = {case["source"]: case["name"] for case in CORPUS["cases"]}
    problems = [
        problem
        for case in cases
        for problem in growth_problems(case, answers[case[0]], answers[f"{names[case[3]]} alone"])
    ]
    assert not problems, "\n".join(problems)
