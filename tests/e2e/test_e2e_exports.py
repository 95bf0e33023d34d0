"""Exports go where the user asked, or to a default outside the source checkout: started from the
checkout (as ``make run`` starts it), an export lands in the user data directory's exports folder
and the checkout gains no file; with ``--export-dir`` it lands there."""

from __future__ import annotations

import time
from pathlib import Path

from app_terminal import REPLAY_S, ROOT, SCREEN_S, AppTerminal, replay_args, status_text


def untracked_in_checkout() -> set[str]:
    return {p.name for p in ROOT.iterdir() if p.name.startswith("kernel-tui_")}


def export_json(app: AppTerminal, folder: Path) -> Path:
    """Press J once the rows are in: the file written, whose full path the status bar shows."""
    app.wait_for(lambda s: "profile done" in status_text(s), timeout=REPLAY_S, what="the rows")
    app.press("Escape")
    app.wait_for_focus("kernels")
    app.press("J")
    deadline = time.monotonic() + SCREEN_S
    while not (found := sorted(folder.glob("kernel-tui_*.json"))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found, f"no export in {folder}; the screen:\n{app.screen()}"
    said = app.wait_for(lambda s: "saved" in status_text(s), timeout=SCREEN_S, what="the saved notice")
    assert "".join(str(found[0]).split()) in "".join(status_text(said).split()), status_text(said)
    return found[0]


def test_an_export_from_the_checkout_goes_to_the_user_data_folder(tmp_path: Path) -> None:
    before = untracked_in_checkout()
    data = tmp_path / "data"
    with AppTerminal(tmp_path, replay_args(), env={"XDG_DATA_HOME": str(data)}) as app:
        export_json(app, data / "kernel-tui" / "exports")
    assert untracked_in_checkout() == before


def test_an_export_goes_to_the_folder_given(tmp_path: Path) -> None:
    folder = tmp_path / "my exports"
    with AppTerminal(tmp_path, [*replay_args(), "--export-dir", str(folder)]) as app:
        export_json(app, folder)
