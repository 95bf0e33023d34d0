"""The allow-list's rules for literals and displays: what a chain may write out in full.

Caps on their size keep a chain's own text from building large Python values before any tensor op.
"""

from __future__ import annotations

import ast

from probes.chain.errors import NodeErrors

MAX_STR = 200
MAX_DISPLAY = 64


class LiteralCheck:
    """Checks constants and list and tuple displays."""

    def __init__(self, errors: NodeErrors) -> None:
        self.errors = errors

    def constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes):
            raise self.errors.at(node, "rejected", "bytes literals are not allowed")
        if isinstance(node.value, str) and len(node.value) > MAX_STR:
            raise self.errors.at(node, "rejected", f"string literals over {MAX_STR} characters are not allowed")

    def display(self, node: ast.Tuple | ast.List) -> None:
        if len(node.elts) > MAX_DISPLAY:
            raise self.errors.at(node, "rejected", f"lists and tuples over {MAX_DISPLAY} elements are not allowed")
