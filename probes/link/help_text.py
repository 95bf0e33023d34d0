"""The parser of both command lines (``kernel-tui`` and ``kernel-tui profile``): its help format,
and every message it prints made inert.

argparse wraps help at hyphens, which splits the names people type (``max-`` / ``autotune``);
this format wraps between words only, and keeps the description and epilog as written (the
exit-status and command tables). argparse echoes what was typed (``unrecognized arguments: ...``,
``invalid choice: ...``), so its usage, help and error text goes through the terminal sanitiser like
all other outside text. Light: the app's command line builds its parser before it starts its
workers.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING

from probes.link.safe_text import inert

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class SafeParser(argparse.ArgumentParser):
    """argparse whose usage, help and errors reach the terminal inert (argparse prints them all
    through ``_print_message``)."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        super()._print_message(inert(message), file)
