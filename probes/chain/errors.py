"""The error every part of the chain language raises: a module of its own, so that the allow-list
(probes.chain.expr) and the run-time caps (probes.chain.limits) share it without importing each other."""

from __future__ import annotations

import ast

from probes.link.protocol import ChainErrorInfo, ErrorKind
from probes.link.safe_text import inert_line


class ChainError(Exception):
    """A chain that cannot run, with the reason in plain words (``str()`` is ``info.located()``)."""

    def __init__(self, info: ChainErrorInfo) -> None:
        super().__init__(info)  # args=(info,) so the exception pickles back whole
        self.info = info

    def __str__(self) -> str:
        return self.info.located()


def chain_error(kind: ErrorKind, message: str, line: int | None = None, col: int | None = None) -> ChainError:
    """A ChainError whose message is one inert line: it may quote the user's text (a dim, a name)."""
    return ChainError(ChainErrorInfo(kind, inert_line(message), line, col))


class NodeErrors:
    """ChainErrors placed where a node of the chain's AST stands, in the user's characters."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def col(self, line: int, byte_col: int) -> int:
        """1-based character column from the AST's UTF-8 byte offset."""
        return len(self.lines[line - 1].encode()[:byte_col].decode(errors="ignore")) + 1

    def at(self, node: ast.AST | None, kind: ErrorKind, message: str) -> ChainError:
        line = getattr(node, "lineno", None)
        col = None if line is None else self.col(line, getattr(node, "col_offset", 0))
        return chain_error(kind, message, line, col)

    def at_attr(self, node: ast.Attribute, message: str, kind: ErrorKind = "rejected") -> ChainError:
        """An error placed on the attribute's name (identifiers are ASCII by now)."""
        line = node.end_lineno or node.lineno
        col = self.col(line, (node.end_col_offset or 0) - len(node.attr))
        return chain_error(kind, message, line, col)
