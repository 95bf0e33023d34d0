"""`kernel-tui profile`: the JSON document's shape, the tables, one-line errors and exit statuses."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probes.chain.command_line import chain_lines
from probes.cli import build_parser, inert_json, main, parse_request

JSON_KEYS = {
    "mode",
    "size",
    "kernels_per_call",
    "bytes_per_call",
    "device_time_us",
    "wall_time_us",
    "compile_time_s",
    "ran_compiled",
    "kernels",
}
DATA = Path(__file__).parent / "data"
KERNEL_KEYS = {"name", "short_name", "launches_per_call", "device_time_us", "bytes", "gbps", "ops"}


@pytest.mark.slow
def test_json_document_has_the_documented_shape(capfd: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "(a + b).relu()",
            "--device",
            "cpu",
            "--sizes",
            "1e2,1_000",
            "--modes",
            "eager,compiled",
            "--reps",
            "3",
            "--json",
        ]
    )
    out = capfd.readouterr().out
    assert code == 0
    doc = json.loads(out)
    assert doc["device"] == "cpu" and doc["torch"]
    assert len(doc["results"]) == 4
    for result in doc["results"]:
        assert JSON_KEYS <= result.keys()
        assert isinstance(result["ran_compiled"], bool)
        for kernel in result["kernels"]:
            assert KERNEL_KEYS <= kernel.keys()
            assert isinstance(kernel["ops"], list)
    sizes = sorted({r["size"] for r in doc["results"]})
    assert sizes == [100, 1000]
    compiled = [r for r in doc["results"] if r["mode"] == "compiled"]
    assert all(r["ran_compiled"] and r["compile_time_s"] > 0 for r in compiled)


def test_tables_show_kernels_headline_and_sweep(capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["(a + b).relu()", "--device", "cpu", "--sizes", "1e3,1e4", "--modes", "eager", "--reps", "3"])
    out = capfd.readouterr().out
    assert code == 0
    assert "aten::add" in out and "aten::clamp_min" in out
    assert "eager 2 kernels / 5N" in out
    assert "sweep" in out and "1e3" in out and "1e4" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["(a + b).relu("], "'(' was never closed"),
        (["a + d"], "unknown name 'd'"),
        (["__import__('os')"], "not allowed"),
        (["a", "--sizes", "1x"], "is not a size"),
        (["a", "--sizes", "-5"], "positive"),
        (["a", "--modes", "turbo"], "unknown mode 'turbo'"),
        (["a", "--device", "tpu"], "device"),
    ],
)
def test_bad_input_exits_non_zero_with_one_line(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from probes.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr


def test_saved_report_prints_the_same_tables(capfd: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    report = Path(__file__).parent / "data" / "h200_add_relu_sweep.json"
    assert main(["--from", str(report)]) == 0
    out = capfd.readouterr().out
    assert "NVIDIA H200" in out and "triton_poi_fused_add_relu_0" in out
    assert "eager 2 kernels / 5N -> compiled 1 kernel / 3N" in out
    from probes.link.protocol import ProfileReport
    from probes.link.summary import comparisons, crossover, format_size

    where = crossover(comparisons(ProfileReport.from_json(report.read_text()).results))
    assert where is not None and f"compiled is faster per call from N = {format_size(where)} up" in out


def test_missing_chain_or_report_is_a_usage_error(capfd: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["--from", "/nonexistent.json"]) == 2
    err = capfd.readouterr().err
    assert "give an op chain" in err and "no such file" in err


def run_cli(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "profile", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        input=stdin,
    )


def one_line_error(proc: subprocess.CompletedProcess[str], message: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "usage:" not in proc.stderr and "Traceback" not in proc.stderr


def test_an_unknown_dtype_is_one_line_without_the_usage_block() -> None:
    one_line_error(run_cli("a + b", "--dtype", "int8"), "int8")


@pytest.mark.skipif(os.path.exists("/proc/driver/nvidia/version"), reason="this machine has an NVIDIA driver")
def test_cuda_without_a_gpu_is_refused_at_once() -> None:
    begin = time.monotonic()
    proc = run_cli("a + b", "--device", "cuda")
    one_line_error(proc, "no NVIDIA GPU")
    assert time.monotonic() - begin < 5, "refused only after starting a worker"


@pytest.mark.parametrize("content", ["{}", "[1, 2]", "not json", '{"device": 3}'])
def test_a_malformed_report_is_one_plain_line(tmp_path: Path, content: str) -> None:
    report = tmp_path / "report.json"
    report.write_text(content)
    proc = run_cli("--from", str(report))
    one_line_error(proc, "--from")
    assert "__init__" not in proc.stderr and "positional" not in proc.stderr


def test_json_from_a_report_is_the_report_byte_for_byte() -> None:
    proc = run_cli("--from", str(DATA / "h200_add_relu_sweep.json"), "--json")
    assert proc.returncode == 0
    assert proc.stdout == (DATA / "h200_add_relu_sweep.json").read_text().rstrip("\n") + "\n"


def test_a_closed_pipe_ends_quietly_with_status_0() -> None:
    """``| head`` closing the pipe is the reader's choice, as with ``git log | head``: status 0,
    nothing on stderr."""
    report = shlex.quote(str(DATA / "h200_add_relu_sweep.json"))
    proc = subprocess.run(
        f"{shlex.quote(sys.executable)} -m tui profile --from {report} | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout.startswith("NVIDIA H200")
    assert proc.returncode == 0 and proc.stderr == "", (proc.returncode, proc.stderr)


def test_hostile_report_strings_are_shown_inert_never_as_markup(tmp_path: Path) -> None:
    data = json.loads((DATA / "h200_add.json").read_text())
    data["device_label"] = "GPU\x1b]52;c;ZWNobyBoaQ==\x07 [bold]loud[/"
    kernel = data["results"][0]["kernels"][0]
    kernel["short_name"] = "[link=file:///etc/passwd]k[/link]\x1b[2J"
    kernel["ops"] = ["[/]", "\x9b31m"]
    data["results"][0]["fallback_reason"] = "[red"
    report = tmp_path / "hostile.json"
    report.write_text(json.dumps(data))
    proc = run_cli("--from", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x9b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b]52;c;ZWNobyBoaQ==\\x07 [bold]loud[/" in proc.stdout
    assert "[link=file:///etc/passwd]k[/link]" in proc.stdout


@pytest.mark.slow
def test_a_repeated_mode_is_measured_once() -> None:
    proc = run_cli("a + b", "--device", "cpu", "--sizes", "64", "--modes", "eager,eager", "--reps", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [r["mode"] for r in json.loads(proc.stdout)["results"]] == ["eager"]


def test_baseline_deltas_and_fail_on(tmp_path: Path) -> None:
    """A report against itself: no change; against a copy made 20% faster: a device_time
    regression beyond 5% exits 1, and a delta inside the noise is no change."""
    source = DATA / "h200_add.json"
    same = run_cli("--from", str(source), "--baseline", str(source), "--fail-on", "device_time:5%")
    assert same.returncode == 0, same.stderr
    assert "no change" in same.stdout and "WORSE" not in same.stdout
    faster = json.loads(source.read_text())
    for result in faster["results"]:
        result["device_time_us"] *= 0.8
    pinned = tmp_path / "faster.json"
    pinned.write_text(json.dumps(faster))
    worse = run_cli("--from", str(source), "--baseline", str(pinned), "--fail-on", "device_time:5%")
    assert worse.returncode == 1
    assert "regression: device_time" in worse.stderr and "+25.0%" in worse.stderr
    assert " µs -> " in worse.stderr  # figures carry their unit
    lenient = run_cli("--from", str(source), "--baseline", str(pinned), "--fail-on", "device_time:30%")
    assert lenient.returncode == 0


def test_baseline_noise_makes_a_small_delta_no_change() -> None:
    from probes.link.baseline import compare
    from probes.link.protocol import ProfileReport

    (m,) = [r for r in ProfileReport.from_json((DATA / "h200_add.json").read_text()).results][:1]
    import dataclasses

    noisy = dataclasses.replace(m, device_time_us_iqr=[m.device_time_us * 0.9, m.device_time_us * 1.1])
    moved = dataclasses.replace(noisy, device_time_us=m.device_time_us * 1.05)
    (delta,) = [d for d in compare([noisy], [moved]) if d.metric == "device_time"]
    assert delta.verdict == "same"


@pytest.mark.parametrize("argv", [["--fail-on", "speed:5%"], ["--fail-on", "device_time:5%"]])
def test_bad_baseline_options_are_one_line(argv: list[str]) -> None:
    one_line_error(run_cli("--from", str(DATA / "h200_add.json"), *argv), "--fail-on")


def test_baseline_deltas_carry_their_units() -> None:
    """``9.216 -> 2.205`` says nothing: times read in µs, bytes in B/kB/MB/GB, counts in kernels
    and transfers in input-sized arrays."""
    proc = run_cli("--from", str(DATA / "h200_add.json"), "--baseline", str(DATA / "h200_add_relu_sweep.json"))
    assert proc.returncode == 0, proc.stderr
    deltas = {line.split(" N=")[0]: line for line in proc.stdout.splitlines() if " -> " in line and " N=" in line}
    assert "2 kernels -> 1 kernel" in deltas["kernels eager"]
    assert "5N -> 3N" in deltas["transfers eager"]
    assert "20.0 MB -> 12.0 MB" in deltas["bytes eager"]
    assert deltas["device_time eager"].count(" µs") == 2 and deltas["wall_time eager"].count(" µs") == 2


def long_named_report(tmp_path: Path) -> Path:
    """The H200 training step, one kernel renamed as Inductor names a fused relu backward."""
    data = json.loads((DATA / "h200_gelu_matmul_grad.json").read_text())
    kernel = data["results"][1]["kernels"][3]
    kernel["short_name"] = "triton_poi_fused_add_relu_threshold_backward_mul_sum_0"
    kernel["ops"] = ["add", "relu", "threshold_backward", "mul", "sum"]
    report = tmp_path / "report.json"
    report.write_text(json.dumps(data))
    return report


def test_piped_tables_show_every_name_whole_without_trailing_spaces(tmp_path: Path) -> None:
    """Piped (``| cat``, ``> log``, CI) the tables are laid out at full width, not cut at 80
    columns, whatever COLUMNS says; and no line ends in spaces."""
    report = long_named_report(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "tui", "profile", "--from", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"COLUMNS": "80"},
    )
    assert proc.returncode == 0, proc.stderr
    recorded = json.loads(report.read_text())
    names = {k["short_name"] for r in recorded["results"] for k in r["kernels"]}
    words = proc.stdout.split()
    assert all(name in words for name in names), sorted(names - set(words))
    assert "threshold_backward," in words
    assert [line for line in proc.stdout.splitlines() if line != line.rstrip()] == []


def test_json_output_is_left_as_it_is() -> None:
    proc = run_cli("--from", str(DATA / "h200_gelu_matmul_grad.json"), "--json")
    assert proc.stdout == (DATA / "h200_gelu_matmul_grad.json").read_text().rstrip("\n") + "\n"


def test_help_documents_the_exit_statuses() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    status = proc.stdout.split("exit status:")[1]
    meanings = (("0", "every requested size and mode"), ("1", "failed"), ("2", "bad usage"), ("3", "could not judge"))
    for code, meaning in meanings:
        assert any(line.split()[:1] == [code] and meaning in line for line in status.splitlines()), status


def test_help_lists_every_fail_on_metric() -> None:
    from probes.link.baseline import METRICS

    help_text = " ".join(run_cli("--help").stdout.split())
    described = help_text.split("--fail-on METRIC:PCT", 2)[2]
    assert all(metric in described for metric in METRICS), described
    assert "peak_memory" in described


def test_the_readme_lists_the_exit_statuses_the_help_prints() -> None:
    from probes.cli import EXIT_STATUSES

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    rows = re.findall(r"^\| (\d+) \| .* \|$", readme.split("| exit status | when |")[1], re.M)
    assert [int(code) for code in rows] == [code for code, _ in EXIT_STATUSES]


@pytest.fixture(scope="module")
def regressed_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    faster = json.loads((DATA / "h200_add.json").read_text())
    for result in faster["results"]:
        result["device_time_us"] *= 0.8
    path = tmp_path_factory.mktemp("baseline") / "faster.json"
    path.write_text(json.dumps(faster))
    return path


@pytest.fixture(scope="module")
def busy_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    busy = json.loads((DATA / "h200_add.json").read_text())
    for result in busy["results"]:
        result["noise_reasons"] = ["machine busy: 2.0 of 2 cores loaded (1.9 by other processes)"]
    path = tmp_path_factory.mktemp("busy") / "busy.json"
    path.write_text(json.dumps(busy))
    return path


CPU = ["--device", "cpu", "--modes", "eager", "--reps", "2"]


@pytest.mark.parametrize(
    ("argv", "code", "stderr_lines"),
    [
        pytest.param(["--from", "{report}"], 0, 0, id="a report printed"),
        pytest.param(["a + b", "--sizes", "1e3", *CPU], 0, 0, id="every size measured"),
        pytest.param(["a + b", "--sizes", "1e3,1e11", *CPU], 1, 1, id="one size of a sweep failed"),
        pytest.param(["a + b", "--sizes", "1e11,2e11", *CPU], 1, 2, id="every size failed"),
        pytest.param(
            ["--from", "{report}", "--baseline", "{faster}", "--fail-on", "device_time:5%"], 1, 4, id="a regression"
        ),
        pytest.param(
            ["--from", "{busy}", "--baseline", "{report}", "--fail-on", "device_time:5%"], 3, 4, id="could not judge"
        ),
        pytest.param(["a +* b"], 2, 1, id="a chain that does not parse"),
        pytest.param(["__import__('os')"], 2, 1, id="a chain refused"),
        pytest.param(["a + b", "--modes", "turbo"], 2, 1, id="an unknown mode"),
        pytest.param(["a + b", "--reps", "0"], 2, 1, id="reps out of range"),
        pytest.param(["a + b", "--frobnicate"], 2, 1, id="an unknown option"),
        pytest.param(["--from", "/nonexistent.json"], 2, 1, id="an unreadable report"),
    ],
)
def test_exit_status(
    argv: list[str], code: int, stderr_lines: int, regressed_baseline: Path, busy_report: Path
) -> None:
    """0: all measured; 1: a measurement failed (one line each) or a --fail-on regression; 2: usage;
    3: a --fail-on metric could not be judged (one line each)."""
    args = [a.format(report=DATA / "h200_add.json", faster=regressed_baseline, busy=busy_report) for a in argv]
    proc = run_cli(*args)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == code, proc.stderr
    assert len(lines) == stderr_lines, proc.stderr
    assert "Traceback" not in proc.stderr


RAW_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
OSC52 = "\x1b]52;c;ZWNobyBoaQ==\x07"


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["profile", "a + b", "extra\x1b]0;PWN\x07"], id="an extra argument"),
        pytest.param(["profile", "a + b", f"--bogus{OSC52}"], id="an unknown profile option"),
        pytest.param(["profile", "a + b", "--dtype", f"fp8{OSC52}"], id="an invalid choice"),
        pytest.param([f"--bogus{OSC52}"], id="an unknown app option"),
        pytest.param(["demo", f"--bogus{OSC52}"], id="an unknown demo option"),
        pytest.param(["--replay", f"/nonexistent{OSC52}\u202e.json"], id="an app usage error naming a path"),
    ],
)
def test_argparse_echoes_what_was_typed_inert(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "tui", *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert not RAW_TERMINAL_CONTROLS.search(proc.stderr + proc.stdout), proc.stderr
    assert "\\x1b]" in proc.stderr and "Traceback" not in proc.stderr


def test_json_from_a_report_escapes_c1_and_bidi_controls(tmp_path: Path) -> None:
    data = json.loads((DATA / "h200_add.json").read_text())
    data["device_label"] = "GPU\x9b31m\x9d0;PWN\x9c\x7f"
    data["results"][0]["kernels"][0]["short_name"] = "k\u202eevil\u2066\u2069\u200e\u200f\u061c é"
    report = tmp_path / "hostile.json"
    report.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    proc = run_cli("--from", str(report), "--json")
    assert proc.returncode == 0, proc.stderr
    assert not RAW_TERMINAL_CONTROLS.search(proc.stdout)
    assert json.loads(proc.stdout) == data
    assert "é" in proc.stdout  # other text is left as it was written


def test_every_json_output_escapes_what_the_terminal_would_obey() -> None:
    text = json.dumps({"chain": "a + b  # \u202e\x9b\x7f é"}, ensure_ascii=False)
    assert inert_json(text) == '{"chain": "a + b  # \\u202e\\u009b\\u007f é"}'
    assert json.loads(inert_json(text)) == json.loads(text)


@pytest.mark.parametrize(
    ("typed", "lines"),
    [
        ("x: [N, 64]; x * 2", ["x: [N, 64]", "x * 2"]),
        ("y = a + b\\ny.relu()", ["y = a + b", "y.relu()"]),
        ("torch.einsum('i;j', a)", ["torch.einsum('i;j', a)"]),
        ('F.pad(a, (1, 1), mode="con;stant\\n")', ['F.pad(a, (1, 1), mode="con;stant\\n")']),
        ("torch.einsum('''i;j''', a); b", ["torch.einsum('''i;j''', a)", "b"]),
        ("a + 'it\\'s; fine'", ["a + 'it\\'s; fine'"]),
        ("a + b  # a; b\\na * b", ["a + b  # a; b", "a * b"]),
    ],
)
def test_a_chain_is_split_into_lines_outside_its_strings_and_comments(typed: str, lines: list[str]) -> None:
    assert chain_lines(typed).split("\n") == lines


def test_a_semicolon_in_a_string_reaches_the_chain_parser_whole() -> None:
    args = build_parser().parse_args(["torch.einsum('i;j', x); x", "--input", "x: [N]"])
    assert parse_request(args).chain == "x: [N]\ntorch.einsum('i;j', x)\nx"


def run_cli_with(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "profile", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | env,
    )


def test_a_cache_dir_under_a_regular_file_is_one_inert_line_before_any_worker(tmp_path: Path) -> None:
    regular = tmp_path / "file"
    regular.write_text("")
    env = {"KERNEL_TUI_CACHE_DIR": "", "XDG_CACHE_HOME": f"{regular}/sub\x1b]0;owned\x07"}
    begin = time.monotonic()
    proc = run_cli_with(env, "a + b", "--device", "cpu")
    one_line_error(proc, f"(from XDG_CACHE_HOME={regular}/sub\\x1b]0;owned\\x07): {regular} is not a directory")
    assert "\x1b" not in proc.stderr
    assert time.monotonic() - begin < 5, "refused only after starting a worker"


@pytest.mark.slow
def test_a_symlinked_cache_dir_is_followed_by_the_headless_command(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "cache"
    real.mkdir(parents=True, mode=0o700)
    link = tmp_path / "cache-link"
    link.symlink_to(real, target_is_directory=True)
    proc = run_cli_with(
        {"KERNEL_TUI_CACHE_DIR": str(link)}, "a + b", "--device", "cpu", "--sizes", "100", "--modes", "eager"
    )
    assert proc.returncode == 0, proc.stderr
    assert (real / "peak_bandwidth.json").is_file() and link.is_symlink()


@pytest.mark.slow
@pytest.mark.parametrize("as_json", [False, True], ids=["tables", "json"])
def test_a_worker_that_dies_compiling_fails_the_run_with_one_line(tmp_path: Path, as_json: bool) -> None:
    """The eager rows are printed, the compiled mode's failure is one line, and the status is 1."""
    from probes.engine.worker import TEST_FAULT_ENV

    argv = ["a + b", "--device", "cpu", "--sizes", "1e3", "--modes", "eager,compiled", "--reps", "2"]
    proc = subprocess.run(
        [sys.executable, "-m", "tui", "profile", *argv, *(["--json"] if as_json else [])],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {TEST_FAULT_ENV: f"exit-in-compile:{tmp_path / 'fired'}"},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "the worker exited (code 1)" in lines[0], proc.stderr
    if as_json:
        assert [r["mode"] for r in json.loads(proc.stdout)["results"]] == ["eager"]
    else:
        assert "eager 1 kernel" in proc.stdout and "compiled" not in proc.stdout.split("ops", 1)[1]


@pytest.mark.slow
def test_the_softmax_example_over_the_default_sizes_measures_every_size_it_can() -> None:
    """``x: [N // 1024, 1024]`` has no rows at N=1e2: that size is one line, the four others are
    measured, and the summary says ``4 of 5 sizes measured, 1e2 failed``."""
    from tui.workspace import SEED_CHAINS

    chain = dict(SEED_CHAINS)["softmax"].replace("\n", "; ")
    proc = run_cli(chain, "--device", "cpu", "--modes", "eager", "--reps", "1")
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error (N=1e2): ") and "dim 'N // 1024' is 0" in lines[0]
    sweep = proc.stdout.split("sweep", 1)[1]
    rows = [match[1] for line in sweep.splitlines() if (match := re.match(r"\s*(\S+)\s+eager\s", line))]
    assert rows == ["1e4", "1e6", "1e7", "1e8"], sweep
    assert "4 of 5 sizes measured, 1e2 failed" in proc.stdout


def test_a_host_bound_ratio_carries_its_label_in_the_tables_and_the_size_lines() -> None:
    """The H200 sweep of ``(a + b).relu()``: compiled's wall time is the host's up to 1e7."""
    proc = run_cli("--from", str(DATA / "h200_add_relu_sweep.json"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    size_lines = [line for line in lines if line.startswith("eager 2 kernels")]
    assert len(size_lines) == 5 and all(", device " in line and ", per call " in line for line in size_lines)
    assert all("per call host-bound 0." in line for line in size_lines[:4]) and "host-bound" not in size_lines[4]
    rows = {line.split()[0]: line for line in lines if re.match(r"\s*1e\d\s+compiled\s", line)}
    assert all(re.search(r"\d-\d\.\d\dx hb$", rows[size]) for size in ("1e2", "1e4", "1e6", "1e7")), rows
    assert rows["1e8"].endswith("1.57x") and any(line.startswith("hb: host-bound") for line in lines)
