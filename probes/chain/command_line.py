"""An op chain typed on one command line, as the lines the chain language reads: the headless
command's and the app's ``CHAIN`` argument and its ``--input`` declarations. Light (``re`` only),
so that the app reads its arguments without importing the headless command."""

from __future__ import annotations

import re

_KEPT = (
    r"'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\""  # triple-quoted strings
    r"|'(?:\\.|[^\\'\n])*'|\"(?:\\.|[^\\\"\n])*\""  # strings
    r"|\#.*?(?=\\n|\n|$)"  # a comment, to its line's end
)
_PIECES = re.compile(f"(?P<kept>{_KEPT})|;[ \t]*|\\\\n", re.DOTALL)
"""A string literal or a comment (kept as it is), else a statement's end: ``;`` and the spaces
after it, or a literal ``\\n``."""


def chain_lines(chain: str) -> str:
    """A chain typed on one line as its lines: ``;`` and a literal ``\\n`` end a line, outside
    string literals and comments (``x: [N, 64]; x * 2`` reads as two lines, the space after ``;``
    is not an indent; ``torch.einsum('ij;j', ...)`` keeps its ``;``)."""
    return _PIECES.sub(lambda match: match["kept"] or "\n", chain)


def chain_text(chain: str, declarations: list[str]) -> str:
    """The chain as the engine reads it: declarations first, then the chain's lines."""
    return "\n".join([*declarations, chain_lines(chain)])
