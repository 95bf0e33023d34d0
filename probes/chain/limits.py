"""Caps on the plain Python values a chain builds: integers, strings and sequences.

The allow-list (probes.chain.expr) refuses by syntax what is plainly a hang (``10 ** 10 ** 8``,
``'x' * 10 ** 9``); what syntax cannot see is checked here while the chain runs: a power of a name
that holds ``10 ** 9``, a shape repeated a billion times, ``int(1).to_bytes(10 ** 10)``, a string
doubled over thirty lines. ``build_function`` routes every operator and call of a chain that is not
certainly a tensor op through ``binop`` and ``call``, which refuse (``ChainError``) before building
a value over the caps, and check what they built. Tensor ops never come here, so the code that is
measured is unchanged; and the memory guard's meta trace meets any refusal before anything is
allocated on the device.
"""

from __future__ import annotations

import ast
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

from probes.chain.errors import ChainError
from probes.link.protocol import ChainErrorInfo


def _compiling() -> bool:
    """Whether torch.compile is tracing the chain. torch is looked up, not imported: this package
    stays torch-free for the app, and a chain only runs where torch is loaded."""
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.compiler.is_compiling())


MAX_INT_BITS = 10_000
"""Largest Python integer a chain may build (about 3,000 digits: any operation on it takes microseconds)."""
MAX_ITEMS = 4_096
"""Longest string, tuple or list a chain may build, and the largest count or width a method of a
Python value may be given (``'x'.ljust(n)``, ``(1).to_bytes(n)``)."""

_SIZED = (str, bytes, bytearray, tuple, list)
_TEXT = (str, bytes, bytearray)
_PYTHON_VALUES = (*_SIZED, int, float, complex)
_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "*": operator.mul,
    "**": operator.pow,
    "<<": operator.lshift,
    "%": operator.mod,
}
_GUARDED: dict[type, str] = {ast.Add: "+", ast.Mult: "*", ast.Pow: "**", ast.LShift: "<<", ast.Mod: "%"}
_WHY = "plain Python that large could hang the run"


def _refuse(message: str) -> ChainError:
    """A refusal placed on the chain's line and column that asked for it: the position of the
    guarded operator or call, which the chain's code keeps from the user's text."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != "<chain>":
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return ChainError(ChainErrorInfo("rejected", message))
    line, _, byte_col, _ = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    lines = frame.f_globals.get(LINES, [])
    col = None
    if line is not None and byte_col is not None and 0 < line <= len(lines):
        col = len(lines[line - 1].encode()[:byte_col].decode(errors="ignore")) + 1
    return ChainError(ChainErrorInfo("rejected", message, line or frame.f_lineno, col))


def _is_int(value: object) -> bool:
    return type(value) in (int, bool)


def _count(value: Any) -> int | None:
    """How many times ``value`` repeats a sequence: an int, or what ``__index__`` makes of it (an
    integer tensor of one element), else None (the repetition then fails by itself)."""
    if _is_int(value):
        return int(value)
    if isinstance(value, (float, complex, *_SIZED)) or not hasattr(type(value), "__index__"):
        return None
    try:
        return operator.index(value)
    except Exception:
        return None


def _items(value: object, budget: int) -> int:
    """The items of ``value`` and of the lists and tuples inside it, counted up to ``budget`` + 1:
    what comparing or walking it costs (``(t,) * 4096`` holds 4096 times the items of ``t``)."""
    total = 0
    stack = [value]
    while stack and total <= budget:
        item = stack.pop()
        if isinstance(item, _SIZED):
            total += len(item)
            if isinstance(item, (tuple, list)):
                stack.extend(child for child in item if isinstance(child, (tuple, list)))
    return total


def _checked(value: Any) -> Any:
    """``value``, unless it is a Python integer or sequence over the caps."""
    if _is_int(value) and value.bit_length() > MAX_INT_BITS:
        raise _refuse(f"the chain builds a Python integer of over {MAX_INT_BITS:,} bits ({_WHY})")
    if isinstance(value, _SIZED) and _items(value, MAX_ITEMS) > MAX_ITEMS:
        raise _refuse(f"the chain builds a Python {type(value).__name__} of over {MAX_ITEMS:,} items ({_WHY})")
    return value


def _check_binop(op: str, left: Any, right: Any) -> None:
    """Refuse before computing what would be over the caps (computing it could take hours)."""
    if op == "%" and isinstance(left, _TEXT):
        raise _refuse("%-formatting of strings is not allowed")
    if op == "*":
        for sequence, times in ((left, right), (right, left)):
            count = _count(times) if isinstance(sequence, _SIZED) else None
            if count is not None and _items(sequence, MAX_ITEMS) * count > MAX_ITEMS:
                what = type(sequence).__name__
                raise _refuse(f"repeating a {what} {count:,} times is over {MAX_ITEMS:,} items ({_WHY})")
    if op == "+" and isinstance(left, _SIZED) and isinstance(right, _SIZED):
        if _items(left, MAX_ITEMS) + _items(right, MAX_ITEMS) > MAX_ITEMS:
            what = type(left).__name__
            raise _refuse(f"+ here would build a Python {what} of over {MAX_ITEMS:,} items ({_WHY})")
    both_ints = _is_int(left) and _is_int(right)
    if both_ints and op == "*":
        bits = left.bit_length() + right.bit_length()
    elif both_ints and op == "**" and right > 0 and abs(left) > 1:
        bits = left.bit_length() * right
    elif both_ints and op == "<<" and left != 0:
        bits = left.bit_length() + right
    else:
        bits = 0
    if bits > MAX_INT_BITS:
        raise _refuse(f"{op} here would build a Python integer of over {MAX_INT_BITS:,} bits ({_WHY})")


def binop(op: str, left: Any, right: Any) -> Any:
    """``left <op> right`` for a chain, within the caps.

    Not checked while torch.compile traces the chain: the memory guard's meta run has run the same
    Python through these checks already, and under ``dynamic=True`` sizes are symbolic, which the
    checks cannot read (torch.compile would fall back to eager)."""
    if _compiling():
        return _OPERATORS[op](left, right)
    _check_binop(op, left, right)
    return _checked(_OPERATORS[op](left, right))


def call(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` for a chain, within the caps (not checked while torch.compile
    traces the chain: see binop)."""
    if _compiling():
        return func(*args, **kwargs)
    if func is min or func is max:
        if len(args) == 1 and not isinstance(args[0], _SIZED):
            name = func.__name__
            raise _refuse(f"{name}() of one value walks it item by item in Python: use torch.{name}(x) or x.{name}()")
    elif func is round and (len(args) > 1 or kwargs):
        raise _refuse("round(x, ndigits) is not allowed: use torch.round(x, decimals=n)")
    elif isinstance(func, types.BuiltinMethodType) and isinstance(func.__self__, _PYTHON_VALUES):
        for value in (*args, *kwargs.values()):
            if _is_int(value) and abs(value) > MAX_ITEMS:
                owner = type(func.__self__).__name__
                raise _refuse(f"{owner}.{func.__name__}() is given {value:,}: over {MAX_ITEMS:,} ({_WHY})")
    return _checked(func(*args, **kwargs))


LINES = "_kt_lines"
"""The global that holds the chain's lines, so that a refusal can give its column in characters."""


def guard_globals(lines: list[str]) -> dict[str, object]:
    """What guard_python's rewritten code of a chain of ``lines`` needs among its globals, by the
    names it uses (a chain cannot name them: the allow-list refuses names that start with ``_``)."""
    return {"_kt_binop": binop, "_kt_call": call, LINES: lines}


class _Guard(ast.NodeTransformer):
    def __init__(self, is_tensor: Callable[[ast.AST], bool]) -> None:
        self.is_tensor = is_tensor

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        plain = type(node.op) in _GUARDED and not self.is_tensor(node)  # decided before the children change
        self.generic_visit(node)
        if not plain:
            return node
        args: list[ast.expr] = [ast.Constant(_GUARDED[type(node.op)]), node.left, node.right]
        return ast.copy_location(ast.Call(ast.Name("_kt_binop", ast.Load()), args, []), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        plain = not self.is_tensor(node)
        self.generic_visit(node)
        if not plain:
            return node
        return ast.copy_location(
            ast.Call(ast.Name("_kt_call", ast.Load()), [node.func, *node.args], node.keywords), node
        )


def guard_python(module: ast.Module, is_tensor: Callable[[ast.AST], bool]) -> ast.Module:
    """``module`` (a validated chain) with every operator and call that ``is_tensor`` does not
    vouch for routed through ``binop`` / ``call``."""
    result = _Guard(is_tensor).visit(module)
    assert isinstance(result, ast.Module)
    return result
