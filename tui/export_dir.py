"""Where exports go without ``--export-dir``: the current directory, unless that is inside
kernel-tui's own source checkout (``make run`` starts there), where they would pile up among the
sources as untracked files. Light, as the app decides it before its first frame."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from probes.link.state_files import APP_NAME

SOURCE_CHECKOUT = Path(__file__).resolve().parents[1]
"""Where the ``tui`` package lies: a source checkout when a ``pyproject.toml`` sits there (an
installed package lies in site-packages, which has none)."""


def source_checkout() -> Path | None:
    """kernel-tui's source checkout this code runs from, or None for an installed package."""
    return SOURCE_CHECKOUT if (SOURCE_CHECKOUT / "pyproject.toml").is_file() else None


def default_export_dir(cwd: Path | None = None, checkout: Path | None = None) -> Path:
    """Where exports go when ``--export-dir`` is not given: ``cwd`` (the current directory),
    unless it is inside the source checkout (``checkout``, found by ``source_checkout`` by
    default); then the ``exports`` folder of kernel-tui's user data directory
    (``~/.local/share/kernel-tui/exports`` on Linux). Absolute, so saved paths show in full."""
    here = (cwd or Path.cwd()).absolute()
    checkout = checkout or source_checkout()
    if checkout is not None and here.resolve().is_relative_to(checkout.resolve()):
        return platformdirs.user_data_path(APP_NAME) / "exports"
    return here
