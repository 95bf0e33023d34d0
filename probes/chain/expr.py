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

from probes.chain.errors import ChainError
from probes.chain.kinds import (
    LAYER_PATHS,
    PYTHON_ATTRIBUTES,
    PYTHON_KINDS,
    RETURN_TYPE_FIELDS,
    TENSOR_ATTRIBUTES,
    Kind,
    Kinds,
    constructed_layer,
)
from probes.chain.layers import LAYER_NAMES, LAYERS, MAX_LAYERS, Layer, LayerArgumentError, layer_from_call
from probes.link.protocol import ChainErrorInfo, ErrorKind
from probes.link.safe_text import inert_line

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
MAX_STR = 200
MAX_DISPLAY = 64

ALLOWED_BUILTINS: tuple[str, ...] = (
    "abs",
    "min",
    "max",
    "int",
    "float",
    "bool",
    "len",
    "round",
    "slice",
)
MAX_EXPONENT = 64
"""Largest literal exponent or shift on Python numbers: ``10 ** 10 ** 8`` would hang the worker
building a Python integer."""
DEFAULT_INPUTS: tuple[str, ...] = ("a", "b", "c")
RESERVED: frozenset[str] = frozenset({"torch", "F", "nn", "N"})
ROOTS: frozenset[str] = frozenset({"torch", "F", "nn"})
"""The names a chain reaches torch through: only as the root of an attribute path."""
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


def _error(kind: ErrorKind, message: str, line: int | None = None, col: int | None = None) -> ChainError:
    """A ChainError whose message is one inert line: it may quote the user's text (a dim, a name)."""
    return ChainError(ChainErrorInfo(kind, inert_line(message), line, col))


def canonical_dtype(name: str) -> str:
    """The canonical dtype name for any accepted spelling (``bfloat16``, ``torch.half``...)."""
    key = name.strip().lower().removeprefix("torch.")
    if key in DTYPE_ALIASES:
        return DTYPE_ALIASES[key]
    accepted = ", ".join(dict.fromkeys(DTYPE_ALIASES.values()))
    raise _error("input", f"unknown dtype '{name}': use one of {accepted} (or float32, bfloat16, half, long...)")


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
            raise _error("input", f"input '{self.name}': {exc}", self.line) from None


def _parse_declaration(match: re.Match[str], lineno: int) -> InputDecl:
    name = match["name"]
    where = match.start("name") + 1
    if name in RESERVED or hasattr(builtins, name):
        raise _error("input", f"'{name}' is a reserved name; pick another input name", lineno, where)
    if keyword.iskeyword(name) or name.startswith("_"):
        raise _error("input", f"'{name}' cannot be an input name (keyword or starts with '_')", lineno, where)
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
            raise _error("input", f"input '{name}': {exc}", lineno, col) from None
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
                raise _error("input", "bad input declaration: write it like `x: [N, 4096] bf16`", index + 1, 1)
            continue
        decl = _parse_declaration(match, index + 1)
        if decl.name in declared:
            first = declared[decl.name].line
            raise _error(
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
            raise _error("input", "bad input declaration: write it like `x: [N, 4096] bf16`", index + 1, 1)
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
        raise _error("syntax", message, line, col) from None
    except (RecursionError, MemoryError):
        raise _error("rejected", f"nesting too deep (over {MAX_DEPTH} levels)") from None
    except ValueError as exc:
        raise _error("syntax", str(exc)) from None


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
                raise _error("rejected", f"non-ASCII name '{token.string}'", line, col + 1)
    except (tokenize.TokenError, SyntaxError) as exc:
        raise _error("syntax", f"cannot read the chain: {exc.args[0]}") from None


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

_FILES = "it reads or writes files"
_MACHINERY = "it reaches machinery outside what a chain may use"
_GLOBAL_STATE = "it changes global torch state"
_RAW_MEMORY = "no raw memory access"
_CALLBACKS = "it calls back into Python"
_CALLS_ANYTHING = "it calls whatever value it is given"
_DENIED: dict[str, str] = {
    name: why
    for why, names in (
        (_FILES, "load save from_file tofile"),
        (
            _MACHINERY,
            "ops hub utils cpp_extension jit compile classes library backends distributed multiprocessing"
            " package onnx export fx func autograd profiler testing get_device_module fork wait parse_ir"
            " parse_schema parse_type_comment merge_type_from_type_comment"
            " prepare_multiprocessing_environment",
        ),
        ("the app picks the device, not the chain", "cuda cpu mps xpu"),
        (
            _GLOBAL_STATE,
            "set_default_device set_default_dtype set_default_tensor_type manual_seed seed set_rng_state "
            "use_deterministic_algorithms set_num_threads set_printoptions autocast_increment_nesting "
            "autocast_decrement_nesting clear_autocast_cache init_num_threads",
        ),
        (
            _RAW_MEMORY,
            "numpy from_numpy frombuffer storage untyped_storage storage_type data_ptr as_strided set_ "
            "share_memory_ pin_memory record_stream",
        ),
        (_CALLBACKS, "register_hook apply_ map_ map2_"),
        (_CALLS_ANYTHING, "vmap cond while_loop scan associative_scan classproperty"),
        (
            "it copies to the host and makes the chain data-dependent Python; keep the result a tensor",
            "item tolist",
        ),
        ("string formatting can reach any attribute", "format format_map"),
        ("Tensor.type(name) imports modules by name; use .to(dtype) or .dtype", "type"),
        ("it walks class internals", "mro"),
    )
    for name in names.split()
}
"""Attribute names refused on any object, with why."""

_DENIED_PREFIXES: tuple[tuple[str, str], ...] = (("set_", _GLOBAL_STATE), ("as_strided", _RAW_MEMORY))
_DENIED_PARTS: tuple[tuple[str, str], ...] = (
    ("load", _FILES),
    ("save", _FILES),
    ("file", _FILES),
    ("pickle", _FILES),
    ("import", _MACHINERY),
    ("exec", _MACHINERY),
    ("hook", _CALLBACKS),
    ("torch_function", _CALLS_ANYTHING),
    ("seed", _GLOBAL_STATE),
    ("rng_state", _GLOBAL_STATE),
    ("data_ptr", _RAW_MEMORY),
)
"""Substrings that mark a family of names (``load_inline``, ``import_ir_module``, ...)."""

_TORCH_SUBMODULES = frozenset({"linalg", "fft", "special"})
_TORCH_REACH = (
    "only torch.<function>, torch.linalg/fft/special.<function>, F.<function> and nn.<Layer>(...) can be used"
)
_TORCH_VALUE = re.compile(
    r"(b?float|u?int|complex)\d+(_\w+)?|half|double|long|short|int|bool|cfloat|cdouble|chalf"
    r"|inf|nan|pi|e|newaxis|strided|sparse_coo|contiguous_format|preserve_format|channels_last(_3d)?",
    re.ASCII,
)
"""What ``torch.<name>`` may be when it is not called: dtypes, constants, layouts, memory formats.
Anything else (``torch.os``, ``torch.linalg``) could be a module, and a module passed around as a
value would escape the path rules below."""
_TORCH_BARE = "can only be used as torch.<function>(...) or a dtype or constant such as torch.float16"
_NN_BARE = "can only be used as nn.<Layer>(...)(x) or nn.functional.<function>(...)"
_LAYER_ONLY_CALLED = "can only be called, like lin(x): a layer is never a value of its own"


def _attribute_problem(name: str) -> str | None:
    """Why an attribute name is refused wherever it appears (the message's tail), or None."""
    if name.startswith("_"):
        return " (no dunder or private attributes)"
    why = (
        _DENIED.get(name)
        or next((why for prefix, why in _DENIED_PREFIXES if name.startswith(prefix)), None)
        or next((why for part, why in _DENIED_PARTS if part in name), None)
    )
    return f": {why}" if why else None


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


class _Validator:
    """Walks the statements in order, checking each node and recording the inputs used.

    It also tells, without running anything, what each expression is (probes.chain.kinds): rules
    that keep plain Python bounded (``**`` on Python numbers, ``max`` of one tensor) apply to what is
    certainly plain Python, and build_function routes everything that is not certainly a tensor
    through the run-time caps (probes.chain.limits).
    """

    def __init__(self, source: str, declared: dict[str, InputDecl]) -> None:
        self.lines = source.split("\n")
        self.inputs = {name: InputDecl(name, ("N",), None) for name in DEFAULT_INPUTS} | declared
        self.assigned: dict[str, int] = {}  # every assignment target -> its first line
        self.locals: dict[str, Kind] = {}  # assigned on an earlier statement -> what it holds
        self.used: dict[str, InputDecl] = {}
        self.kind = Kinds(self._name_kind)
        self.layers: list[Layer] = []
        self.constructions: dict[int, int] = {}  # id of an nn.X(...) call -> its layer's index
        self.layer_calls: dict[int, int] = {}  # id of a call of a layer -> the layer's index
        self.bound: dict[str, int] = {}  # a name that holds a layer (as it stands) -> the layer's index
        self._assigned_value: ast.expr | None = None  # the value of the assignment being checked

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

    # -- positions -------------------------------------------------------------------------

    def _col(self, line: int, byte_col: int) -> int:
        """1-based character column from the AST's UTF-8 byte offset."""
        return len(self.lines[line - 1].encode()[:byte_col].decode(errors="ignore")) + 1

    def _at(self, node: ast.AST | None, kind: ErrorKind, message: str) -> ChainError:
        line = getattr(node, "lineno", None)
        col = None if line is None else self._col(line, getattr(node, "col_offset", 0))
        return _error(kind, message, line, col)

    def _at_attr(self, node: ast.Attribute, message: str, kind: ErrorKind = "rejected") -> ChainError:
        """An error placed on the attribute's name (identifiers are ASCII by now)."""
        line = node.end_lineno or node.lineno
        col = self._col(line, (node.end_col_offset or 0) - len(node.attr))
        return _error(kind, message, line, col)

    def check_result(self, node: ast.expr | None) -> None:
        """A chain ending in ``x.name`` with ``x`` a tensor returns a method or a Python value, never
        a tensor: refused here, so the texts on the way to ``.tanh()`` never reach the worker."""
        if not isinstance(node, ast.Attribute) or node.attr in TENSOR_ATTRIBUTES or not self.is_tensor(node.value):
            return
        if isinstance(node.value, ast.Call) and node.attr in RETURN_TYPE_FIELDS:
            return
        if node.attr in PYTHON_ATTRIBUTES:
            raise self._at_attr(node, f".{node.attr} is a Python value, not a tensor", "syntax")
        raise self._at_attr(node, f".{node.attr} is not a tensor: call it, as in .{node.attr}()", "syntax")

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
                self._assigned_value = stmt.value
                self._walk(stmt.value)
                self._assigned_value = None
                self._classify(stmt.value)
                self.locals[name] = self.kind(stmt.value)
                self.bound.pop(name, None)
                if id(stmt.value) in self.constructions:
                    self.bound[name] = self.constructions[id(stmt.value)]
            else:
                raise self._at(stmt, "rejected", f"{self._label(stmt)} is not allowed")
        last = module.body[-1] if module.body else None
        if isinstance(last, ast.Assign) and id(last.value) in self.constructions:
            raise self._at(
                last.value,
                "syntax",
                "the chain's result is a layer, not a tensor: call it, like lin(x), on a last line",
            )

    def _assign_target(self, stmt: ast.Assign) -> str:
        if len(stmt.targets) != 1:
            raise self._at(stmt, "rejected", "chained assignment (x = y = ...) is not allowed")
        target = stmt.targets[0]
        if not isinstance(target, ast.Name):
            raise self._at(
                target,
                "rejected",
                "only `name = ...` assignments are allowed (no attribute, subscript or tuple targets)",
            )
        if target.id in RESERVED or hasattr(builtins, target.id) or target.id.startswith("_"):
            raise self._at(target, "rejected", f"cannot assign to '{target.id}': it is a reserved name")
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
            raise self._at(
                node if hasattr(node, "lineno") else parent, "rejected", f"{self._label(node)} is not allowed"
            )
        if isinstance(node, ast.Name):
            self._name(node, parent)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bytes):
                raise self._at(node, "rejected", "bytes literals are not allowed")
            if isinstance(node.value, str) and len(node.value) > MAX_STR:
                raise self._at(node, "rejected", f"string literals over {MAX_STR} characters are not allowed")
        elif isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) > MAX_DISPLAY:
            raise self._at(node, "rejected", f"lists and tuples over {MAX_DISPLAY} elements are not allowed")
        elif isinstance(node, ast.keyword) and node.arg is None:
            raise self._at(node, "rejected", "**kwargs is not allowed")
        elif isinstance(node, ast.BinOp):
            self._binop(node)
        elif isinstance(node, ast.Call):
            self._call(node, parent)
        elif isinstance(node, ast.Attribute) and not isinstance(parent, ast.Attribute):
            self._attribute_chain(node, called=isinstance(parent, ast.Call) and parent.func is node)

    def _binop(self, node: ast.BinOp) -> None:
        """Python arithmetic that could run for hours before any tensor op: powers and shifts of
        Python values that are not literals, %-formatting, and repetition of a literal sequence
        (``'x' * 10 ** 9``). Tensor arithmetic (``a ** b``, ``a ** N``) is unaffected, and what may
        be either (a call of unknown kind) is left to the run-time caps."""
        plain = self.kind(node.left) in PYTHON_KINDS and self.kind(node.right) in PYTHON_KINDS
        if isinstance(node.op, _GROWING_OPS) and plain:
            symbol = "**" if isinstance(node.op, ast.Pow) else "<<"
            for side in (node.left, node.right):
                if _literal_number(side) is None:
                    raise self._at(
                        side,
                        "rejected",
                        f"on Python numbers, both sides of {symbol} must be number literals like 2 {symbol} 10 "
                        "(a computed one could hang the run)",
                    )
            amount = _literal_number(node.right)
            if not isinstance(amount, complex) and abs(amount or 0) > MAX_EXPONENT:
                raise self._at(
                    node.right,
                    "rejected",
                    f"on Python numbers, the right side of {symbol} must be at most {MAX_EXPONENT} "
                    "(a huge Python number would hang the run)",
                )
        if isinstance(node.op, ast.Mod) and self.kind(node.left) is Kind.TEXT:
            raise self._at(node.left, "rejected", "%-formatting of strings is not allowed")
        if isinstance(node.op, ast.Mult):
            for side in (node.left, node.right):
                if isinstance(side, (ast.List, ast.Tuple)) or (
                    isinstance(side, ast.Constant) and isinstance(side.value, str)
                ):
                    raise self._at(side, "rejected", "repeating a list, tuple or string with * is not allowed")

    def _name(self, node: ast.Name, parent: ast.AST | None) -> None:
        name = node.id
        if name in ROOTS and not isinstance(parent, ast.Attribute):
            raise self._at(node, "rejected", f"'{name}' {_NN_BARE if name == 'nn' else _TORCH_BARE}")
        called = isinstance(parent, ast.Call) and parent.func is node
        if name in self.bound and not called:
            raise self._at(node, "rejected", f"'{name}' holds a layer: it {_LAYER_ONLY_CALLED}")
        if name in ALLOWED_BUILTINS and not called:
            raise self._at(node, "rejected", f"'{name}' can only be called, like {name}(x)")
        if name in self.locals or name in RESERVED or name in ALLOWED_BUILTINS:
            return
        if name in self.inputs:
            self.used.setdefault(name, self.inputs[name])
            return
        if hasattr(builtins, name) or name.startswith("_"):
            what = f"calls to '{name}' are" if called else f"the name '{name}' is"
            raise self._at(node, "rejected", f"{what} not allowed (builtins allowed: {', '.join(ALLOWED_BUILTINS)})")
        if name in self.assigned:
            raise self._at(node, "input", f"'{name}' is used before it is assigned on line {self.assigned[name]}")
        known = ", ".join(self.inputs)
        raise self._at(
            node,
            "input",
            f"unknown name '{name}': the inputs are {known}; declare others like `{name}: [N] fp32`",
        )

    def _call(self, node: ast.Call, parent: ast.AST | None) -> None:
        func = node.func
        if constructed_layer(func) is not None:
            self._construction(node, parent)
            return
        if (isinstance(func, ast.Call) and constructed_layer(func.func) is not None) or (
            isinstance(func, ast.Name) and func.id in self.bound
        ):
            self._layer_call(node)
            return
        if isinstance(func, ast.Name) and (func.id in self.locals or func.id in self.inputs or func.id in RESERVED):
            raise self._at(func, "rejected", f"'{func.id}' cannot be called (only functions and methods can)")
        if not isinstance(func, (ast.Name, ast.Attribute)):
            if isinstance(func, ast.Call) and isinstance(func.func, ast.Attribute):
                self._attribute_chain(func.func, called=True)  # nn.Module(...)(x): say what nn.Module is
            raise self._at(func, "rejected", "only functions and methods can be called, like torch.relu(a) or a.relu()")
        if isinstance(func, ast.Name) and func.id == "round" and (len(node.args) > 1 or node.keywords):
            raise self._at(node, "rejected", "round(x, ndigits) is not allowed: use torch.round(x, decimals=n)")
        if isinstance(func, ast.Name) and func.id in ("min", "max") and len(node.args) == 1:
            (arg,) = node.args
            if self.is_tensor(arg):
                raise self._at(
                    node,
                    "rejected",
                    f"{func.id}() of one tensor walks it element by element in Python: "
                    f"use torch.{func.id}(x) or x.{func.id}()",
                )

    def _construction(self, node: ast.Call, parent: ast.AST | None) -> int:
        """Check ``nn.X(...)``: where it stands (called at once, or the whole value of an
        assignment) and its literal arguments; the layer's index (once per node)."""
        if id(node) in self.constructions:
            return self.constructions[id(node)]
        name = constructed_layer(node.func)
        assert name is not None
        called = isinstance(parent, ast.Call) and parent.func is node
        if parent is None and node is not self._assigned_value:  # a line that is a layer: still being typed
            raise self._at(node, "syntax", f"nn.{name}(...) is a layer, not a tensor: call it, like nn.{name}(...)(x)")
        if not called and node is not self._assigned_value:
            raise self._at(
                node,
                "rejected",
                f"nn.{name}(...) makes a layer, which can only be called at once, like nn.{name}(...)(x), "
                f"or named, like lin = nn.{name}(...), and then called",
            )
        if len(self.layers) >= MAX_LAYERS:
            raise self._at(node, "rejected", f"a chain may construct at most {MAX_LAYERS} layers")
        line = node.lineno
        col = self._col(line, node.col_offset)
        try:
            layer = layer_from_call(name, node, line, col)
        except LayerArgumentError as exc:
            raise self._at(exc.node, "rejected", str(exc)) from None
        self.constructions[id(node)] = len(self.layers)
        self.layers.append(layer)
        return self.constructions[id(node)]

    def _layer_call(self, node: ast.Call) -> None:
        """A call of a layer: one tensor, given by position."""
        func = node.func
        index = self._construction(func, node) if isinstance(func, ast.Call) else self.bound[cast(ast.Name, func).id]
        layer = self.layers[index]
        if len(node.args) != 1 or node.keywords:
            raise self._at(node, "rejected", f"a layer is called with one input, like nn.{layer.name}(...)(x)")
        self.layer_calls[id(node)] = index

    def _attribute_chain(self, outer: ast.Attribute, called: bool) -> None:
        """Check a whole chain ``root.x.y.z`` once, from its root outwards."""
        chain: list[ast.Attribute] = []
        node: ast.expr = outer
        while isinstance(node, ast.Attribute):
            chain.append(node)
            node = node.value
        chain.reverse()
        root = node
        if isinstance(root, ast.Constant):
            raise self._at(root, "rejected", 'attributes of constants are not allowed (e.g. "...".format)')
        if isinstance(root, (ast.List, ast.Tuple)):
            raise self._at(root, "rejected", "attributes of list and tuple displays are not allowed")
        if isinstance(root, ast.Name) and (root.id == "N" or root.id in ALLOWED_BUILTINS):
            raise self._at(root, "rejected", f"attributes of '{root.id}' are not allowed")
        torch_root = root.id if isinstance(root, ast.Name) and root.id in ROOTS else None
        if isinstance(root, ast.Name) and root.id in self.bound:
            raise self._at(root, "rejected", f"'{root.id}' holds a layer: it {_LAYER_ONLY_CALLED}")
        layer_path = torch_root is not None and (torch_root, *(a.attr for a in chain[:-1])) in LAYER_PATHS
        for attr in chain:
            problem = _attribute_problem(attr.attr)
            if problem is None and torch_root and attr.attr[0].isupper():
                if layer_path and attr is chain[-1]:
                    self._layer_class(attr, called)
                    return
                problem = ": classes like torch.Tensor cannot be used"
            if problem:
                raise self._at_attr(attr, f"attribute '{attr.attr}' is not allowed{problem}")
        if torch_root:
            self._torch_path(torch_root, chain, called)

    def _layer_class(self, attr: ast.Attribute, called: bool) -> None:
        """``nn.X`` / ``torch.nn.X``: an allowed layer, constructed."""
        if attr.attr not in LAYERS:
            raise self._at_attr(
                attr, f"nn.{attr.attr} is not a layer a chain may construct; the layers are: {LAYER_NAMES}"
            )
        if not called:
            raise self._at_attr(attr, f"nn.{attr.attr} can only be constructed and called, like nn.{attr.attr}(...)(x)")

    def _torch_path(self, root: str, chain: list[ast.Attribute], called: bool) -> None:
        """On torch, F and nn, call only functions, through the few math submodules (and
        ``nn.functional``); else a dtype. (The layers, ``nn.X(...)``, are checked apart.)"""
        dotted = ".".join([root] + [attr.attr for attr in chain])
        if not called:
            if root != "torch" or len(chain) > 1 or not _TORCH_VALUE.fullmatch(chain[0].attr):
                raise self._at_attr(chain[-1], f"'{dotted}' {_TORCH_BARE}")
            return
        prefix = {"torch": ["torch"], "nn": ["torch", "nn"]}.get(root, ["torch", "nn", "functional"])
        path = prefix + [attr.attr for attr in chain]
        if len(path) > 2 and path[1] in _TORCH_SUBMODULES:
            limit = 3
        elif path[1:3] == ["nn", "functional"]:
            limit = 4
        else:
            limit = 2
        if len(path) > limit:
            raise self._at_attr(chain[limit - len(prefix)], f"'{dotted}' is not allowed: {_TORCH_REACH}")


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
        raise _error("rejected", f"the chain is too long ({len(text):,} characters; the limit is {MAX_CHARS:,})")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        if "\x00" in line:
            raise _error("syntax", "the chain contains a null byte", index + 1, line.index("\x00") + 1)
    declared = _split_declarations(lines)
    source = "\n".join(lines)
    module = _parse(source)
    _check_ascii_names(source)
    if _too_deep(module):
        raise _error("rejected", f"nesting too deep (over {MAX_DEPTH} levels)")
    if not module.body:
        raise _error("syntax", f"the chain is empty: type an expression such as {EXAMPLE}")
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
