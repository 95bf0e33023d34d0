"""Export actions: the results on screen as JSON (replayable), CSV, a Chrome trace, or the screen as SVG.

Every file is written 0600, atomically (``probes.link.state_files.write_private_file``).
"""

from __future__ import annotations

from pathlib import Path

from tui import presenter
from tui.actions.host import AppHost
from tui.debug_log import log_error


class ExportActions(AppHost):
    last_export: Path | None = None
    """The file the last export wrote."""

    def _export_target(self, suffix: str) -> Path:
        from tui import export  # csv: off start-up

        return export.export_path(self.export_dir, self.workspace.chain.name, suffix)

    def export(self, kind: str) -> Path | None:
        from tui import export  # csv: off start-up

        results = self.session.shown_measurements()
        if not results and kind != "svg":
            self.message("nothing to export yet: no results", "yellow")
            return None
        if kind != "svg" and self.still_timing(results, "export"):  # a screenshot shows "timing…" as it is
            return None
        try:
            if kind == "json":
                ready = self.session.ready
                device = results[0].device
                info = presenter.device_info(self.session, device)
                rep = export.report(
                    results,
                    device=device,
                    device_label=info.label if info else device,
                    torch_version=ready.torch_version if ready else "",
                    peak_gbps=next((m.peak_gbps for m in results if m.peak_gbps), None),
                )
                path = export.write(self._export_target(".json"), export.to_json(rep))
            elif kind == "csv":
                path = export.write(self._export_target(".csv"), export.to_csv(results))
            elif kind == "trace":
                path = export.write_trace(self._export_target(".trace.json"), results)
            else:
                path = export.write(self._export_target(".svg"), self.export_screenshot())
        except OSError as exc:
            log_error(self, f"exporting {kind}", exc)
            self.message(f"export failed: {exc.strerror or exc}", "bold red")
            return None
        self.last_export = path
        self.message(f"saved {path}", "green")
        return path

    def action_export_json(self) -> None:
        self.export("json")

    def action_export_csv(self) -> None:
        self.export("csv")

    def action_export_trace(self) -> None:
        self.export("trace")

    def action_export_svg(self) -> None:
        self.export("svg")
