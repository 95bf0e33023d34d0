"""The help format of both command lines (``kernel-tui`` and ``kernel-tui profile``).

argparse wraps help at hyphens, which splits the names people type (``max-`` / ``autotune``);
this format wraps between words only, and keeps the description and epilog as written (the
exit-status and command tables). Light: the app's command line builds its parser before it
starts its workers.
"""

from __future__ import annotations

import argparse
import textwrap


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)
