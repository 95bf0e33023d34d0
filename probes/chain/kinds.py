"""What each expression of a chain evaluates to, without running it: a tensor, or a Python value.

The allow-list and the run-time caps (probes.chain.limits) both rest on this. An expression is a
tensor only when that is certain: an input, a torch function or tensor method whose every overload
returns one (probes.chain.call_kinds), arithmetic whose operands make it one. Anything else may be a
Python value, and build_function routes its operators and calls through the caps; what is certainly
a Python value also meets the allow-list's rules for plain Python (``**`` and ``<<`` on literals).

A wrong TENSOR, TENSORS, SOME_TENSORS, NUMBER or SHAPE would let a Python value grow unchecked, so
those kinds are given only where every case agrees; TEXT and PYTHON only decide what the allow-list
says early.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Iterable

from probes.chain import call_kinds
from probes.chain.layers import LAYERS


class Kind(enum.Enum):
    TENSOR = "tensor"
    TENSORS = "tensors"
    """A tuple or list of tensors (torch's named tuples too: ``a.sort()``)."""
    SOME_TENSORS = "some tensors"
    """A tensor or a tuple of tensors, by the arguments (``a.max()``, ``a.max(0)``)."""
    NUMBER = "number"
    """A Python int, float, bool or complex."""
    SHAPE = "shape"
    """A tuple or list of Python numbers (``a.shape``, ``a.stride()``)."""
    TEXT = "text"
    PYTHON = "python"
    """Some other Python value (a dtype, None, a tuple of anything): never a tensor."""
    LAYER = "layer"
    """A ``torch.nn`` layer the chain constructs (probes.chain.layers): only ever called."""
    UNKNOWN = "unknown"


SAFETY_CLAIMS = frozenset({Kind.TENSOR, Kind.TENSORS, Kind.SOME_TENSORS, Kind.NUMBER, Kind.SHAPE})
"""The kinds that leave an operator or a call unchecked (directly, or through an item or a field)."""
PYTHON_KINDS = frozenset({Kind.TENSORS, Kind.NUMBER, Kind.SHAPE, Kind.TEXT, Kind.PYTHON})
"""Certainly not a tensor."""
_TENSORISH = frozenset({Kind.TENSOR, Kind.TENSORS, Kind.SOME_TENSORS})
_ITEM: dict[Kind, Kind] = {
    Kind.TENSORS: Kind.TENSOR,
    Kind.SOME_TENSORS: Kind.TENSOR,
    Kind.SHAPE: Kind.NUMBER,
    Kind.TEXT: Kind.TEXT,
}
"""What one item of a sequence is (for a tensor, a row: a tensor)."""

TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "grad", "data"})
"""Attributes of a tensor that are tensors (``a.shape``, ``a.dtype``... are Python values)."""
PYTHON_ATTRIBUTES: dict[str, Kind] = {
    "shape": Kind.SHAPE,
    **dict.fromkeys(
        (
            "ndim",
            "itemsize",
            "nbytes",
            "requires_grad",
            "is_leaf",
            "is_cuda",
            "is_sparse",
            "is_quantized",
            "is_meta",
        ),
        Kind.NUMBER,
    ),
    **dict.fromkeys(("dtype", "device", "layout", "grad_fn", "names"), Kind.PYTHON),
}
"""Attributes of a tensor that are Python values."""
RETURN_TYPE_FIELDS = frozenset(
    {
        "L",
        "LD",
        "LU",
        "P",
        "Q",
        "R",
        "S",
        "U",
        "V",
        "Vh",
        "a",
        "bin_edges",
        "cloned_coefficient",
        "eigenvalues",
        "eigenvectors",
        "exponent",
        "hist",
        "indices",
        "info",
        "inverse",
        "logabsdet",
        "logsumexp",
        "mantissa",
        "max",
        "min",
        "output",
        "pivots",
        "rank",
        "residuals",
        "result",
        "sign",
        "singular_values",
        "solution",
        "tau",
        "values",
    }
)
"""Fields of the named tuples torch ops return (``torch.return_types``): ``a.max(0).values``. On a
tensor, the same names are methods, which no operator or call of a chain can grow."""
_TORCH_NUMBERS = frozenset({"inf", "nan", "pi", "e"})
_BY_DIM = frozenset({"size", "stride"})
"""Tensor methods that return a shape, or one number of it when given a dim."""
_TABLES: dict[tuple[str, ...], str] = {
    ("torch",): "TORCH",
    ("F",): "FUNCTIONAL",
    ("torch", "nn", "functional"): "FUNCTIONAL",
    ("nn", "functional"): "FUNCTIONAL",
    ("torch", "linalg"): "LINALG",
    ("torch", "fft"): "FFT",
    ("torch", "special"): "SPECIAL",
}


def _table(name: str) -> dict[str, Kind]:
    groups: dict[str, str] = getattr(call_kinds, name)
    return {function: Kind(kind) for kind, names in groups.items() for function in names.split()}


_CALLS: dict[str, dict[str, Kind]] = {name: _table(name) for name in {*_TABLES.values(), "TENSOR_METHODS"}}


def join(kinds: Iterable[Kind]) -> Kind:
    """The kind of a value that is one of ``kinds``."""
    found = set(kinds)
    if len(found) == 1:
        return found.pop()
    if found and found <= _TENSORISH:
        return Kind.SOME_TENSORS
    if found and found <= PYTHON_KINDS:
        return Kind.PYTHON
    return Kind.UNKNOWN


def _binop_kind(op: ast.operator, left: Kind, right: Kind) -> Kind:
    if Kind.TENSOR in (left, right):
        other = right if left is Kind.TENSOR else left
        if other in (Kind.TENSOR, Kind.NUMBER):
            return Kind.TENSOR
        if isinstance(op, ast.Mult):
            return Kind.UNKNOWN  # a sequence repeated by an integer tensor is that sequence
        if isinstance(op, ast.Mod) and left is not Kind.TENSOR:
            return Kind.UNKNOWN  # a string formatted with a tensor is a string
        return Kind.TENSOR  # any other operator of a tensor makes a tensor or raises
    if left is Kind.NUMBER and right is Kind.NUMBER:
        return Kind.NUMBER
    if left in PYTHON_KINDS and right in PYTHON_KINDS:
        if isinstance(op, ast.Add) and left is right:
            return left
        if isinstance(op, ast.Mult) and Kind.NUMBER in (left, right):
            return right if left is Kind.NUMBER else left
        return Kind.PYTHON
    return Kind.UNKNOWN


def _compare_kind(left: Kind, op: ast.cmpop, right: Kind) -> Kind:
    if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return Kind.NUMBER
    if Kind.TENSOR in (left, right) and {left, right} <= {Kind.TENSOR, Kind.NUMBER}:
        return Kind.TENSOR
    if left in PYTHON_KINDS and right in PYTHON_KINDS:
        return Kind.NUMBER
    return Kind.UNKNOWN  # a tensor against a sequence or None is a plain bool


LAYER_PATHS = frozenset({("nn",), ("torch", "nn")})
"""Where a chain reaches the layers it may construct: ``nn.Linear``, ``torch.nn.Linear``."""


def _dotted(node: ast.expr) -> tuple[str, ...] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return (node.id, *reversed(parts))


def constructed_layer(func: ast.expr) -> str | None:
    """The layer class a call of ``func`` constructs (``nn.Linear`` -> ``Linear``), or None."""
    if isinstance(func, ast.Attribute) and func.attr in LAYERS and _dotted(func.value) in LAYER_PATHS:
        return func.attr
    return None


class Kinds:
    """The kind of each expression, given the kind of each name as it stands at that statement.

    Kinds are remembered per node: a statement's nodes are asked while its names mean what they
    mean there (a later ``x = ...`` changes what ``x`` is, not what it was)."""

    def __init__(self, name_kind: Callable[[str], Kind]) -> None:
        self._name_kind = name_kind
        self._known: dict[int, Kind] = {}

    def __call__(self, node: ast.AST) -> Kind:
        key = id(node)
        if key not in self._known:
            self._known[key] = self._kind(node)
        return self._known[key]

    def _kind(self, node: ast.AST) -> Kind:
        if isinstance(node, ast.Name):
            return self._name_kind(node.id)
        if isinstance(node, ast.Constant):
            return self._constant(node.value)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = {self(item) for item in node.elts}
            return Kind.TENSORS if items == {Kind.TENSOR} else Kind.SHAPE if items <= {Kind.NUMBER} else Kind.PYTHON
        if isinstance(node, ast.BinOp):
            return _binop_kind(node.op, self(node.left), self(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self(node.operand)
            if isinstance(node.op, ast.Not):
                return Kind.NUMBER
            return operand if operand in (Kind.TENSOR, Kind.NUMBER) else Kind.UNKNOWN
        if isinstance(node, ast.BoolOp):
            return join(map(self, node.values))
        if isinstance(node, ast.IfExp):
            return join([self(node.body), self(node.orelse)])
        if isinstance(node, ast.Compare):
            sides = [self(side) for side in (node.left, *node.comparators)]
            return join(_compare_kind(sides[i], op, sides[i + 1]) for i, op in enumerate(node.ops))
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        return Kind.UNKNOWN

    @staticmethod
    def _constant(value: object) -> Kind:
        if type(value) in (bool, int, float, complex):
            return Kind.NUMBER
        return Kind.TEXT if isinstance(value, str) else Kind.PYTHON

    def _subscript(self, node: ast.Subscript) -> Kind:
        value = self(node.value)
        if value is Kind.TENSOR:
            return Kind.TENSOR
        if value not in _ITEM:
            return Kind.UNKNOWN
        if isinstance(node.slice, ast.Slice):
            return value
        index = self(node.slice)
        if index in (Kind.NUMBER, Kind.TENSOR):  # a tensor index goes through __index__
            return _ITEM[value]
        return join([_ITEM[value], value])  # an item, or a slice given as a value

    def _attribute(self, node: ast.Attribute) -> Kind:
        value = self(node.value)
        if value is Kind.TENSOR:
            if node.attr in TENSOR_ATTRIBUTES:
                return Kind.TENSOR
            return PYTHON_ATTRIBUTES.get(node.attr, Kind.UNKNOWN)
        if value in (Kind.TENSORS, Kind.SOME_TENSORS) and node.attr in RETURN_TYPE_FIELDS:
            return Kind.TENSOR
        if isinstance(node.value, ast.Name) and node.value.id == "torch":
            return Kind.NUMBER if node.attr in _TORCH_NUMBERS else Kind.PYTHON  # a dtype, a layout...
        return Kind.UNKNOWN

    def _call(self, node: ast.Call) -> Kind:
        func = node.func
        if constructed_layer(func) is not None:
            return Kind.LAYER
        if isinstance(func, (ast.Name, ast.Call)) and self(func) is Kind.LAYER:
            return Kind.TENSOR  # every allowed layer returns one tensor
        if isinstance(func, ast.Name):
            return self._builtin(func.id, node)
        if not isinstance(func, ast.Attribute):
            return Kind.UNKNOWN
        path = _dotted(func.value)
        if path in _TABLES:
            kind = _CALLS[_TABLES[path]].get(func.attr, Kind.UNKNOWN)
            args = node.args[1:]  # after the input
        elif self(func.value) is Kind.TENSOR:
            kind = _CALLS["TENSOR_METHODS"].get(func.attr, Kind.UNKNOWN)
            args = node.args
            if func.attr in _BY_DIM:
                return self._by_dim(node)
        else:
            return Kind.UNKNOWN
        if kind is Kind.SOME_TENSORS:
            return self._some_tensors(func.attr, args, {k.arg: k.value for k in node.keywords if k.arg}) or kind
        return kind

    def _by_dim(self, node: ast.Call) -> Kind:
        dims = [*node.args, *(keyword.value for keyword in node.keywords if keyword.arg == "dim")]
        if not dims:
            return Kind.SHAPE
        return Kind.NUMBER if len(dims) == 1 and self(dims[0]) is Kind.NUMBER else Kind.PYTHON

    def _some_tensors(self, name: str, args: list[ast.expr], keywords: dict[str, ast.expr]) -> Kind | None:
        """Which of a tensor or a tuple of tensors the common ops of both kinds return, by their
        arguments after the input: ``torch.where(c)`` or ``torch.where(c, a, b)``, ``a.max()`` or
        ``a.max(0)`` (None when the arguments do not tell)."""
        if name == "nonzero":
            flag = keywords.get("as_tuple")
            if flag is None or (isinstance(flag, ast.Constant) and flag.value is False):
                return Kind.TENSOR
            return Kind.TENSORS if isinstance(flag, ast.Constant) and flag.value is True else None
        if name == "where":
            if args or keywords.keys() & {"input", "self", "other"}:
                return Kind.TENSOR
            return Kind.TENSORS if keywords.keys() <= {"condition"} else None
        if name not in ("max", "min", "median", "nanmedian"):
            return None
        if not args and not keywords.keys() - {"input", "out"}:
            return Kind.TENSOR
        first = self(args[0]) if args else None
        if first is Kind.NUMBER or "dim" in keywords:
            return Kind.TENSORS
        return Kind.TENSOR if first is Kind.TENSOR or "other" in keywords else None

    def _builtin(self, name: str, node: ast.Call) -> Kind:
        args = [self(arg) for arg in node.args]
        if name in ("len", "int", "float", "bool"):
            return Kind.NUMBER
        if name == "slice":
            return Kind.PYTHON
        if name in ("abs", "round") and args:
            return args[0] if args[0] in (Kind.TENSOR, Kind.NUMBER) else Kind.UNKNOWN
        if name in ("min", "max") and node.keywords:
            return Kind.UNKNOWN  # default= may be anything
        if name in ("min", "max") and len(args) == 1:
            return Kind.TENSOR if args[0] is Kind.TENSOR else _ITEM.get(args[0], Kind.UNKNOWN)
        if name in ("min", "max") and args:
            kind = join(args)
            return kind if kind in (Kind.TENSOR, Kind.NUMBER) else Kind.UNKNOWN
        return Kind.UNKNOWN
