"""KERNEL_TUI_FAST_PATHS turns the start-up and latency tricks off all together or one by one.

The benchmark measures each trick with only that one off, and a user chasing a slow start turns
them off by name: a name that is no trick must say so, not leave every trick on quietly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from probes.link import fast_paths
from probes.link.fast_paths import ENV, TRICKS, SettingError, enabled, setting_without, turned_off

ROOT = Path(__file__).resolve().parent.parent


def test_unset_or_one_leaves_every_trick_on() -> None:
    assert all(enabled(name, {}) for name in TRICKS)
    assert all(enabled(name, {ENV: "1"}) for name in TRICKS)
    assert turned_off(" 1 ") == frozenset()


def test_zero_turns_every_trick_off() -> None:
    assert not any(enabled(name, {ENV: "0"}) for name in TRICKS)


def test_a_list_of_names_turns_off_those_and_leaves_the_rest_on() -> None:
    env = {ENV: "-bytecode_cache, -dynamo_deferral"}
    assert not enabled("bytecode_cache", env)
    assert not enabled("dynamo_deferral", env)
    assert all(enabled(name, env) for name in TRICKS if name not in ("bytecode_cache", "dynamo_deferral"))


def test_a_name_that_is_no_trick_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(SettingError, match="no trick named 'bytecode_cach'.*bytecode_cache"):
        turned_off("-bytecode_cach")
    problem = fast_paths.setting_error({ENV: "-dynamo_deferral,-nope"})
    assert problem is not None and "'nope'" in problem and "\n" not in problem


def test_a_name_without_its_minus_is_refused_rather_than_read_as_on() -> None:
    with pytest.raises(SettingError, match="needs a '-'"):
        turned_off("bytecode_cache")
    assert fast_paths.setting_error({ENV: "-bytecode_cache"}) is None


def test_the_benchmark_setting_for_some_tricks_turns_off_exactly_those() -> None:
    assert turned_off(setting_without(["quick_quit", "host_heap"])) == {"quick_quit", "host_heap"}
    assert turned_off(setting_without([])) == frozenset()


def test_asking_for_a_trick_that_does_not_exist_is_a_mistake_in_the_code() -> None:
    with pytest.raises(KeyError):
        enabled("no_such_trick", {})


def test_every_trick_is_asked_for_in_the_code_and_every_name_asked_for_is_a_trick() -> None:
    asked = set()
    for package in ("tui", "probes"):
        for source in (ROOT / package).rglob("*.py"):
            asked |= set(re.findall(r"fast_paths\.enabled\(\s*\"(\w+)\"", source.read_text()))
    assert asked == set(TRICKS)


def test_each_trick_says_which_latency_figures_show_what_it_buys() -> None:
    for name, trick in TRICKS.items():
        assert trick.buys, name
        assert trick.figures and set(trick.figures) <= {"frame", "edit", "quit"}, name


def test_the_app_refuses_a_setting_that_names_no_trick_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.__main__ import main

    monkeypatch.setenv(ENV, "-dynamo_deferal")
    assert main(["profile", "(a + b).relu()", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no trick named 'dynamo_deferal'" in err
