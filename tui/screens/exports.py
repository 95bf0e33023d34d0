"""The main screen's exports: the results on screen as JSON (replayable), CSV, a Chrome trace, or
the screen as SVG.

Every file is written 0600, atomically (``probes.link.state_files.write_private_file``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from probes.link.protocol import DeviceIdentity, Measurement
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
    results = measured_on_every_device(screen)
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
                host=results[0].host,
                driver=info.driver if info else None,
            )
            if live.fleet.several:
                rep = dataclasses.replace(rep, devices=identities(screen))
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


def measured_on_every_device(screen: MainScreen) -> list[Measurement]:
    """What is on screen for each device entry (``--device`` lists several), each measurement
    naming the ``--host`` box that measured it: an export holds every device's rows, not only the
    device the panes follow."""
    session = screen.live.session
    return [
        dataclasses.replace(m, host=entry.host) if entry.host is not None else m
        for index, entry in enumerate(screen.live.fleet.entries)
        for m in session.shown_measurements(index)
    ]


def identities(screen: MainScreen) -> list[DeviceIdentity]:
    """Each device entry with results on screen, as its worker names it (``ProfileReport.devices``)."""
    live = screen.live
    found = []
    for index, (entry, bridge) in enumerate(zip(live.fleet.entries, live.fleet.bridges, strict=True)):
        ready = bridge.workers.ready
        shown = live.session.shown_measurements(index)
        if ready is not None and shown:
            found.append(DeviceIdentity.of(entry.host, shown[0].device, ready))
    return found
