"""One model for the settings and their limits: the headless command, the app's command line, the
workspace reader and the worker's request check refuse the same values, in the same words."""

from __future__ import annotations

import dataclasses

import pytest

from probes.cli import EXIT_BAD_INPUT, PROFILE_SETTINGS
from probes.cli import main as profile_main
from probes.link import settings
from probes.link.protocol import ProfileRequest
from probes.link.settings import MODES, SettingError, Settings
from tui import workspace as ws


@pytest.mark.parametrize(
    ("field", "value", "flag", "typed", "words"),
    [
        ("reps", 0, "--reps", "0", "reps must be between 1 and 10000"),
        ("reps", 10_001, "--reps", "10001", "reps must be between 1 and 10000"),
        ("modes", ["turbo"], "--modes", "turbo", "unknown mode 'turbo'"),
        ("modes", [], "--modes", ",", "give at least one mode"),
        ("sizes", [0], "--sizes", "0", "not positive"),
        ("sizes", [10**14], "--sizes", "1e14", "absurdly large"),
        ("device", "tpu", "--device", "tpu", "unknown device 'tpu'"),
    ],
)
def test_every_front_end_refuses_the_same_value_in_the_same_words(
    field: str, value: object, flag: str, typed: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    request = ProfileRequest("r", "a + b", **{field: value})
    assert words in (request.invalid() or "")

    assert profile_main(["a + b", flag, typed]) == EXIT_BAD_INPUT
    assert words in capsys.readouterr().err

    if field != "modes":  # a workspace file keeps the app's mode toggle, not a list of modes
        workspace, problems = ws.Workspace.from_data({"settings": {field: value}})
        assert getattr(workspace.settings, field) == getattr(Settings(), field)
        assert any(field.rstrip("s") in problem for problem in problems), problems


@pytest.mark.parametrize("text", ["1e6", "1_000_000", "1M", " 1000000 "])
def test_a_size_reads_the_same_in_every_documented_form(text: str) -> None:
    assert settings.parse_size(text) == 1_000_000


def test_typed_reps_take_auto_or_a_number_within_the_limits() -> None:
    assert settings.parse_reps("auto") is None and settings.parse_reps("") is None
    assert settings.parse_reps("30") == 30
    for bad in ("lots", "0", "10001"):
        with pytest.raises(SettingError, match="reps"):
            settings.parse_reps(bad)


def test_modes_are_checked_once_each_in_the_order_given() -> None:
    assert settings.parse_modes("compiled, eager,compiled") == ["compiled", "eager"]
    assert settings.check_modes(MODES) == list(MODES)


def test_a_request_within_the_limits_is_valid_and_normalised() -> None:
    assert ProfileRequest("r", "a + b", sizes=[8, 10**8], modes=list(MODES), device="cuda:1", reps=5).invalid() is None
    checked = Settings(sizes=(8,), modes=("eager", "eager"), device=" CPU ").checked()
    assert checked.modes == ("eager",) and checked.device == "cpu"


@pytest.mark.parametrize(
    ("modes", "toggle", "compile_mode"),
    [
        (["eager"], "eager", None),
        (["compiled"], "compiled", "compiled"),
        (["eager", "max-autotune"], "both", "max-autotune"),
        (["reduce-overhead", "eager"], "both", "reduce-overhead"),
        (["compiled", "dynamic"], "static+dynamic", "compiled"),
        (["dynamic"], "compiled", "dynamic"),
    ],
)
def test_the_app_shows_the_modes_the_headless_command_names(
    modes: list[str], toggle: str, compile_mode: str | None
) -> None:
    assert ws.modes_toggle(modes) == (toggle, compile_mode)
    assert sorted(ws.toggle_modes(toggle, compile_mode or "compiled")) == sorted(modes)


@pytest.mark.parametrize("modes", [["eager", "compiled", "dynamic"], ["compiled", "max-autotune"]])
def test_modes_the_app_cannot_show_side_by_side_are_refused(modes: list[str]) -> None:
    with pytest.raises(SettingError, match="one or two modes"):
        ws.modes_toggle(modes)


def test_each_settings_flag_is_defined_once_and_parses_into_the_settings_model() -> None:
    """The three commands take their settings flags from one table: the same name, help and
    parser wherever a flag is taken, each setting a field of the one model."""
    from probes.cli import build_parser as profile_parser
    from tui.__main__ import build_demo_parser, build_parser

    fields = {f.name for f in dataclasses.fields(Settings)}
    assert set(settings.FLAGS) <= fields
    for parser in (profile_parser(), build_parser(), build_demo_parser()):
        for action in parser._actions:
            flag = next((f for f in settings.FLAGS.values() if f.name in action.option_strings), None)
            if flag is not None:
                assert action.dest == flag.setting and (action.help or "").startswith(flag.help)
    args = profile_parser().parse_args(["a", "--sizes", "1e3,1M", "--modes", "eager", "--reps", "auto", "--grad"])
    given = settings.flags_given(args, PROFILE_SETTINGS)
    assert Settings().given(given) == Settings(sizes=(1000, 10**6), modes=("eager",), grad=True, focus_size=1000)


def test_a_refused_flag_is_named_in_its_one_line() -> None:
    from probes.cli import build_parser as profile_parser

    args = profile_parser().parse_args(["a", "--dtype", "int8"])
    with pytest.raises(SettingError, match="^--dtype: unknown dtype 'int8'"):
        settings.flags_given(args, PROFILE_SETTINGS)


def test_settings_are_frozen_and_changed_by_replacing_them() -> None:
    s = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.reps = 5  # type: ignore[misc]
    assert s.given({"reps": 5}).reps == 5 and s.reps is None
