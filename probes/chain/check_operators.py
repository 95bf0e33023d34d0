"""The allow-list's rules for binary operators on plain Python values.

Python arithmetic could run for hours before any tensor op: powers and shifts of Python values
that are not literals, %-formatting, and repetition of a literal sequence (``'x' * 10 ** 9``).
Tensor arithmetic (``a ** b``, ``a ** N``) is unaffected, and what may be either (a call of
unknown kind) is left to the run-time caps (probes.chain.limits).
"""

from __future__ import annotations

import ast
from typing import cast

from probes.chain.errors import NodeErrors
from probes.chain.kinds import PYTHON_KINDS, Kind, Kinds

MAX_EXPONENT = 64
"""Largest literal exponent or shift on Python numbers: ``10 ** 10 ** 8`` would hang the worker
building a Python integer."""
_GROWING_OPS = (ast.Pow, ast.LShift)
"""Operators whose Python-number result can grow past any memory from small literal operands."""


def _literal_number(node: ast.expr) -> int | float | complex | None:
    """The value of a number literal such as ``3``, ``-2.5`` (else None)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal_number(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, complex):
        return cast("int | float | complex", node.value)
    return None


class OperatorCheck:
    """Checks binary operators by what their operands certainly are (probes.chain.kinds)."""

    def __init__(self, errors: NodeErrors, kind: Kinds) -> None:
        self.errors = errors
        self.kind = kind

    def binop(self, node: ast.BinOp) -> None:
        plain = self.kind(node.left) in PYTHON_KINDS and self.kind(node.right) in PYTHON_KINDS
        if isinstance(node.op, _GROWING_OPS) and plain:
            symbol = "**" if isinstance(node.op, ast.Pow) else "<<"
            for side in (node.left, node.right):
                if _literal_number(side) is None:
                    raise self.errors.at(
                        side,
                        "rejected",
                        f"on Python numbers, both sides of {symbol} must be number literals like 2 {symbol} 10 "
                        "(a computed one could hang the run)",
                    )
            amount = _literal_number(node.right)
            if not isinstance(amount, complex) and abs(amount or 0) > MAX_EXPONENT:
                raise self.errors.at(
                    node.right,
                    "rejected",
                    f"on Python numbers, the right side of {symbol} must be at most {MAX_EXPONENT} "
                    "(a huge Python number would hang the run)",
                )
        if isinstance(node.op, ast.Mod) and self.kind(node.left) is Kind.TEXT:
            raise self.errors.at(node.left, "rejected", "%-formatting of strings is not allowed")
        if isinstance(node.op, ast.Mult):
            for side in (node.left, node.right):
                if isinstance(side, (ast.List, ast.Tuple)) or (
                    isinstance(side, ast.Constant) and isinstance(side.value, str)
                ):
                    raise self.errors.at(side, "rejected", "repeating a list, tuple or string with * is not allowed")
