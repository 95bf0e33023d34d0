"""The main screen's exports: the results on screen as JSON (replayable), CSV, a Chrome trace, or
the screen as SVG.

Every file is written 0600, atomically (``probes.link.state_files.write_private_file``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui import presenter
from tui.debug_log import log_error
from tui.screens.pins import still_timing

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


def export(screen: MainScreen, kind: str) -> Path | None:
    """Write the ``kind`` of export next to the others (``export_dir``); say where, or why not."""
    from tui import export as files  # csv: off start-up

    live = screen.live
    session = live.session
    results = session.shown_measurements()
    if not results and kind != "svg":
        screen.message("nothing to export yet: no results", "yellow")
        return None
    if kind != "svg" and still_timing(screen, results, "export"):  # a screenshot shows "timing…" as it is
        return None
    try:
        target = files.export_path(live.export_dir, live.workspace.chain.name, SUFFIXES[kind])
        if kind == "json":
            ready = session.ready
            device = results[0].device
            info = presenter.device_info(session, device)
            rep = files.report(
                results,
                device=device,
                device_label=info.label if info else device,
                torch_version=ready.torch_version if ready else "",
                peak_gbps=next((m.peak_gbps for m in results if m.peak_gbps), None),
            )
            path = files.write(target, files.to_json(rep))
        elif kind == "csv":
            path = files.write(target, files.to_csv(results))
        elif kind == "trace":
            path = files.write_trace(target, results)
        else:
            path = files.write(target, live.export_screenshot())
    except OSError as exc:
        log_error(live, f"exporting {kind}", exc)
        screen.message(f"export failed: {exc.strerror or exc}", "bold red")
        return None
    screen.last_export = path
    screen.message(f"saved {path}", "green")
    return path


SUFFIXES = {"json": ".json", "csv": ".csv", "trace": ".trace.json", "svg": ".svg"}
