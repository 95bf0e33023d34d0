"""Parse and validate an op chain: input declarations, then an AST allow-list.

The chain is code the user types, so nothing runs before it passes here. The checks are an
allow-list of syntax, names and torch paths (anything else is refused, naming the construct and
where it is); only attribute names, which are open-ended, also get a denylist (dunders, files,
raw memory...). This module never imports torch: the UI uses it to show errors while typing.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import io
import keyword
import operator
import re
import sys
import tokenize
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from probes.chain.check_attributes import AttributeCheck
from probes.chain.check_calls import CallCheck
from probes.chain.check_literals import LiteralCheck
from probes.chain.check_names import ALLOWED_BUILTINS, RESERVED, NameCheck, Scope
from probes.chain.check_operators import OperatorCheck
from probes.chain.errors import ChainError, NodeErrors, chain_error
from probes.chain.kinds import PYTHON_ATTRIBUTES, RETURN_TYPE_FIELDS, TENSOR_ATTRIBUTES, Kind, Kinds
from probes.chain.layers import Layer

__all__ = [
    "ALLOWED_BUILTINS",
    "DTYPE_ALIASES",
    "ChainError",
    "InputDecl",
    "Layer",
    "ParsedChain",
    "canonical_dtype",
    "parse_chain",
    "parse_inputs",
]

T = TypeVar("T")

MAX_CHARS = 20_000
MAX_DEPTH = 100

DEFAULT_INPUTS: tuple[str, ...] = ("a", "b", "c")
EXAMPLE = "(a + b).relu()"

DTYPE_ALIASES: dict[str, str] = {
    **dict.fromkeys(("fp32", "float32", "f32", "float"), "fp32"),
    **dict.fromkeys(("bf16", "bfloat16"), "bf16"),
    **dict.fromkeys(("fp16", "float16", "f16", "half"), "fp16"),
    **dict.fromkeys(("fp64", "float64", "f64", "double"), "fp64"),
    **dict.fromkeys(("int64", "i64", "long"), "int64"),
    **dict.fromkeys(("int32", "i32", "int"), "int32"),
    **dict.fromkeys(("int16", "i16", "short"), "int16"),
    **dict.fromkeys(("int8", "i8"), "int8"),
    **dict.fromkeys(("uint8", "u8", "byte"), "uint8"),
    "bool": "bool",
}
"""Every accepted dtype spelling (lower case, optionally prefixed ``torch.``) -> canonical name."""


def canonical_dtype(name: str) -> str:
    """The canonical dtype name for any accepted spelling (``bfloat16``, ``torch.half``...)."""
    key = name.strip().lower().removeprefix("torch.")
    if key in DTYPE_ALIASES:
        return DTYPE_ALIASES[key]
    accepted = ", ".join(dict.fromkeys(DTYPE_ALIASES.values()))
    raise chain_error("input", f"unknown dtype '{name}': use one of {accepted} (or float32, bfloat16, half, long...)")


# ---------------------------------------------------------------------------------------------
# Input declarations: `x: [N, 4096] bf16`
# ---------------------------------------------------------------------------------------------

_DECL = re.compile(
    r"\s*+(?P<name>[A-Za-z_]\w*+)\s*+:\s*+\[(?P<dims>[^\[\]]*+)\]\s*+(?P<dtype>[A-Za-z_][\w.]*+)?\s*+(?:#.*)?",
    re.ASCII,
)
"""Possessive quantifiers (``*+``) never give back what they matched, so a long line that fails to
match is rejected in linear time (with backtracking, ``\\s*\\s*`` over 19,000 spaces takes seconds)."""
_DECL_START = re.compile(r"\s*+[A-Za-z_]\w*+\s*+:\s*+\[", re.ASCII)
_DIM_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
}
_DIM_UNARY: dict[type, Callable[[int], int]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _quiet(action: Callable[[], T]) -> T:
    """Call ast.parse or compile without SyntaxWarnings (``1if``, ``x is 1``): they would print
    over the UI, and the code is fine to run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return action()


def _dim_tree(dim: str) -> ast.expr:
    """The checked AST of one dim: int literals, ``N``, ``+ - * //`` and parentheses only."""
    try:
        tree = _quiet(lambda: ast.parse(dim, "<dim>", "eval")).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError(f"dim '{dim}' is not an integer expression in N (like N, 4096, N//4, 2*N)") from None
    if _too_deep(tree):
        raise ValueError(f"dim '{dim}' is nested too deeply")
    if not all(_is_dim_node(node) for node in ast.walk(tree)):
        raise ValueError(f"dim '{dim}' may use only integers, N, + - * // and parentheses")
    return tree


def _is_dim_node(node: ast.AST) -> bool:
    if isinstance(node, (ast.operator, ast.unaryop)):
        return type(node) in _DIM_OPS or type(node) in _DIM_UNARY
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    return isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Load)) or (isinstance(node, ast.Name) and node.id == "N")


def _eval_dim(node: ast.expr, n: int) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return n
    if isinstance(node, ast.UnaryOp):
        return _DIM_UNARY[type(node.op)](_eval_dim(node.operand, n))
    assert isinstance(node, ast.BinOp)
    return _DIM_OPS[type(node.op)](_eval_dim(node.left, n), _eval_dim(node.right, n))


def _dim_value(dim: str, n: int) -> int:
    """``dim`` at ``N=n``; ValueError unless it is a positive int."""
    try:
        value = _eval_dim(_dim_tree(dim), n)
    except ZeroDivisionError:
        raise ValueError(f"dim '{dim}' divides by zero at N={n}") from None
    if value <= 0:
        shown = str(value) if value.bit_length() <= 64 else "a huge negative number"
        at = f" at N={n}" if "N" in dim else ""
        raise ValueError(f"dim '{dim}' is {shown}{at}; dims must be positive")
    return value


@dataclass(frozen=True)
class InputDecl:
    """One input tensor: its shape as typed (evaluated per sweep size) and its dtype."""

    name: str
    dims: tuple[str, ...]
    dtype: str | None
    """Canonical dtype name, or None for the run's dtype."""
    line: int | None = None
    """Where it was declared; None for the default inputs a, b, c."""

    def shape(self, n: int) -> tuple[int, ...]:
        """The concrete shape at ``N=n``."""
        try:
            return tuple(_dim_value(dim, n) for dim in self.dims)
        except ValueError as exc:
            raise chain_error("input", f"input '{self.name}': {exc}", self.line) from None


def _parse_declaration(match: re.Match[str], lineno: int) -> InputDecl:
    name = match["name"]
    where = match.start("name") + 1
    if name in RESERVED or hasattr(builtins, name):
        raise chain_error("input", f"'{name}' is a reserved name; pick another input name", lineno, where)
    if keyword.iskeyword(name) or name.startswith("_"):
        raise chain_error("input", f"'{name}' cannot be an input name (keyword or starts with '_')", lineno, where)
    dims_text = match["dims"]
    parts = dims_text.split(",")
    if len(parts) > 1 and not parts[-1].strip():
        parts.pop()  # a trailing comma, as in `[N,]`
    dims: list[str] = []
    offset = match.start("dims")
    for part in parts if dims_text.strip() else []:
        dim = part.strip()
        col = offset + len(part) - len(part.lstrip()) + 1
        offset += len(part) + 1
        try:
            if not dim:
                raise ValueError("a dim is empty")
            if not any(isinstance(node, ast.Name) for node in ast.walk(_dim_tree(dim))):
                _dim_value(dim, 0)  # no N in it: check it now rather than at run time
        except ValueError as exc:
            raise chain_error("input", f"input '{name}': {exc}", lineno, col) from None
        dims.append(dim)
    dtype = None
    if match["dtype"]:
        try:
            dtype = canonical_dtype(match["dtype"])
        except ChainError as exc:
            raise ChainError(dataclasses.replace(exc.info, line=lineno, col=match.start("dtype") + 1)) from None
    return InputDecl(name, tuple(dims), dtype, lineno)


def _split_declarations(lines: list[str]) -> dict[str, InputDecl]:
    """Parse declaration lines and blank them in place (so the line numbers of the rest hold)."""
    declared: dict[str, InputDecl] = {}
    for index, text in enumerate(lines):
        match = _DECL.fullmatch(text)
        if match is None:
            if _DECL_START.match(text):
                raise chain_error("input", "bad input declaration: write it like `x: [N, 4096] bf16`", index + 1, 1)
            continue
        decl = _parse_declaration(match, index + 1)
        if decl.name in declared:
            first = declared[decl.name].line
            raise chain_error(
                "input",
                f"'{decl.name}' is already declared on line {first}",
                index + 1,
                match.start("name") + 1,
            )
        declared[decl.name] = decl
        lines[index] = ""
    return declared


def parse_inputs(declarations: list[str]) -> tuple[InputDecl, ...]:
    """Input declarations on their own, in order (a source file's ``--input``): each line must be
    one, written as a chain declares it (``x: [N, 4096] bf16``)."""
    lines = list(declarations)
    declared = _split_declarations(lines)
    for index, rest in enumerate(lines):
        if rest.strip():
            raise chain_error("input", "bad input declaration: write it like `x: [N, 4096] bf16`", index + 1, 1)
    return tuple(declared.values())


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def _parse(source: str) -> ast.Module:
    """ast.parse, with every way it can fail turned into a ChainError."""
    try:
        return _quiet(lambda: ast.parse(source, "<chain>"))
    except SyntaxError as exc:  # IndentationError included
        message = exc.msg
        line, col = exc.lineno, exc.offset
        if message == "invalid syntax" and line is not None and col is not None:
            rest = source.split("\n")[line - 1 :]
            rest[0] = rest[0][col - 1 :]
            if not "".join(rest).strip():
                message = "unexpected end of the chain"
        message = message.replace("unexpected EOF while parsing", "unexpected end of the chain")
        raise chain_error("syntax", message, line, col) from None
    except (RecursionError, MemoryError):
        raise chain_error("rejected", f"nesting too deep (over {MAX_DEPTH} levels)") from None
    except ValueError as exc:
        raise chain_error("syntax", str(exc)) from None


def _too_deep(tree: ast.AST) -> bool:
    """Whether ``tree`` nests deeper than MAX_DEPTH; iterative, so a deep tree cannot overflow us."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


def _check_ascii_names(source: str) -> None:
    """Refuse non-ASCII identifiers: Python folds them (NFKC), so fullwidth ``ｔｏｒｃｈ`` *is* torch."""
    if source.isascii():
        return
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NAME and not token.string.isascii():
                line, col = token.start
                raise chain_error("rejected", f"non-ASCII name '{token.string}'", line, col + 1)
    except (tokenize.TokenError, SyntaxError) as exc:
        raise chain_error("syntax", f"cannot read the chain: {exc.args[0]}") from None


# ---------------------------------------------------------------------------------------------
# The allow-list
# ---------------------------------------------------------------------------------------------

_NOT_ALLOWED: dict[str, str] = {
    "Import": "import",
    "ImportFrom": "import",
    "Lambda": "lambda",
    "ListComp": "a list comprehension",
    "SetComp": "a set comprehension",
    "DictComp": "a dict comprehension",
    "GeneratorExp": "a generator expression",
    "JoinedStr": "an f-string",
    "FormattedValue": "an f-string",
    "Starred": "a starred expression (*x)",
    "Dict": "a dict display",
    "Set": "a set display",
    "NamedExpr": "the walrus operator (:=)",
    "Await": "await",
    "Yield": "yield",
    "YieldFrom": "yield",
    "AugAssign": "augmented assignment (+= and the like)",
    "AnnAssign": "annotated assignment",
    "Delete": "del",
    "Global": "global",
    "Nonlocal": "nonlocal",
    "FunctionDef": "def",
    "AsyncFunctionDef": "def",
    "ClassDef": "class",
    "Return": "return",
    "If": "an if statement",
    "For": "a for loop",
    "AsyncFor": "a for loop",
    "While": "a while loop",
    "With": "with",
    "AsyncWith": "with",
    "Try": "try",
    "TryStar": "try",
    "Raise": "raise",
    "Assert": "assert",
    "Pass": "pass",
    "Break": "break",
    "Continue": "continue",
    "Match": "match",
}
"""Friendly names for the constructs people try; anything else unknown is named by its AST type."""

_ALLOWED_NODES = (
    ast.Name,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.keyword,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.Load,
)


class _Validator:
    """Walks the statements in order, hands each node to the check of its family and records the
    inputs used.

    It also tells, without running anything, what each expression is (probes.chain.kinds): rules
    that keep plain Python bounded (``**`` on Python numbers, ``max`` of one tensor) apply to what is
    certainly plain Python, and build_function routes everything that is not certainly a tensor
    through the run-time caps (probes.chain.limits).
    """

    def __init__(self, source: str, declared: dict[str, InputDecl]) -> None:
        self.lines = source.split("\n")
        self.errors = NodeErrors(self.lines)
        self.inputs = {name: InputDecl(name, ("N",), None) for name in DEFAULT_INPUTS} | declared
        self.assigned: dict[str, int] = {}  # every assignment target -> its first line
        self.locals: dict[str, Kind] = {}  # assigned on an earlier statement -> what it holds
        self.used: dict[str, InputDecl] = {}
        self.kind = Kinds(self._name_kind)
        self.layers: list[Layer] = []
        self.constructions: dict[int, int] = {}  # id of an nn.X(...) call -> its layer's index
        self.layer_calls: dict[int, int] = {}  # id of a call of a layer -> the layer's index
        self.bound: dict[str, int] = {}  # a name that holds a layer (as it stands) -> the layer's index
        scope = Scope(self.inputs, self.locals, self.bound, self.assigned)
        self.names = NameCheck(self.errors, scope)
        self.literals = LiteralCheck(self.errors)
        self.operators = OperatorCheck(self.errors, self.kind)
        self.attributes = AttributeCheck(self.errors, scope)
        self.calls = CallCheck(
            self.errors, self.attributes, self.is_tensor, scope, self.layers, self.constructions, self.layer_calls
        )

    # -- what is a tensor ----------------------------------------------------------------------

    def _name_kind(self, name: str) -> Kind:
        if name in self.locals:
            return self.locals[name]
        if name in self.inputs:
            return Kind.TENSOR
        return Kind.NUMBER if name == "N" else Kind.UNKNOWN

    def is_tensor(self, node: ast.AST) -> bool:
        """Whether ``node`` certainly evaluates to a tensor (False: a Python value, or unknown)."""
        return self.kind(node) is Kind.TENSOR

    def _classify(self, root: ast.expr) -> None:
        """Fix the kind of every node of a statement now, while the locals are as it sees them."""
        for node in ast.walk(root):
            self.kind(node)

    def check_result(self, node: ast.expr | None) -> None:
        """A chain ending in ``x.name`` with ``x`` a tensor returns a method or a Python value, never
        a tensor: refused here, so the texts on the way to ``.tanh()`` never reach the worker."""
        if not isinstance(node, ast.Attribute) or node.attr in TENSOR_ATTRIBUTES or not self.is_tensor(node.value):
            return
        if isinstance(node.value, ast.Call) and node.attr in RETURN_TYPE_FIELDS:
            return
        if node.attr in PYTHON_ATTRIBUTES:
            raise self.errors.at_attr(node, f".{node.attr} is a Python value, not a tensor", "syntax")
        raise self.errors.at_attr(node, f".{node.attr} is not a tensor: call it, as in .{node.attr}()", "syntax")

    # -- statements ------------------------------------------------------------------------

    def run(self, module: ast.Module) -> None:
        for stmt in module.body:  # first, so a use before the assignment can say where it is
            for target in stmt.targets if isinstance(stmt, ast.Assign) else ():
                if isinstance(target, ast.Name):
                    self.assigned.setdefault(target.id, stmt.lineno)
        for stmt in module.body:
            if isinstance(stmt, ast.Expr):
                self._walk(stmt.value)
                self._classify(stmt.value)
            elif isinstance(stmt, ast.Assign):
                name = self._assign_target(stmt)
                self.calls.assigned_value = stmt.value
                self._walk(stmt.value)
                self.calls.assigned_value = None
                self._classify(stmt.value)
                self.locals[name] = self.kind(stmt.value)
                self.bound.pop(name, None)
                if id(stmt.value) in self.constructions:
                    self.bound[name] = self.constructions[id(stmt.value)]
            else:
                raise self.errors.at(stmt, "rejected", f"{self._label(stmt)} is not allowed")
        last = module.body[-1] if module.body else None
        if isinstance(last, ast.Assign) and id(last.value) in self.constructions:
            raise self.errors.at(
                last.value,
                "syntax",
                "the chain's result is a layer, not a tensor: call it, like lin(x), on a last line",
            )

    def _assign_target(self, stmt: ast.Assign) -> str:
        if len(stmt.targets) != 1:
            raise self.errors.at(stmt, "rejected", "chained assignment (x = y = ...) is not allowed")
        target = stmt.targets[0]
        if not isinstance(target, ast.Name):
            raise self.errors.at(
                target,
                "rejected",
                "only `name = ...` assignments are allowed (no attribute, subscript or tuple targets)",
            )
        if target.id in RESERVED or hasattr(builtins, target.id) or target.id.startswith("_"):
            raise self.errors.at(target, "rejected", f"cannot assign to '{target.id}': it is a reserved name")
        return target.id

    @staticmethod
    def _label(node: ast.AST) -> str:
        name = type(node).__name__
        return _NOT_ALLOWED.get(name, f"'{name}'")

    # -- expressions -----------------------------------------------------------------------

    def _walk(self, root: ast.expr) -> None:
        """Pre-order, children in field order: the order Python evaluates them (first use)."""
        stack: list[tuple[ast.AST, ast.AST | None]] = [(root, None)]
        while stack:
            node, parent = stack.pop()
            self._check(node, parent)
            stack.extend((child, node) for child in reversed(list(ast.iter_child_nodes(node))))

    def _check(self, node: ast.AST, parent: ast.AST | None) -> None:
        if not isinstance(node, _ALLOWED_NODES):
            raise self.errors.at(
                node if hasattr(node, "lineno") else parent, "rejected", f"{self._label(node)} is not allowed"
            )
        if isinstance(node, ast.Name):
            if self.names.check(node, parent):
                self.used.setdefault(node.id, self.inputs[node.id])
        elif isinstance(node, ast.Constant):
            self.literals.constant(node)
        elif isinstance(node, (ast.Tuple, ast.List)):
            self.literals.display(node)
        elif isinstance(node, ast.keyword):
            self.calls.keyword(node)
        elif isinstance(node, ast.BinOp):
            self.operators.binop(node)
        elif isinstance(node, ast.Call):
            self.calls.check(node, parent)
        elif isinstance(node, ast.Attribute) and not isinstance(parent, ast.Attribute):
            self.attributes.check_chain(node, called=isinstance(parent, ast.Call) and parent.func is node)


# ---------------------------------------------------------------------------------------------
# The parsed chain
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedChain:
    """A validated chain: what it reads and what it returns."""

    text: str
    inputs: tuple[InputDecl, ...]
    """Only the inputs the code uses, in first-use order (the order build_function takes them)."""
    result_name: str | None
    """The target of the last line when it is an assignment."""
    layers: tuple[Layer, ...] = ()
    """The ``torch.nn`` layers the chain constructs, in order (probes.chain.layers)."""

    def layer_tensor_names(self) -> list[str]:
        """The chain function's parameters for the layers' tensors, after the inputs, in order."""
        return [layer_tensor_name(index, name) for index, layer in enumerate(self.layers) for name, _ in layer.tensors]

    def build_function(self, namespace: dict[str, object]) -> Callable[..., object]:
        """``def chain(<inputs>, <layer tensors>, N)`` compiled from the validated AST, the user's
        line numbers kept.

        The text is validated again here, so only checked code is ever compiled. Arithmetic and
        calls that are not certainly tensor ops go through probes.chain.limits, which caps the Python
        values they build. Each call of a layer becomes a call of its forward with its tensors, which
        the function takes after the inputs (``_lower_layers``). Globals are ``namespace`` (e.g. torch
        and F), those guards, the layers' forwards and the allowed builtins (see _chain_builtins).
        """
        from probes.chain import limits as chain_limits  # imports torch, which the UI never does

        parsed, module, validator = _analyse(self.text)
        forwards = _lower_layers(module, validator, namespace)
        module = chain_limits.guard_python(module, validator.is_tensor)
        params = [decl.name for decl in parsed.inputs] + parsed.layer_tensor_names() + ["N"]
        function = ast.parse(f"def chain({', '.join(params)}):\n    pass").body[0]
        assert isinstance(function, ast.FunctionDef)
        *body, last = module.body
        if parsed.result_name is not None:
            body.append(last)
            result: ast.expr = ast.copy_location(ast.Name(id=parsed.result_name, ctx=ast.Load()), last)
        else:
            assert isinstance(last, ast.Expr)
            result = last.value
        body.append(ast.copy_location(ast.Return(value=result), last))
        function.body = body
        tree = ast.fix_missing_locations(ast.Module(body=[function], type_ignores=[]))
        code = _quiet(lambda: compile(tree, "<chain>", "exec"))
        scope: dict[str, object] = {"__builtins__": _chain_builtins(), **chain_limits.guard_globals(validator.lines)}
        scope.update(namespace)
        scope.update(forwards)
        exec(code, scope)  # the code is the validated chain
        return cast(Callable[..., object], scope["chain"])


def _analyse(text: str) -> tuple[ParsedChain, ast.Module, _Validator]:
    if len(text) > MAX_CHARS:
        raise chain_error("rejected", f"the chain is too long ({len(text):,} characters; the limit is {MAX_CHARS:,})")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        if "\x00" in line:
            raise chain_error("syntax", "the chain contains a null byte", index + 1, line.index("\x00") + 1)
    declared = _split_declarations(lines)
    source = "\n".join(lines)
    module = _parse(source)
    _check_ascii_names(source)
    if _too_deep(module):
        raise chain_error("rejected", f"nesting too deep (over {MAX_DEPTH} levels)")
    if not module.body:
        raise chain_error("syntax", f"the chain is empty: type an expression such as {EXAMPLE}")
    validator = _Validator(source, declared)
    validator.run(module)
    last = module.body[-1]
    validator.check_result(last.value if isinstance(last, (ast.Expr, ast.Assign)) else None)
    target = last.targets[0] if isinstance(last, ast.Assign) else None
    result_name = target.id if isinstance(target, ast.Name) else None
    parsed = ParsedChain(text, tuple(validator.used.values()), result_name, tuple(validator.layers))
    return parsed, module, validator


def layer_tensor_name(index: int, tensor: str) -> str:
    """The chain function's parameter for a tensor of the layer at ``index`` (a name the chain
    itself cannot spell: it starts with ``_``)."""
    return f"_kt_layer{index}_{tensor}"


def _lower_layers(module: ast.Module, validator: _Validator, namespace: dict[str, object]) -> dict[str, object]:
    """Rewrite ``module`` (validated by ``validator``) so that it holds no layer: each call of a
    layer calls ``_kt_forward<i>(x, weight=_kt_layer<i>_weight, ...)``, an assignment of a layer
    is dropped (the name is only ever called) and ``nn.functional`` is ``F``. Calls keep their
    node (and so their kind: a tensor, never routed through the caps). Returns the forwards, by
    the names the rewritten code calls them."""
    module.body = [
        stmt for stmt in module.body if not (isinstance(stmt, ast.Assign) and id(stmt.value) in validator.constructions)
    ]
    for node in list(ast.walk(module)):
        if isinstance(node, ast.Call) and id(node) in validator.layer_calls:
            index = validator.layer_calls[id(node)]
            node.func = ast.copy_location(ast.Name(id=f"_kt_forward{index}", ctx=ast.Load()), node.func)
            node.keywords = [
                ast.keyword(
                    arg=name, value=ast.copy_location(ast.Name(layer_tensor_name(index, name), ast.Load()), node)
                )
                for name, _ in validator.layers[index].tensors
            ]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "nn"
        ):
            node.value = ast.copy_location(ast.Name(id="F", ctx=ast.Load()), node.value)
    return {f"_kt_forward{index}": layer.forward(namespace) for index, layer in enumerate(validator.layers)}


def parse_chain(text: str) -> ParsedChain:
    """Parse and validate ``text``; raises ChainError saying what is wrong and where."""
    return _analyse(text)[0]


def _chain_builtins() -> dict[str, object]:
    """The allowed builtins, plus an ``__import__`` that only hands back modules already loaded.

    The chain cannot name ``__import__`` (the allow-list rejects it), but torch's C++ side imports
    through the calling frame's builtins (e.g. when a dispatch mode is active), so it must exist.
    Limiting it to ``sys.modules`` means nothing new can ever be loaded from a chain's frame.
    """

    def import_loaded(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] = (),
        level: int = 0,
    ) -> types.ModuleType:
        if level != 0 or name not in sys.modules:
            raise ImportError(f"import of {name!r} is not allowed in a chain")
        return sys.modules[name] if fromlist else sys.modules[name.partition(".")[0]]

    allowed: dict[str, object] = {name: getattr(builtins, name) for name in ALLOWED_BUILTINS}
    allowed["__import__"] = import_loaded
    return allowed


OPERATOR_WORDS: dict[type[ast.AST], str] = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
    ast.MatMult: "matmul",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
    ast.LShift: "lshift",
    ast.RShift: "rshift",
    ast.USub: "neg",
    ast.Invert: "invert",
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.Eq: "eq",
    ast.NotEq: "ne",
}


def op_words(text: str) -> list[str]:
    """The operations a valid chain spells, in the order Python runs them: operators by name, calls
    by their function's: ``(a + b).relu()`` -> ``["add", "relu"]``. Raises ChainError as
    ``parse_chain`` does."""
    _, module, validator = _analyse(text)
    words: list[str] = []

    def number(node: ast.AST) -> bool:
        """Arithmetic on literals and N (``dim=-1``, ``N // 1024``): not an operation of the chain."""
        if isinstance(node, ast.BinOp):
            return number(node.left) and number(node.right)
        if isinstance(node, ast.UnaryOp):
            return number(node.operand)
        return isinstance(node, ast.Constant) or (isinstance(node, ast.Name) and node.id == "N")

    def visit(node: ast.AST) -> None:
        if id(node) in validator.constructions:
            return  # its arguments are literals; the layer is named where it is called
        for child in ast.iter_child_nodes(node):
            visit(child)  # operands first
        if number(node):
            return
        if id(node) in validator.layer_calls:
            words.append(validator.layers[validator.layer_calls[id(node)]].name.lower())
            return
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            words.extend(w for w in [OPERATOR_WORDS.get(type(node.op))] if w)
        elif isinstance(node, ast.Compare):
            words.extend(w for w in (OPERATOR_WORDS.get(type(op)) for op in node.ops) if w)
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            words.append(node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)

    for statement in module.body:
        visit(statement)
    return words
