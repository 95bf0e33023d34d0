"""End-to-end tests: the real program in a real terminal (tmux). Skipped where tmux is missing
(``.ci/run`` installs it for CI)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from terminal import tmux_available

collect_ignore_glob: list[str] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if tmux_available():
        return
    skip = pytest.mark.skip(reason="tmux is not installed")
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(skip)
