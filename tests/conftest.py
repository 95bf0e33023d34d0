"""The suite's tiers. ``slow`` tests take over 5 s on a 2-core machine (most compile with
torch.compile); ``e2e`` tests drive the real program as a separate process: the app in a terminal,
the worker process, or the headless command that starts one. ``make test-fast`` runs neither; the
``e2e`` mark is given here, from one table, so that a new test in these modules is in the right
tier without a decorator to remember.

Each test process (each xdist worker, or the one process of a serial run) keeps kernel-tui's files
in folders of its own: device locks, peaks, bytecode caches and workspaces of one process never meet
another's, nor the user's."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

END_TO_END: dict[str, set[str] | None] = {
    # Whole modules (None): every test in them starts the real app, worker or command.
    "e2e": None,
    "test_worker.py": None,
    "test_worker_pair.py": None,
    "test_soak.py": None,
    "tui/test_tui_e2e_cpu.py": None,
    "tui/test_tui_source.py": None,
    # The tests of a module that start the worker, beside its in-process ones.
    "test_bad_input.py": {
        "test_cli_answers_each_case_in_one_line",
        "test_cli_still_measures_after_the_corpus",
        "test_one_worker_survives_the_whole_corpus",
    },
    "test_hostile.py": {
        "test_the_cli_answers_each_case_in_one_plain_line",
        "test_the_cli_as_a_process_ends_in_time_and_writes_nothing_raw",
        "test_one_worker_ends_each_case_and_measures_the_next_chain",
    },
    "test_terminal_escapes.py": {
        "test_a_hostile_workspace_is_shown_inert",
        "test_an_error_quoting_hostile_text_is_shown_inert",
        "test_a_workspace_file_with_a_hostile_name_is_refused_inert_and_left_alone",
        "test_a_chain_that_would_hang_ends_in_one_line_and_the_next_chain_works",
    },
    "test_user_source.py": {
        "test_a_function_gives_the_kernels_counts_and_bytes_of_the_same_chain",
        "test_a_module_with_grad_gives_the_kernels_counts_and_bytes_of_the_same_chain",
        "test_the_report_names_the_file_the_function_and_the_hash_of_its_text",
        "test_an_exception_in_the_file_is_one_line_at_its_line_with_a_bad_chains_exit_code",
        "test_a_syntax_error_in_the_file_is_one_line_with_a_bad_chains_exit_code",
        "test_the_worker_imports_a_changed_file_and_its_siblings_afresh_and_survives_errors",
        "test_a_missing_name_or_a_wrong_input_count_is_one_line",
        "test_code_the_memory_guard_cannot_size_runs_under_the_runtime_checks_and_says_so",
    },
    "test_cli.py": {
        "test_json_document_has_the_documented_shape",
        "test_tables_show_kernels_headline_and_sweep",
        "test_exit_status",
    },
}


OWN_FOLDERS = ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
"""The folders kernel-tui (through platformdirs) and Textual keep their files under."""
NAMED_FOLDERS = ("KERNEL_TUI_CACHE_DIR", "KERNEL_TUI_STATE_DIR")
"""kernel-tui's own variables, which win over the XDG ones: unset, so the user's never apply."""


def pytest_configure(config: pytest.Config) -> None:
    """Point this process's XDG folders at a fresh private folder, before any test or worker
    starts (the worker processes the tests start inherit them). A test that runs two kernel-tuis
    on one lock gives both the same folder itself."""
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    home = Path(tempfile.mkdtemp(prefix=f"kernel-tui-tests-{worker}-"))
    for variable in OWN_FOLDERS:
        os.environ[variable] = str(home / variable.removeprefix("XDG_").lower())
    for variable in NAMED_FOLDERS:
        os.environ.pop(variable, None)
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


ONE_AT_A_TIME: dict[str, set[str] | None] = {
    # The app in a terminal: each waits seconds at most for a screen, a key or a quit.
    "e2e": None,
    # But the packaging tests, which install into a venv and wait a minute for their one screen.
    "e2e/test_packaging.py": set(),
    # Tests that keep the cores busy on purpose.
    "test_baseline_processes.py": {"test_a_heavier_chain_on_a_busy_machine_never_passes_the_gate"},
    "test_engine_truth.py": {"test_a_measurement_under_cpu_load_says_it_is_noisy"},
}
"""Tests that never run beside one another in two processes (``--dist loadgroup``: one
``xdist_group``, so one worker runs them in turn): a test that loads the machine on purpose would
stretch the screen waits of a terminal test into timeouts."""
ONE_AT_A_TIME_GROUP = "one-at-a-time"


def _entry(path: Path, table: dict[str, set[str] | None]) -> tuple[str, set[str] | None] | None:
    """``table``'s entry for a test file: its own, or its folder's."""
    relative = path.relative_to(TESTS)
    for key in (relative.as_posix(), *(parent.as_posix() for parent in relative.parents if parent.parts)):
        if key in table:
            return key, table[key]
    return None


def _listed(item: pytest.Item, table: dict[str, set[str] | None], name: str) -> bool:
    """Whether ``table`` (called ``name`` in errors) lists ``item``: its whole module, its folder,
    or the test by name (a name the module lacks is an error, not a silent miss)."""
    path = Path(str(item.path))
    entry = _entry(path, table) if path.is_relative_to(TESTS) else None
    if entry is None:
        return False
    key, names = entry
    if names is None:
        return True
    missing = sorted(name for name in names if not hasattr(getattr(item, "module", None), name))
    if missing:
        raise pytest.UsageError(f"tests/conftest.py's {name} names tests {key} does not have: {missing}")
    return getattr(item, "originalname", item.name) in names


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _listed(item, END_TO_END, "END_TO_END"):
            item.add_marker(pytest.mark.e2e)
        if _listed(item, ONE_AT_A_TIME, "ONE_AT_A_TIME"):
            item.add_marker(pytest.mark.xdist_group(ONE_AT_A_TIME_GROUP))
