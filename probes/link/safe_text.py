"""Text from outside (a chain, a workspace file, a report, an argument, the worker) made inert
before it reaches a terminal.

A terminal acts on control sequences: ESC ] 52 writes the clipboard, ESC ] 0 sets the window
title, ESC P starts a device control string. Such text is shown, never obeyed: every C0/C1
control character except newline and tab, DEL, and the bidirectional overrides and marks that make
text read differently from how it runs, become visible escapes such as ``\\x1b``.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape."""
    return _UNSAFE.sub(_visible, text)


def inert_line(text: str) -> str:
    """``text`` made inert and kept on one line (newlines and tabs shown as escapes too)."""
    return _UNSAFE_ONE_LINE.sub(_visible, text)
