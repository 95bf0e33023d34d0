"""A function or an nn.Module of the user's own file (``kernel-tui profile model.py:block``):
measured as the same code written as a chain, re-imported when a file of it changes, its errors
one line at their line in the file, and the worker surviving them."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from probes.cli import main
from probes.link.client import WorkerClient
from probes.link.protocol import MeasurementResult, ProfileRequest, RequestFailed, SourceRef
from probes.link.settings import DEFAULT_CALL_BUDGET_S
from probes.link.source_spec import parse_source_spec

WAIT_S = 120
NO_CUDA_DRIVER = not Path("/proc/driver/nvidia/version").exists()
needs_cuda = [pytest.mark.gpu, pytest.mark.skipif(NO_CUDA_DRIVER, reason="needs CUDA")]

MODEL = """\
import torch
from torch import nn
import torch.nn.functional as F


def block(x, w):
    return (x @ w).relu()


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return F.gelu(self.fc(x))


def make_mlp():
    return Mlp()


def broken(x):
    y = x * 2
    return y.view(3, 7, 11)
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def profile_json(capfd: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main([*argv, "--reps", "3", "--json"])
    captured = capfd.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def kernel_facts(doc: dict) -> dict[tuple[str, int], tuple]:
    """Per (mode, size): the kernels (name, pass, launches), the bytes of each pass, the count and
    the bytes per call; on the CPU each kernel's own bytes too. Where one op launches several CUDA
    kernels (cuBLAS's split-K GEMM and its reduction) the op's bytes are shared among them by their
    measured times, which differ a little from one run to the next."""
    facts = {}
    for m in doc["results"]:
        per_kernel = m["device"] == "cpu"
        rows = sorted(
            (k["short_name"], k["pass"], k["launches_per_call"]) + ((k["bytes"],) if per_kernel else ())
            for k in m["kernels"]
        )
        by_pass: dict[str, int] = {}
        for k in m["kernels"]:
            by_pass[k["pass"]] = by_pass.get(k["pass"], 0) + (k["bytes"] or 0)
        facts[(m["mode"], m["size"])] = (rows, by_pass, m["kernels_per_call"], m["bytes_per_call"])
    return facts


def devices() -> list:
    return ["cpu", pytest.param("cuda", marks=needs_cuda)]


def test_a_file_and_name_on_the_command_line_is_a_source_not_a_chain() -> None:
    ref = parse_source_spec("models/model.py:block", ["x: [N, 64]"])
    assert ref == SourceRef("models/model.py", "block", ["x: [N, 64]"])
    assert ref is not None and ref.label == "models/model.py:block"
    assert parse_source_spec("(a + b).relu()") is None
    assert parse_source_spec("model.py:1block") is None


@pytest.mark.slow
@pytest.mark.parametrize("device", devices())
def test_a_function_gives_the_kernels_counts_and_bytes_of_the_same_chain(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], device: str
) -> None:
    model = write(tmp_path / "model.py", MODEL)
    common = ["--device", device, "--sizes", "1e3,1e4", "--modes", "eager,compiled"]
    inputs = ["--input", "x: [N, 64]", "--input", "w: [64, 64]"]
    from_file = profile_json(capfd, f"{model}:block", *inputs, *common)
    as_chain = profile_json(capfd, "(x @ w).relu()", *inputs, *common)
    assert kernel_facts(from_file) == kernel_facts(as_chain)
    assert all(m["ran_compiled"] for m in from_file["results"] if m["mode"] == "compiled")


@pytest.mark.slow
@pytest.mark.parametrize("device", devices())
def test_a_module_with_grad_gives_the_kernels_counts_and_bytes_of_the_same_chain(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], device: str
) -> None:
    model = write(tmp_path / "model.py", MODEL)
    common = ["--device", device, "--sizes", "1e3", "--modes", "eager,compiled", "--grad"]
    from_file = profile_json(capfd, f"{model}:Mlp", "--input", "x: [N, 64]", *common)
    as_chain = profile_json(
        capfd,
        "F.gelu(F.linear(x, w, b))",
        "--input",
        "x: [N, 64]",
        "--input",
        "w: [32, 64]",
        "--input",
        "b: [32]",
        *common,
    )
    assert kernel_facts(from_file) == kernel_facts(as_chain)
    passes = {k["pass"] for m in from_file["results"] for k in m["kernels"]}
    assert passes == {"forward", "backward"}


def test_the_report_names_the_file_the_function_and_the_hash_of_its_text(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    model = write(tmp_path / "model.py", MODEL)
    doc = profile_json(
        capfd, f"{model}:make_mlp", "--input", "x: [N, 64]", "--device", "cpu", "--sizes", "1e3", "--modes", "eager"
    )
    (result,) = {json.dumps(m["source"], sort_keys=True) for m in doc["results"]}
    source = json.loads(result)
    assert source["path"] == str(model) and source["name"] == "make_mlp"
    assert source["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert doc["results"][0]["chain"] == f"{model}:make_mlp"


def test_an_exception_in_the_file_is_one_line_at_its_line_with_a_bad_chains_exit_code(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    model = write(tmp_path / "model.py", MODEL)
    argv = ["--input", "x: [N]", "--device", "cpu", "--sizes", "1e3", "--modes", "eager"]
    code = main([f"{model}:broken", *argv])
    err = [line for line in capfd.readouterr().err.splitlines() if line.strip() and "Warning" not in line]
    chain_code = main(["x.view(3, 7, 11)", *argv])
    capfd.readouterr()
    assert code == chain_code == 1
    assert len(err) == 1 and "model.py:25: RuntimeError: shape '[3, 7, 11]' is invalid" in err[0], err
    assert "Traceback" not in err[0]


def test_a_syntax_error_in_the_file_is_one_line_with_a_bad_chains_exit_code(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    model = write(tmp_path / "model.py", "import torch\n\ndef f(x):\n    return x +\n")
    code = main([f"{model}:f", "--input", "x: [N]", "--device", "cpu", "--sizes", "1e3", "--modes", "eager"])
    err = capfd.readouterr().err.strip().splitlines()
    assert code == main(["x +", "--input", "x: [N]", "--device", "cpu", "--modes", "eager"]) == 2
    assert err == ["kernel-tui profile: model.py:4: SyntaxError: invalid syntax"]


@pytest.fixture
async def client(tmp_path: Path):
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    await asyncio.wait_for(client.start(), WAIT_S)
    yield client
    await client.close()


async def measure(client: WorkerClient, ref: SourceRef, budget_s: float = DEFAULT_CALL_BUDGET_S) -> list:
    request = ProfileRequest(
        client.new_id(), ref.label, sizes=[1000], modes=["eager"], device="cpu", reps=3, call_budget_s=budget_s
    )
    request.source = ref

    async def gather() -> list:
        return [event async for event in client.request(request)]

    return await asyncio.wait_for(gather(), WAIT_S)


def results(events: list) -> list:
    return [e.measurement for e in events if isinstance(e, MeasurementResult)]


def failures(events: list) -> list[str]:
    return [e.error.located() for e in events if isinstance(e, RequestFailed)]


async def test_the_worker_imports_a_changed_file_and_its_siblings_afresh_and_survives_errors(
    tmp_path: Path, client: WorkerClient
) -> None:
    write(tmp_path / "helpers.py", "def twice(x):\n    return x * 2\n")
    model = write(tmp_path / "model.py", "from helpers import twice\n\ndef f(x):\n    return twice(x)\n")
    ref = SourceRef(str(model), "f", ["x: [N]"])
    (first,) = results(await measure(client, ref))
    assert [k.short_name for k in first.kernels] == ["aten::mul"]

    write(tmp_path / "helpers.py", "def twice(x):\n    return (x * 2).relu()\n")  # only the sibling changed
    (second,) = results(await measure(client, ref))
    assert [k.short_name for k in second.kernels] == ["aten::mul", "aten::clamp_min"]
    assert second.source is not None and first.source is not None
    assert second.source.sha256 == first.source.sha256  # the named file itself did not change

    write(tmp_path / "model.py", "def f(x):\n    y = x + 1\n    raise ValueError('no good')\n")
    events = await measure(client, ref)
    assert failures(events) == ["model.py:3: ValueError: no good"] and not results(events)

    write(tmp_path / "model.py", "def f(x):\n    return x.sin()\n")
    (fixed,) = results(await measure(client, ref))
    assert [k.short_name for k in fixed.kernels] == ["aten::sin"]


async def test_a_missing_name_or_a_wrong_input_count_is_one_line(tmp_path: Path, client: WorkerClient) -> None:
    model = write(tmp_path / "model.py", MODEL)
    missing = await measure(client, SourceRef(str(model), "nope", ["x: [N]"]))
    assert failures(missing) == ["model.py has no function or class named 'nope'"]
    wrong = failures(await measure(client, SourceRef(str(model), "block", ["x: [N, 64]"])))
    assert len(wrong) == 1 and "model.py:block does not take the 1 declared input(s)" in wrong[0]


async def test_code_the_memory_guard_cannot_size_runs_under_the_runtime_checks_and_says_so(
    tmp_path: Path, client: WorkerClient
) -> None:
    model = write(tmp_path / "model.py", "def f(x):\n    return x * float(x.abs().max())\n")
    events = await measure(client, SourceRef(str(model), "f", ["x: [N]"]))
    (measured,) = results(events)
    assert not failures(events) and "aten::mul" in [k.short_name for k in measured.kernels]
    notes = [line for line in measured.diagnostics if "memory guard could not check" in line]
    assert len(notes) == 1 and str(model) in notes[0] and "reads a tensor's values" in notes[0]


def test_the_worker_drops_only_the_modules_its_import_added(tmp_path: Path) -> None:
    """A file beside modules already imported (the tool's own) never drops them on re-import."""
    import torch

    from probes.engine import user_source

    write(tmp_path / "sibling_for_test.py", "VALUE = 1\n")
    model = write(tmp_path / "model.py", "import sibling_for_test\nimport json\n\ndef f(x):\n    return x + 1\n")
    ref = SourceRef(str(model), "f", ["x: [N]"])
    first = user_source.load_source(ref, torch.device("cpu"), "fp32", False, ref.label)
    assert "sibling_for_test" in sys.modules and "json" in sys.modules
    write(tmp_path / "model.py", "import json\n\ndef f(x):\n    return x + 2\n")
    second = user_source.load_source(ref, torch.device("cpu"), "fp32", False, ref.label)
    assert "sibling_for_test" not in sys.modules  # the stale sibling is gone
    assert "json" in sys.modules  # what was there before stays
    assert first.identity != second.identity and first.ref.sha256 != second.ref.sha256


SLOW_PARTS = {  # each loop on one line: the line where it is stopped is that one
    "import": ("import torch\nwhile True: pass\n\n\ndef block(x):\n    return x\n", 2, "its import"),
    "constructor": (
        "from torch import nn\n\n\nclass block(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        while True: pass\n",
        7,
        "__init__",
    ),
    "factory": ("def make():\n    while True: pass\n\n\nblock = make\n", 2, "make"),
    "exception text": (
        "class Odd(Exception):\n    def __str__(self):\n        while True: pass\n\n\ndef block(x):\n    raise Odd()\n",
        3,
        "__str__",
    ),
    "a sleep that never returns to Python": (
        "import time\nfrom torch import nn\n\n\nclass block(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        time.sleep(3600)\n",
        8,
        "__init__",
    ),
}


@pytest.mark.slow
async def test_the_users_code_past_the_budget_anywhere_is_one_line_at_its_line_and_the_next_run_works(
    tmp_path: Path,
) -> None:
    """Its import, its constructor or factory, the text of what it raises: each is one call's
    budget, and past it one line says where the code was; a sleep in C code that the stop cannot
    reach costs the worker, which is replaced."""
    budget_s = 1.0
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    await asyncio.wait_for(client.start(), WAIT_S)
    try:
        for number, (text, line, where) in enumerate(SLOW_PARTS.values()):
            model = write(tmp_path / f"model{number}.py", text)
            ref = SourceRef(str(model), "block", ["x: [N]"])
            started = time.monotonic()
            events = await measure(client, ref, budget_s)
            took = time.monotonic() - started
            assert failures(events) == [f"{model.name}:{line}: took longer than {budget_s:g} s (in {where})"]
            assert took < budget_s + 10
            write(model, "def block(x):\n    return x.sin()\n")
            (fixed,) = results(await measure(client, ref, budget_s))
            assert [k.short_name for k in fixed.kernels] == ["aten::sin"]
    finally:
        await client.close()
