"""Files kernel-tui writes (state, exports, caches): user-only, atomic, never through a symlink."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from probes.link import state_files
from probes.link.state_files import user_cache_dir, user_state_dir, write_private_file


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def open_umask():
    """Umask 0, so a mode that is right only thanks to the usual 022 umask shows up."""
    old = os.umask(0)
    yield
    os.umask(old)


# -- write_private_file ------------------------------------------------------------------------


def test_new_file_is_0600_and_the_dirs_it_creates_are_0700(tmp_path: Path, open_umask: None) -> None:
    target = tmp_path / "exports" / "deep" / "result.json"
    write_private_file(target, '{"x": 1}\n')
    assert target.read_text() == '{"x": 1}\n'
    assert mode(target) == 0o600
    assert mode(tmp_path / "exports") == 0o700
    assert mode(tmp_path / "exports" / "deep") == 0o700


def test_an_existing_directory_the_user_chose_keeps_its_mode(tmp_path: Path) -> None:
    # Exports may go to a directory the user picked (~/Documents): we do not chmod it.
    tmp_path.chmod(0o755)
    write_private_file(tmp_path / "export.csv", "a,b\n")
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / "export.csv") == 0o600


def test_overwriting_a_readable_file_makes_it_0600(tmp_path: Path, open_umask: None) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    target.chmod(0o644)
    write_private_file(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o600


def test_non_ascii_text_round_trips(tmp_path: Path) -> None:
    target = tmp_path / "workspace.json"
    write_private_file(target, "ｔｏｒｃｈ µs 日本語 🙂")
    assert target.read_text(encoding="utf-8") == "ｔｏｒｃｈ µs 日本語 🙂"


def _leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


def test_a_write_that_fails_midway_leaves_the_old_content(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    write_private_file(target, "old content")
    # A lone surrogate cannot be encoded: the write itself raises, part-way through the text.
    with pytest.raises(UnicodeEncodeError):
        write_private_file(target, "new content that breaks here \udcff and never ends")
    assert target.read_text() == "old content"
    assert _leftovers(tmp_path, {"state.json"}) == [], "the temp file was not cleaned up"


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_crash_before_the_rename_leaves_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "state.json"
    write_private_file(target, "old content")

    def boom(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # not even an Exception: the cleanup must still run

    monkeypatch.setattr(state_files.os, failing, boom)
    with pytest.raises(KeyboardInterrupt):
        write_private_file(target, "new content")
    monkeypatch.undo()
    assert target.read_text() == "old content"
    assert _leftovers(tmp_path, {"state.json"}) == []


def test_a_symlink_planted_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious")
    victim.chmod(0o644)
    home = tmp_path / "home"
    home.mkdir()
    target = home / "state.json"
    target.symlink_to(victim)

    write_private_file(target, "ours")

    assert victim.read_text() == "precious" and mode(victim) == 0o644
    assert not target.is_symlink() and stat.S_ISREG(os.lstat(target).st_mode)
    assert target.read_text() == "ours" and mode(target) == 0o600


def test_a_dangling_symlink_at_the_target_creates_nothing_at_its_destination(tmp_path: Path) -> None:
    destination = tmp_path / "elsewhere" / "created-by-attacker-wish"
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "cache.json"
    target.symlink_to(destination)
    write_private_file(target, "ours")
    assert not destination.exists()
    assert not target.is_symlink() and target.read_text() == "ours"


# -- user_cache_dir / user_state_dir -----------------------------------------------------------

DIRS = [("KERNEL_TUI_CACHE_DIR", user_cache_dir), ("KERNEL_TUI_STATE_DIR", user_state_dir)]
DIR_IDS = ["cache", "state"]


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_dir_honours_its_variable_and_is_0700(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_umask: None, variable: str, function
) -> None:
    wanted = tmp_path / "not" / "yet" / "there"
    monkeypatch.setenv(variable, str(wanted))
    assert function() == wanted
    assert wanted.is_dir() and mode(wanted) == 0o700
    # The parents it had to create are private too, so nobody else can swap the directory.
    assert mode(tmp_path / "not") == 0o700 and mode(tmp_path / "not" / "yet") == 0o700


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_an_existing_dir_is_made_0700(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function) -> None:
    wanted = tmp_path / "mine"
    wanted.mkdir(mode=0o755)
    wanted.chmod(0o755)
    monkeypatch.setenv(variable, str(wanted))
    function()
    assert mode(wanted) == 0o700


ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_a_symlinked_dir_the_user_owns_is_followed_and_keeps_its_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function
) -> None:
    real = tmp_path / "dotfiles" / "kernel-tui"
    real.mkdir(parents=True)
    real.chmod(0o755)
    link = tmp_path / "kernel-tui"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.setenv(variable, str(link))
    write_private_file(function() / "workspace.json", "{}")
    assert (real / "workspace.json").read_text() == "{}"
    assert link.is_symlink() and mode(real) == 0o755, "the user's own folder keeps its link and its mode"


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_a_symlink_to_a_dir_others_can_write_is_refused_and_the_dir_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    link = tmp_path / "kernel-tui"
    link.symlink_to(shared, target_is_directory=True)
    monkeypatch.setenv(variable, str(link))
    with pytest.raises(state_files.UnusableDir, match=f"{shared} can be written by other users"):
        function()
    assert mode(shared) == 0o777 and list(shared.iterdir()) == []


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_a_dangling_symlinked_dir_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function
) -> None:
    link = tmp_path / "kernel-tui"
    link.symlink_to(tmp_path / "to-be-created", target_is_directory=True)
    monkeypatch.setenv(variable, str(link))
    with pytest.raises(OSError, match="symbolic link that leads to no directory"):
        function()
    assert not (tmp_path / "to-be-created").exists()


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_a_file_in_place_of_the_dir_is_refused_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function
) -> None:
    squatter = tmp_path / "kernel-tui"
    squatter.write_text("not a directory")
    monkeypatch.setenv(variable, str(squatter))
    with pytest.raises(OSError, match=str(squatter)):
        function()


@pytest.mark.parametrize(("xdg", "function"), [("XDG_CACHE_HOME", user_cache_dir), ("XDG_STATE_HOME", user_state_dir)])
def test_a_dir_under_a_regular_file_is_one_line_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: str, function
) -> None:
    monkeypatch.delenv("KERNEL_TUI_CACHE_DIR", raising=False)
    monkeypatch.delenv("KERNEL_TUI_STATE_DIR", raising=False)
    regular = tmp_path / "file"
    regular.write_text("")
    monkeypatch.setenv(xdg, f"{regular}/sub")
    with pytest.raises(state_files.UnusableDir) as refused:
        function()
    assert f"(from {xdg}={regular}/sub)" in str(refused.value)
    assert str(refused.value).endswith(f"{regular} is not a directory") and "\n" not in str(refused.value)


@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_terminal_escapes_in_the_variable_are_shown_inert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function
) -> None:
    regular = tmp_path / "file"
    regular.write_text("")
    monkeypatch.setenv(variable, f"{regular}/\x1b]0;owned\x07")
    with pytest.raises(state_files.UnusableDir) as refused:
        function()
    assert "\x1b" not in str(refused.value) and "\\x1b]0;owned\\x07" in str(refused.value)


@pytest.mark.skipif(not ROOT, reason="needs root to chown to another user")
@pytest.mark.parametrize("linked", [False, True], ids=["in-place", "through-a-link"])
@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_a_dir_owned_by_another_user_is_refused_and_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function, linked: bool
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    theirs.chmod(0o755)
    os.chown(theirs, NOBODY, NOBODY)
    link = tmp_path / "kernel-tui"
    link.symlink_to(theirs, target_is_directory=True)
    monkeypatch.setenv(variable, str(link if linked else theirs))
    with pytest.raises(state_files.UnusableDir, match=f"{theirs} belongs to another user"):
        function()
    assert mode(theirs) == 0o755


@pytest.mark.skipif(not ROOT, reason="needs root to chown to another user")
@pytest.mark.parametrize(("variable", "function"), DIRS, ids=DIR_IDS)
def test_a_symlink_another_user_made_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, function
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    link = tmp_path / "kernel-tui"
    link.symlink_to(mine, target_is_directory=True)
    os.lchown(link, NOBODY, NOBODY)
    monkeypatch.setenv(variable, str(link))
    with pytest.raises(state_files.UnusableDir, match="symbolic link that belongs to another user"):
        function()


def test_default_dirs_follow_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNEL_TUI_CACHE_DIR", raising=False)
    monkeypatch.delenv("KERNEL_TUI_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    cache, state = user_cache_dir(), user_state_dir()
    assert cache == tmp_path / "xdg-cache" / "kernel-tui" and mode(cache) == 0o700
    assert state == tmp_path / "xdg-state" / "kernel-tui" and mode(state) == 0o700


def test_files_written_into_the_state_dir_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_TUI_STATE_DIR", str(tmp_path / "state"))
    target = user_state_dir() / "workspace.json"
    write_private_file(target, "{}")
    assert mode(target) == 0o600 and mode(target.parent) == 0o700
