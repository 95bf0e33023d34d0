"""probes.chain.call_kinds, the table of what torch functions and tensor methods return, checked
against the installed torch: a name the table says returns a tensor (or tensors, or a number, or a
shape) must do so for every overload, because the chain's run-time guard trusts those kinds.

Run as a script (``python tests/test_call_kinds.py``) to write the table again after a torch upgrade:
it reads torch's type stubs (``torch/_C/*.pyi``), the annotations of torch's Python functions and,
for torch.linalg/fft/special, the ATen schemas.
"""

from __future__ import annotations

import ast
import collections
import inspect
import textwrap
import types
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from probes.chain import call_kinds
from probes.chain.check_attributes import attribute_problem
from probes.chain.kinds import SAFETY_CLAIMS, Kind, join

TORCH_DIR = Path(torch.__file__).parent
TABLE = Path(__file__).parents[1] / "probes" / "chain" / "call_kinds.py"
NAMESPACES: dict[str, object] = {
    "TORCH": torch,
    "FUNCTIONAL": F,
    "LINALG": torch.linalg,
    "FFT": torch.fft,
    "SPECIAL": torch.special,
    "TENSOR_METHODS": torch.Tensor,
}
"""The table's names -> what a chain reaches through them (torch.X, F.X, torch.linalg.X, a.X())."""

_NAMED: dict[str, Kind] = {
    **dict.fromkeys(("Tensor", "torch.Tensor"), Kind.TENSOR),
    **dict.fromkeys(
        ("_bool", "_int", "_float", "_complex", "bool", "int", "float", "complex", "Number", "SymInt", "SymBool"),
        Kind.NUMBER,
    ),
    **dict.fromkeys(("builtins.bool", "builtins.int", "builtins.float", "builtins.complex"), Kind.NUMBER),
    "builtins.str": Kind.TEXT,
    **dict.fromkeys(("Size", "_size", "torch.Size"), Kind.SHAPE),
    **dict.fromkeys(("str", "_str"), Kind.TEXT),
    **dict.fromkeys(
        (
            "None",
            "NoneType",
            "bytes",
            "_dtype",
            "dtype",
            "torch.dtype",
            "_device",
            "device",
            "torch.device",
            "_layout",
            "layout",
            "memory_format",
            "_qscheme",
            "finfo",
            "iinfo",
            "dict",
        ),
        Kind.PYTHON,
    ),
}
"""Annotation names whose kind is certain."""
_SEQUENCES = frozenset({"tuple", "Tuple", "list", "List", "Sequence", "typing.Tuple", "typing.List"})
_UNIONS = frozenset({"Union", "typing.Union", "Optional", "typing.Optional"})
_PREDICATES = frozenset({"TypeIs", "TypeGuard", "typing.TypeGuard", "typing_extensions.TypeIs"})
_ATEN: dict[str, Kind] = {
    "Tensor": Kind.TENSOR,
    "Tensor[]": Kind.TENSORS,
    **dict.fromkeys(("int", "float", "bool", "complex", "SymInt", "Scalar"), Kind.NUMBER),
    **dict.fromkeys(("int[]", "SymInt[]"), Kind.SHAPE),
    "str": Kind.TEXT,
    **dict.fromkeys(("ScalarType", "Device", "Layout", "MemoryFormat"), Kind.PYTHON),
}


def _dotted(node: ast.expr) -> str:
    return ast.unparse(node)


def annotation_kind(node: ast.expr, returns: dict[str, Kind], self_kind: Kind = Kind.UNKNOWN) -> Kind:
    """The kind an annotation (as an AST) promises; UNKNOWN for anything not understood."""
    if isinstance(node, ast.Constant):
        if node.value is None:
            return Kind.PYTHON
        if isinstance(node.value, str):  # a postponed annotation
            return annotation_kind(ast.parse(node.value, mode="eval").body, returns, self_kind)
        return Kind.UNKNOWN
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return join([annotation_kind(node.left, returns, self_kind), annotation_kind(node.right, returns, self_kind)])
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = _dotted(node)
        if name == "Self":
            return self_kind
        if name.startswith("torch.return_types."):
            return returns.get(name.removeprefix("torch.return_types."), Kind.UNKNOWN)
        return _NAMED.get(name, Kind.UNKNOWN)
    if not isinstance(node, ast.Subscript):
        return Kind.UNKNOWN
    base = _dotted(node.value)
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if base in _PREDICATES:
        return Kind.NUMBER
    if base in _UNIONS:
        kinds = [annotation_kind(item, returns, self_kind) for item in items]
        return join([*kinds, Kind.PYTHON] if base.endswith("Optional") else kinds)
    if base in ("dict", "Dict", "typing.Dict"):
        return Kind.PYTHON
    if base not in _SEQUENCES:
        return Kind.UNKNOWN
    held = {annotation_kind(item, returns, self_kind) for item in items if not _is_ellipsis(item)}
    if held == {Kind.TENSOR}:
        return Kind.TENSORS
    if held == {Kind.NUMBER}:
        return Kind.SHAPE
    return Kind.PYTHON  # a tuple or list, whatever it holds


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def return_types() -> dict[str, Kind]:
    """The named tuples torch ops return (``torch.return_types.max``): TENSORS when every field is."""
    kinds: dict[str, Kind] = {}
    for node in ast.parse((TORCH_DIR / "return_types.pyi").read_text()).body:
        if isinstance(node, ast.ClassDef) and node.bases:
            kinds[node.name] = annotation_kind(node.bases[0], {})
    return kinds


def stub_returns(path: Path, class_name: str | None = None) -> dict[str, list[ast.expr | None]]:
    """Each function of a stub file (or of one class in it) -> the return annotation of each overload."""
    body = ast.parse(path.read_text()).body
    if class_name is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == class_name).body
    found: dict[str, list[ast.expr | None]] = collections.defaultdict(list)
    for node in body:
        if isinstance(node, ast.FunctionDef):
            found[node.name].append(node.returns)
    return found


class Derivation:
    """What each name returns on the installed torch."""

    def __init__(self) -> None:
        self.returns = return_types()
        stubs = TORCH_DIR / "_C"
        self.variable_functions = stub_returns(stubs / "_VariableFunctions.pyi")
        self.c_module = stub_returns(stubs / "__init__.pyi")
        self.tensor_base = stub_returns(stubs / "__init__.pyi", "TensorBase")
        self.nn = stub_returns(stubs / "_nn.pyi")

    def overloads(self, stubs: list[ast.expr | None], self_kind: Kind = Kind.UNKNOWN) -> Kind:
        if not stubs:
            return Kind.UNKNOWN
        return join([Kind.UNKNOWN if s is None else annotation_kind(s, self.returns, self_kind) for s in stubs])

    def aten(self, name: str) -> Kind:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
        kinds = []
        for schema in schemas:
            returns = [str(r.type) for r in schema.returns]
            if not returns:
                kinds.append(Kind.PYTHON)
            elif len(returns) == 1:
                kinds.append(_ATEN.get(returns[0], Kind.UNKNOWN))
            else:
                kinds.append(Kind.TENSORS if set(returns) == {"Tensor"} else Kind.PYTHON)
        return join(kinds) if kinds else Kind.UNKNOWN

    def builtin(self, function: types.BuiltinFunctionType) -> Kind:
        owner = getattr(function, "__self__", None)
        name = function.__name__
        if owner is None:
            return self.overloads(self.variable_functions.get(name, []))
        if owner is torch._C:
            return self.overloads(self.c_module.get(name, []))
        if owner is torch._C._nn:
            return self.overloads(self.nn.get(name, []))
        if getattr(owner, "__name__", None) in ("torch._C._linalg", "torch._C._fft", "torch._C._special"):
            return self.aten(name)
        return Kind.UNKNOWN

    def python(self, function: Callable[..., object], self_kind: Kind = Kind.UNKNOWN) -> Kind:
        try:
            annotation = inspect.signature(function).return_annotation
        except (TypeError, ValueError):
            return Kind.UNKNOWN
        if annotation is inspect.Signature.empty:
            return Kind.UNKNOWN
        text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError:
            return Kind.UNKNOWN
        return annotation_kind(node, self.returns, self_kind)

    def function(self, value: object) -> Kind:
        if isinstance(value, types.BuiltinFunctionType):
            return self.builtin(value)
        if isinstance(value, type):
            return Kind.UNKNOWN if issubclass(value, torch.Tensor) else Kind.PYTHON  # an instance of it
        if isinstance(value, types.FunctionType):
            return self.python(value)
        return Kind.UNKNOWN

    def method(self, name: str) -> Kind:
        static = inspect.getattr_static(torch.Tensor, name)
        if isinstance(static, types.FunctionType):  # defined in Python (torch/_tensor.py)
            return self.python(static, Kind.TENSOR)
        if (
            static is inspect.getattr_static(torch._C.TensorBase, name, None)
            and type(static).__name__ == "method_descriptor"
        ):
            return self.overloads(self.tensor_base.get(name, []), Kind.TENSOR)
        return Kind.UNKNOWN

    def namespace(self, key: str) -> dict[str, Kind]:
        owner = NAMESPACES[key]
        kinds: dict[str, Kind] = {}
        for name in sorted(dir(owner)):
            if name.startswith("_") or attribute_problem(name) is not None or name[0].isupper():
                continue  # the allow-list refuses these whatever they return
            if key == "TENSOR_METHODS":
                kind = self.method(name)
            else:
                value = getattr(owner, name)
                kind = Kind.UNKNOWN if isinstance(value, types.ModuleType) else self.function(value)
            if kind is not Kind.UNKNOWN:
                kinds[name] = kind
        return kinds


def derive() -> dict[str, dict[str, Kind]]:
    derivation = Derivation()
    return {key: derivation.namespace(key) for key in NAMESPACES}


def render(table: dict[str, dict[str, Kind]]) -> str:
    """The text of probes/chain/call_kinds.py for ``table``."""
    out = [
        '"""What each torch function and tensor method a chain may call returns: a tensor, tensors, or a Python',
        "value, by name (probes.chain.kinds reads it; a name that is not here is of unknown kind).",
        "",
        "Written by ``python tests/test_call_kinds.py`` from torch's type stubs, annotations and ATen schemas;",
        "tests/test_call_kinds.py checks every entry against the installed torch.",
        '"""',
        "",
        f'TORCH_VERSION = "{torch.__version__.split("+")[0]}"',
        '"""The torch the table was written from."""',
    ]
    for key, kinds in table.items():
        out += ["", f"{key}: dict[str, str] = {{"]
        for kind in Kind:
            names = sorted(name for name, k in kinds.items() if k is kind)
            if names:
                body = textwrap.fill(" ".join(names), 112, break_on_hyphens=False, break_long_words=False)
                out += [f'    "{kind.value}": """', textwrap.indent(body, "    "), '""",']
        out.append("}")
    return "\n".join(out) + "\n"


def table_kinds(key: str) -> dict[str, Kind]:
    return {name: Kind(kind) for kind, names in getattr(call_kinds, key).items() for name in names.split()}


def _claims(kinds: Iterable[tuple[str, Kind]]) -> dict[str, Kind]:
    return {name: kind for name, kind in kinds if kind in SAFETY_CLAIMS}


@pytest.fixture(scope="module")
def derived() -> dict[str, dict[str, Kind]]:
    return derive()


@pytest.mark.parametrize("key", list(NAMESPACES))
def test_no_claim_of_the_table_is_contradicted_by_this_torch(key: str, derived: dict[str, dict[str, Kind]]) -> None:
    """A name the table says returns a tensor, tensors, a number or a shape does so here too, for
    every overload: the guard leaves such calls unchecked, so a wrong claim would let a Python value
    grow unchecked. (On another torch than the table's, a name this torch no longer annotates, such
    as a method turned into a Python wrapper that only raises, is not a contradiction; on the
    table's own torch the next test wants every kind equal.)"""
    here = derived[key]
    wrong = {
        name: (kind, here[name])
        for name, kind in _claims(table_kinds(key).items()).items()
        if name in here and here[name] is not kind
    }
    assert not wrong, f"{key}: table kind vs this torch's: {wrong}"


def test_the_table_is_the_one_this_torch_writes(derived: dict[str, dict[str, Kind]]) -> None:
    if torch.__version__.split("+")[0] != call_kinds.TORCH_VERSION:
        pytest.skip(f"the table was written from torch {call_kinds.TORCH_VERSION}")
    assert TABLE.read_text() == render(derived), "run `python tests/test_call_kinds.py` to write it again"


@pytest.mark.parametrize(
    ("key", "name", "kind"),
    [
        ("TORCH", "relu", Kind.TENSOR),
        ("TORCH", "get_num_interop_threads", Kind.NUMBER),
        ("TORCH", "get_float32_matmul_precision", Kind.TEXT),
        ("TORCH", "split", Kind.TENSORS),
        ("TORCH", "nonzero", Kind.SOME_TENSORS),
        ("TORCH", "sort", Kind.TENSORS),
        ("TORCH", "max", Kind.SOME_TENSORS),
        ("TORCH", "numel", Kind.NUMBER),
        ("FUNCTIONAL", "scaled_dot_product_attention", Kind.TENSOR),
        ("FUNCTIONAL", "gelu", Kind.TENSOR),
        ("LINALG", "svd", Kind.TENSORS),
        ("FFT", "rfft", Kind.TENSOR),
        ("SPECIAL", "erf", Kind.TENSOR),
        ("TENSOR_METHODS", "relu", Kind.TENSOR),
        ("TENSOR_METHODS", "unbind", Kind.TENSORS),
        ("TENSOR_METHODS", "numel", Kind.NUMBER),
        ("TENSOR_METHODS", "is_contiguous", Kind.NUMBER),
    ],
)
def test_the_table_knows_common_names(key: str, name: str, kind: Kind) -> None:
    assert table_kinds(key).get(name) is kind


@pytest.mark.parametrize(
    ("key", "name"),
    [("TENSOR_METHODS", "dim_order"), ("FUNCTIONAL", "max_pool2d"), ("TORCH", "unique")],
)
def test_names_whose_result_depends_on_arguments_are_left_unknown(key: str, name: str) -> None:
    assert name not in table_kinds(key)


if __name__ == "__main__":
    TABLE.write_text(render(derive()))
    print(f"wrote {TABLE}")
