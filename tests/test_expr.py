"""probes.chain.expr: what chains are accepted, what they compute, and that nothing else gets through."""

from __future__ import annotations

import ast
import builtins
import pickle
import re
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probes.chain.expr import (
    DTYPE_ALIASES,
    ChainError,
    InputDecl,
    ParsedChain,
    canonical_dtype,
    parse_chain,
)
from probes.engine.inputs import input_specs, make_inputs
from probes.link.protocol import ChainErrorInfo
from probes.link.summary import parse_sizes

NAMESPACE: dict[str, object] = {"torch": torch, "F": F}
CORPUS = Path(__file__).parent / "data" / "escape_corpus.txt"


def error_of(text: str) -> ChainErrorInfo:
    with pytest.raises(ChainError) as caught:
        parse_chain(text)
    assert str(caught.value) == caught.value.info.located()
    return caught.value.info


def run(chain: ParsedChain, n: int, *tensors: torch.Tensor) -> object:
    return chain.build_function(NAMESPACE)(*tensors, N=n)


# ---------------------------------------------------------------------------------------------
# Accepted chains
# ---------------------------------------------------------------------------------------------

DEFAULT = InputDecl("a", ("N",), None)


@pytest.mark.parametrize(
    ("text", "used"),
    [
        ("(a + b).relu()", ["a", "b"]),
        ("a + b", ["a", "b"]),
        ("(a * b).sum()", ["a", "b"]),
        ("torch.relu(a + b)", ["a", "b"]),
        ("F.gelu(a)", ["a"]),
        ("a.to(torch.bfloat16)", ["a"]),
        ("a[::2] + b[1::2]", ["a", "b"]),
        ("torch.where(a > 0, a, b)", ["a", "b"]),
        ("a.view(N // 2, 2)", ["a"]),
        ("b * 2 + a", ["b", "a"]),
        ("c.sigmoid() * a", ["c", "a"]),
        ("torch.linalg.vector_norm(a)", ["a"]),
        ("torch.nn.functional.silu(a, inplace=False)", ["a"]),
        ("a.T", ["a"]),
        ("torch.pi * a", ["a"]),
        ("max(N, 2) * a", ["a"]),
        ("a.clamp(min=-1.0, max=None)[..., 0:N:1]", ["a"]),
        ("torch.finfo(torch.float16).max * a", ["a"]),
        ("a if N > 10 else b", ["a", "b"]),
    ],
)
def test_accepted_chains_report_their_inputs_in_first_use_order(text: str, used: list[str]) -> None:
    chain = parse_chain(text)
    assert chain.text == text
    assert [decl.name for decl in chain.inputs] == used
    assert all(decl.dims == ("N",) and decl.dtype is None and decl.line is None for decl in chain.inputs)
    assert chain.result_name is None


def test_declarations_give_shapes_dtypes_and_lines() -> None:
    chain = parse_chain("x: [N, 64] bf16\nw: [64, 64]   # weights\n\nx @ w")
    x, w = chain.inputs
    assert x == InputDecl("x", ("N", "64"), "bf16", 1)
    assert w == InputDecl("w", ("64", "64"), None, 2)
    assert x.shape(8) == (8, 64)
    assert w.shape(8) == (64, 64)


def test_declarations_override_defaults_and_unused_ones_are_left_out() -> None:
    chain = parse_chain("a: [N, 4] half\ni: [N] int64\nunused: [3]\n(a * 2).sum()")
    assert chain.inputs == (InputDecl("a", ("N", "4"), "fp16", 1),)


def test_declarations_may_come_anywhere_and_keep_line_numbers() -> None:
    chain = parse_chain("t = x + 1\nx: [N//4, 2*N, 4_096] i32\nt.sum()")
    (x,) = chain.inputs
    assert x.dims == ("N//4", "2*N", "4_096") and x.dtype == "int32" and x.line == 2
    assert x.shape(8) == (2, 16, 4096)
    assert parse_chain("s: [] fp64\na * s").inputs[1].shape(5) == ()


def test_shape_refuses_non_positive_dims() -> None:
    decl = parse_chain("x: [N - 200]\nx").inputs[0]
    assert decl.shape(300) == (100,)
    with pytest.raises(ChainError) as caught:
        decl.shape(100)
    assert caught.value.info.kind == "input"
    assert caught.value.info.line == 1
    assert "-100" in str(caught.value) and "N=100" in str(caught.value)
    with pytest.raises(ChainError, match="divides by zero"):
        parse_chain("x: [4 // (N - 1)]\nx").inputs[0].shape(1)


def test_multi_line_chains_and_result_names() -> None:
    chain = parse_chain("t = a + b\nt.relu()")
    assert [d.name for d in chain.inputs] == ["a", "b"] and chain.result_name is None
    chain = parse_chain("# fused\nt = a + b\n\nc = t.relu()  # result\n")
    assert [d.name for d in chain.inputs] == ["a", "b"]
    assert chain.result_name == "c"
    # `a` is reassigned before it is read again: the input is only the first `a`
    assert [d.name for d in parse_chain("a = b * 2\na.relu()").inputs] == ["b"]


def test_dtype_aliases() -> None:
    assert canonical_dtype("float32") == canonical_dtype("F32") == canonical_dtype("float") == "fp32"
    assert canonical_dtype("bfloat16") == canonical_dtype("torch.bfloat16") == "bf16"
    assert canonical_dtype("half") == canonical_dtype("float16") == "fp16"
    assert canonical_dtype("double") == "fp64"
    assert canonical_dtype("long") == "int64" and canonical_dtype("int") == "int32"
    assert set(DTYPE_ALIASES.values()) == {
        "fp32",
        "bf16",
        "fp16",
        "fp64",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    }
    with pytest.raises(ChainError) as caught:
        canonical_dtype("bf17")
    assert caught.value.info.kind == "input" and "bf16" in caught.value.info.message


# ---------------------------------------------------------------------------------------------
# build_function
# ---------------------------------------------------------------------------------------------


def test_built_functions_compute_the_chain() -> None:
    a, b = torch.randn(8), torch.randn(8)
    torch.testing.assert_close(run(parse_chain("(a + b).relu()"), 8, a, b), (a + b).relu())
    torch.testing.assert_close(run(parse_chain("(a * b).sum()"), 8, a, b), (a * b).sum())
    torch.testing.assert_close(run(parse_chain("torch.where(a > 0, a, b)"), 8, a, b), torch.where(a > 0, a, b))
    torch.testing.assert_close(run(parse_chain("a[::2] + b[1::2]"), 8, a, b), a[::2] + b[1::2])
    torch.testing.assert_close(run(parse_chain("a.view(N // 2, 2)"), 8, a), a.view(4, 2))
    torch.testing.assert_close(run(parse_chain("F.gelu(a)"), 8, a), F.gelu(a))
    assert run(parse_chain("a.to(torch.bfloat16)"), 8, a).dtype == torch.bfloat16  # type: ignore[attr-defined]
    torch.testing.assert_close(run(parse_chain("t = a + b\nt.relu()"), 8, a, b), (a + b).relu())
    torch.testing.assert_close(run(parse_chain("t = a + b\nc = t * 2"), 8, a, b), (a + b) * 2)


def test_built_function_takes_inputs_in_order_then_n() -> None:
    chain = parse_chain("x: [N, 4]\nw: [4, 3]\nx @ w + a[:, None] * N")
    assert [d.name for d in chain.inputs] == ["x", "w", "a"]
    x, w, a = (torch.randn(*d.shape(5)) for d in chain.inputs)
    torch.testing.assert_close(chain.build_function(NAMESPACE)(x, w, a, N=5), x @ w + a[:, None] * 5)


def test_built_function_has_only_the_allowed_builtins() -> None:
    chain_builtins = parse_chain("a").build_function(NAMESPACE).__globals__["__builtins__"]
    assert set(chain_builtins) == {
        "abs",
        "min",
        "max",
        "int",
        "float",
        "bool",
        "len",
        "round",
        "slice",
        "__import__",
    }
    # __import__ is there for torch's C++ side only, and hands back nothing not already loaded
    assert chain_builtins["__import__"]("torch.nn", fromlist=("functional",)) is torch.nn
    with pytest.raises(ImportError):
        chain_builtins["__import__"]("antigravity")


def test_runtime_errors_point_at_the_users_line() -> None:
    function = parse_chain("x: [N, 3]\n\nt = a + b\nt.no_such_method()").build_function(NAMESPACE)
    with pytest.raises(AttributeError) as caught:
        function(torch.randn(3), torch.randn(3), N=3)
    frame = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert (frame.filename, frame.lineno) == ("<chain>", 4)


def test_torch_compile_traces_the_built_function() -> None:
    compiled = torch.compile(parse_chain("t = a + b\nt.relu() * N").build_function(NAMESPACE), backend="eager")
    a, b = torch.randn(16), torch.randn(16)
    torch.testing.assert_close(compiled(a, b, N=16), (a + b).relu() * 16)


def test_build_function_revalidates_the_text() -> None:
    forged = ParsedChain("__import__('os')", (), None)
    with pytest.raises(ChainError):
        forged.build_function(NAMESPACE)


def test_module_does_not_import_torch() -> None:
    code = "import sys, probes.chain.expr; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


def test_chain_error_pickles_whole() -> None:
    exc = pickle.loads(pickle.dumps(ChainError(ChainErrorInfo("syntax", "boom", 2, 3))))
    assert exc.info == ChainErrorInfo("syntax", "boom", 2, 3)
    assert str(exc) == "line 2, col 3: boom"


# ---------------------------------------------------------------------------------------------
# Refused chains
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "where", "words"),
    [
        ("__import__('os')", "rejected", (1, 1), "calls to '__import__'"),
        ("a.__class__", "rejected", (1, 3), "attribute '__class__' is not allowed (no dunder"),
        ("a.__class__.__subclasses__()", "rejected", (1, 3), "'__class__'"),
        ("a + b.__class__", "rejected", (1, 7), "'__class__'"),
        ("open('x')", "rejected", (1, 1), "calls to 'open' are not allowed"),
        ("eval('1')", "rejected", (1, 1), "calls to 'eval' are not allowed"),
        ("exec('1')", "rejected", (1, 1), "calls to 'exec' are not allowed"),
        ("getattr(a, 'x')", "rejected", (1, 1), "calls to 'getattr' are not allowed"),
        ("lambda x: x", "rejected", (1, 1), "lambda is not allowed"),
        ("[x for x in a]", "rejected", (1, 1), "list comprehension"),
        ("(x for x in a)", "rejected", (1, 1), "generator expression"),
        ("torch.load('f')", "rejected", (1, 7), "'load'"),
        ("torch.save(a,'f')", "rejected", (1, 7), "'save'"),
        ("torch.ops.aten.add(a, b)", "rejected", (1, 7), "'ops'"),
        ("torch.hub.load('x', 'y')", "rejected", (1, 7), "'hub'"),
        ("torch.utils.cpp_extension.load_inline('x', 'y')", "rejected", (1, 7), "'utils'"),
        ('"{0.__class__}".format(a)', "rejected", (1, 1), "attributes of constants"),
        ("a.__globals__", "rejected", (1, 3), "'__globals__'"),
        ('f"{a}"', "rejected", (1, 1), "f-string"),
        ("import os", "rejected", (1, 1), "import is not allowed"),
        ("a.storage()", "rejected", (1, 3), "raw memory"),
        ("a.item()", "rejected", (1, 3), "host"),
        ("a.tolist()", "rejected", (1, 3), "host"),
        ("torch.Tensor.__add__", "rejected", (1, 7), "classes"),
        ("torch.nn.Module()", "rejected", (1, 10), "not a layer a chain may construct"),
        ("torch.linalg.norm.x(a)", "rejected", (1, 19), "torch.linalg/fft/special"),
        ("vars()", "rejected", (1, 1), "calls to 'vars'"),
        ("globals()", "rejected", (1, 1), "calls to 'globals'"),
        ("breakpoint()", "rejected", (1, 1), "calls to 'breakpoint'"),
        ("print", "rejected", (1, 1), "the name 'print' is not allowed"),
        ("(a)(b)", "rejected", (1, 2), "'a' cannot be called (only functions"),
        ("t = torch\nt.relu(a)", "rejected", (1, 5), "'torch' can only be used"),
        ("a = b = c", "rejected", (1, 1), "chained assignment"),
        ("a.x = 1", "rejected", (1, 1), "only `name = ...` assignments"),
        ("N = 3\na", "rejected", (1, 1), "cannot assign to 'N'"),
        ("a += 1", "rejected", (1, 1), "augmented assignment"),
        ("a\ndel a", "rejected", (2, 1), "del is not allowed"),
        ("é + a", "rejected", (1, 1), "non-ASCII name 'é'"),
        ("a + ｂ", "rejected", (1, 5), "non-ASCII name 'ｂ'"),
        ("'é' + a  # ça va", None, None, None),
        ("a[" + ", ".join(["0"] * 65) + "]", "rejected", (1, 3), "over 64 elements"),
        ("'" + "x" * 201 + "'", "rejected", (1, 1), "over 200 characters"),
        ("b'x'", "rejected", (1, 1), "bytes"),
        (
            "d + 1",
            "input",
            (1, 1),
            "unknown name 'd': the inputs are a, b, c; declare others like `d: [N] fp32`",
        ),
        ("x: [N]\ny", "input", (2, 1), "the inputs are a, b, c, x"),
        ("t.relu()\nt = a", "input", (1, 1), "'t' is used before it is assigned on line 2"),
        ("x: [N] bf17\nx", "input", (1, 8), "unknown dtype 'bf17': use one of fp32, bf16"),
        ("x: [N, 0]\nx", "input", (1, 8), "dim '0' is 0"),
        ("x: [N, N ** 2]\nx", "input", (1, 8), "may use only integers"),
        ("x: [N, ]\nx", None, None, None),
        ("x: [N,, 4]\nx", "input", (1, 7), "empty"),
        ("x: [N] fp32 extra\nx", "input", (1, 1), "bad input declaration"),
        ("torch: [N]\na", "input", (1, 1), "'torch' is a reserved name"),
        ("print: [N]\na", "input", (1, 1), "'print' is a reserved name"),
        ("x: [N]\nx: [4]\nx", "input", (2, 1), "'x' is already declared on line 1"),
        # torch.nn layers: literal arguments with caps, only ever called (probes.chain.layers)
        ("nn.Linear(64, 128)", "syntax", (1, 1), "nn.Linear(...) is a layer, not a tensor: call it"),
        ("nn.Linear(64, 128).weight.data.fill_(0)", "rejected", (1, 1), "makes a layer"),
        ("lin = nn.Linear(64, 64)\nlin.weight.data.fill_(0)", "rejected", (2, 1), "'lin' holds a layer"),
        ("lin = nn.Linear(64, 64)\nlin.__class__", "rejected", (2, 1), "'lin' holds a layer"),
        ("nn.Linear(64, 64).__class__", "rejected", (1, 19), "'__class__' is not allowed"),
        ("lin = nn.Linear(64, 64)\ntorch.relu(lin)", "rejected", (2, 12), "'lin' holds a layer"),
        ("lin = nn.Linear(64, 64)\nm = lin\na", "rejected", (2, 5), "'lin' holds a layer"),
        ("lin = nn.Linear(64, 64)", "syntax", (1, 7), "the chain's result is a layer"),
        ("torch.add(a, nn.ReLU())", "rejected", (1, 14), "makes a layer"),
        ("nn.Linear(nn.Linear(1, 1)(a), 1)(a)", "rejected", (1, 11), "must be a literal"),
        ("nn.Linear(N, 128)(a)", "rejected", (1, 11), "must be a literal"),
        ("nn.Linear(2 ** 40, 1)(a)", "rejected", (1, 11), "must be a literal"),
        ("nn.Linear(2147483648, 1)(a)", "rejected", (1, 11), "an int literal from 1 to 2,147,483,647"),
        ("nn.Linear(0, 1)(a)", "rejected", (1, 11), "an int literal from 1"),
        ("nn.Linear(True, 1)(a)", "rejected", (1, 11), "an int literal"),
        ("nn.Linear(64)(a)", "rejected", (1, 1), "nn.Linear needs out_features"),
        ("nn.Linear(1, 2, True, 4)(a)", "rejected", (1, 23), "takes at most 3 arguments"),
        ("nn.Linear(1, 2, device='cuda')(a)", "rejected", (1, 17), "device is the run's"),
        ("nn.Linear(1, 2, dtype=torch.float64)(a)", "rejected", (1, 17), "dtype is the run's"),
        ("nn.Linear(1, 2, bias=1)(a)", "rejected", (1, 22), "must be True or False"),
        ("nn.Linear(1, 2, weight=None)(a)", "rejected", (1, 17), "no argument 'weight'"),
        ("nn.GELU(approximate='erf')(a)", "rejected", (1, 21), "one of 'none', 'tanh'"),
        ("nn.Conv2d(3, 8, 3, padding_mode='reflect')(a)", "rejected", (1, 33), "one of 'zeros'"),
        ("nn.Dropout(2.0)(a)", "rejected", (1, 12), "from 0 to 1"),
        ("nn.LayerNorm(64, eps=float('nan'))(a)", "rejected", (1, 22), "must be a literal"),
        ("nn.Embedding(10, 4, sparse=True)(a)", "rejected", (1, 28), "False (the default)"),
        ("nn.Linear(1, 1)(a, b)", "rejected", (1, 1), "called with one input"),
        ("nn.Linear(1, 1)(input=a)", "rejected", (1, 1), "called with one input"),
        ("nn.Linear(1, 1)(a)(b)", "rejected", (1, 1), "only functions and methods can be called"),
        ("nn.Module()(a)", "rejected", (1, 4), "nn.Module is not a layer a chain may construct"),
        ("nn.Sequential(nn.Linear(1, 1))(a)", "rejected", (1, 4), "nn.Sequential is not a layer"),
        ("torch.nn.Parameter(a)", "rejected", (1, 10), "nn.Parameter is not a layer"),
        ("nn.modules.linear.Linear(1, 1)(a)", "rejected", (1, 19), "classes"),
        ("nn.init.zeros_(a)", "rejected", (1, 4), "nn.<Layer>(...) can be used"),
        ("f = nn.Linear\na", "rejected", (1, 8), "can only be constructed and called"),
        ("nn", "rejected", (1, 1), "'nn' can only be used as nn.<Layer>(...)(x)"),
        ("nn: [N]\na", "input", (1, 1), "'nn' is a reserved name"),
        ("(nn.ReLU() if N else nn.GELU())(a)", "rejected", (1, 2), "only functions and methods can be called"),
        ("nn.Linear(64, 128)(a)", None, None, None),
        ("torch.nn.LayerNorm((4, 64), 1e-6, False)(a)", None, None, None),
        ("lin = nn.Linear(64, 64)\nlin(lin(a))", None, None, None),
        ("nn.functional.gelu(a)", None, None, None),
    ],
)
def test_refusals_name_the_reason_and_place(
    text: str, kind: str | None, where: tuple[int, int] | None, words: str | None
) -> None:
    if kind is None:
        parse_chain(text)
        return
    info = error_of(text)
    assert (info.kind, (info.line, info.col)) == (kind, where)
    assert words is not None and words in info.message
    assert "Traceback" not in info.message and "<unknown>" not in info.message


def test_a_chain_constructs_at_most_64_layers() -> None:
    layers = "\n".join(f"l{i} = nn.ReLU()" for i in range(64))
    assert len(parse_chain(f"{layers}\nl0(a)").layers) == 64
    info = error_of(f"{layers}\nl64 = nn.ReLU()\na")
    assert info.located() == "line 65, col 7: a chain may construct at most 64 layers"


def corpus() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [line.replace("\\n", "\n") for line in lines if line and not line.startswith("# ")]


def test_the_escape_corpus_is_large() -> None:
    assert len(corpus()) >= 40


@pytest.mark.parametrize("text", corpus())
def test_known_escapes_are_refused(text: str) -> None:
    info = error_of(text)
    assert info.kind in ("rejected", "input"), info  # refused by the checks, not a typo in the corpus


# ---------------------------------------------------------------------------------------------
# Half-typed, empty, huge and hostile text
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("(a +", (1, 1), "'(' was never closed"),
        ("(a + b).", (1, 9), "unexpected end of the chain"),
        ("a +", (1, 4), "unexpected end of the chain"),
        ("a b", (1, 3), "invalid syntax"),
        (" a", (1, 1), "unexpected indent"),
        ("x: [N]\n\n(a +\n", (3, 1), "'(' was never closed"),
        ("a\x00", (1, 2), "null byte"),
    ],
)
def test_syntax_errors_are_plain(text: str, where: tuple[int, int], words: str) -> None:
    info = error_of(text)
    assert (info.kind, (info.line, info.col)) == ("syntax", where)
    assert words in info.message


@pytest.mark.parametrize("text", ["", "   \n\n", "# only a comment", "x: [N, 4] bf16\n# nothing else"])
def test_empty_chains(text: str) -> None:
    info = error_of(text)
    assert info.kind == "syntax"
    assert info.message == "the chain is empty: type an expression such as (a + b).relu()"


@pytest.mark.parametrize(
    ("text", "col", "words"),
    [
        ("(a + b).tanh", 9, ".tanh is not a tensor: call it, as in .tanh()"),
        ("(a + b).ta", 9, ".ta is not a tensor"),
        ("a.relu().tanh", 10, ".tanh is not a tensor"),
        ("a.shape", 3, ".shape is a Python value, not a tensor"),
        ("y = a.relu", 7, ".relu is not a tensor"),
    ],
)
def test_a_chain_ending_in_a_method_of_a_tensor_is_refused_while_typing(text: str, col: int, words: str) -> None:
    info = error_of(text)  # never sent to the worker: the text on the way to .tanh() costs nothing
    assert (info.kind, info.line, info.col) == ("syntax", 1, col)
    assert words in info.message


@pytest.mark.parametrize(
    "text",
    [
        "a.T",
        "a.sum(0).mT",
        "torch.max(a, 0).values",
        "a.sort().indices",
        "a.aminmax().max",
        "torch.linalg.qr(a.reshape(100, -1)).Q",
        "y = a.relu()\ny.real",
    ],
)
def test_tensor_valued_attributes_and_named_tuple_fields_end_a_chain(text: str) -> None:
    parse_chain(text)


def test_every_prefix_while_typing_parses_or_is_a_located_syntax_error() -> None:
    target = "x: [N, 4] bf16\n(a + b).relu() * x.sum()"
    start = target.index("\n") + 1
    for end in range(start, len(target) + 1):
        text = target[:end]
        try:
            parse_chain(text)
        except ChainError as exc:
            assert exc.info.kind == "syntax", (text, exc)
            if text.strip(" \n") != target[: start - 1]:  # the bare declaration is the empty chain
                assert exc.info.line is not None and exc.info.col is not None, text
    for end in range(len("(a + b).relu()") + 1):
        text = "(a + b).relu()"[:end]
        try:
            parse_chain(text)
        except ChainError as exc:
            assert exc.info.kind == "syntax", (text, exc)
            assert end == 0 or (exc.info.line, exc.info.col) != (None, None)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000 + "a" + ")" * 5000,
        "(" * 99 + "a" + ")" * 99,
        "-" * 10_000 + "a",
        "not " * 3000 + "a",
        " + ".join(["a"] * 2500),
        "a" + ".relu()" * 2000,
        "a" + "[0]" * 4000,
        "x: [" + "(" * 5000 + "N" + ")" * 5000 + "]\nx",
        "x: [" + "-" * 9000 + "N]\nx",
        "x: [" + "*".join(["99999"] * 3000) + "]\nx",
    ],
)
def test_deep_and_huge_text_never_escapes(text: str) -> None:
    try:
        chain = parse_chain(text)
    except ChainError as exc:
        assert exc.info.kind in ("syntax", "rejected", "input")
    else:
        for decl in chain.inputs:
            decl.shape(4)


def test_parsing_prints_no_syntax_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_chain("(1if a else b) + 0x1for N")  # tokenizer and compiler warnings alike
        parse_chain(r"a is 1 or '\d' == 'x'").build_function(NAMESPACE)
        error_of("x: [1N]\nx")


def test_depth_and_length_limits() -> None:
    assert "nesting too deep (over 100 levels)" in error_of("-" * 150 + "a").message
    assert "nesting too deep" in error_of(" + ".join(["a"] * 200)).message
    parse_chain(" + ".join(["a"] * 40))
    info = error_of("a" + " " * 20_000)
    assert info.kind == "rejected" and "too long" in info.message


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

SAFE_NAMES = {
    "torch",
    "F",
    "nn",
    "N",
    "abs",
    "min",
    "max",
    "int",
    "float",
    "bool",
    "len",
    "round",
    "slice",
}
SAFE_NODES = (
    ast.Module,
    ast.Expr,
    ast.Assign,
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
    ast.expr_context,
)
NEVER = {
    "load",
    "save",
    "ops",
    "hub",
    "utils",
    "jit",
    "compile",
    "type",
    "format",
    "storage",
    "item",
    "numpy",
}
NEVER_ON_TORCH = {"os", "sys", "system", "builtins", "importlib", "import_module", "Tensor", "Module"}
DECLARATION = re.compile(r"\s*\w+\s*:\s*\[.*")


def _layer_construction(node: ast.AST) -> bool:
    """``nn.X(<literals>)`` or ``torch.nn.X(<literals>)``, X a class name."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or not node.func.attr[0].isupper():
        return False
    path = ast.unparse(node.func.value)
    literal = (ast.Constant, ast.UnaryOp, ast.Tuple, ast.keyword, ast.unaryop, ast.expr_context)
    arguments = [*node.args, *node.keywords]
    return path in ("nn", "torch.nn") and all(
        isinstance(part, literal) for argument in arguments for part in ast.walk(argument)
    )


def assert_within_allow_list(chain: ParsedChain) -> None:
    """An independent, simpler re-check of an accepted chain. A class is only ever an nn layer
    built from literals and called at once, or named by a name that is only ever called."""
    source = "\n".join("" if DECLARATION.fullmatch(line) else line for line in chain.text.split("\n"))
    tree = ast.parse(source)
    known = SAFE_NAMES | {decl.name for decl in chain.inputs} | {"a", "b", "c"}
    known |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    holding_layers = {
        stmt.targets[0].id
        for stmt in tree.body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and _layer_construction(stmt.value)
    }
    for node in ast.walk(tree):
        assert isinstance(node, SAFE_NODES), ast.dump(node)
        parent = parents.get(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        if isinstance(node, ast.Name):
            assert node.id in known, node.id
        if isinstance(node, ast.Name) and node.id in ("torch", "F", "nn"):
            assert isinstance(parent, ast.Attribute), "torch, F and nn only as roots of attributes"
        if isinstance(node, ast.Name) and node.id in holding_layers and isinstance(node.ctx, ast.Load):
            assert called, f"the layer {node.id} only called"
        if _layer_construction(node):
            assert called or isinstance(parent, ast.Assign), "a layer only called or named"
        if isinstance(node, ast.Attribute):
            assert not node.attr.startswith("_") and node.attr not in NEVER, node.attr
            depth, root = 1, node.value
            while isinstance(root, ast.Attribute):
                depth, root = depth + 1, root.value
            if isinstance(root, ast.Name) and root.id in ("torch", "F", "nn"):
                # nothing is taken from a module such as torch.os, and torch values are one deep
                assert not (isinstance(node.value, ast.Attribute) and node.value.attr in NEVER_ON_TORCH)
                assert called or isinstance(parent, ast.Attribute) or (root.id == "torch" and depth == 1)
                assert not node.attr[0].isupper() or _layer_construction(parent), node.attr
        if isinstance(node, ast.Call):
            func = node.func
            assert not isinstance(func, ast.Name) or func.id in SAFE_NAMES - {"torch", "F", "nn", "N"} | holding_layers
            assert not isinstance(func, ast.Call) or _layer_construction(func), ast.unparse(func)


TOKENS = [
    "__import__",
    "os",
    "open",
    "eval",
    "getattr",
    "system",
    "__class__",
    "__globals__",
    "load",
    "format",
    "'{0.__class__}'",
    "lambda",
    "for",
    "in",
    "import",
    "_",
    "a",
    "b",
    "x",
    "t",
    "N",
    "torch",
    "F",
    "relu",
    "sum",
    "sin",
    "gelu",
    "max",
    "int",
    "abs",
    ".",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    "+",
    "*",
    "-",
    "//",
    "@",
    "0",
    "1",
    "2",
    " ",
    "\n",
    "#",
    "[N]",
    "[N, 2]",
    "fp32",
    "'x'",
    '"',
    "'",
    "\\",
    "**",
    "...",
    ";",
    "é",
]


ATOMS = [
    "a",
    "b",
    "N",
    "torch",
    "F",
    "1",
    "2.5",
    "'x'",
    "'{0.__class__}'",
    "os",
    "__import__",
    "open",
    "max",
    "int",
    "t",
    "nn",
]
ATTRS = [
    "relu",
    "sum",
    "abs",
    "T",
    "shape",
    "gelu",
    "sigmoid",
    "linalg",
    "vector_norm",
    "nn",
    "functional",
    "float16",
    "pi",
    "Tensor",
    "__class__",
    "__globals__",
    "__subclasses__",
    "__dict__",
    "mro",
    "load",
    "ops",
    "os",
    "system",
    "format",
    "type",
    "item",
    "storage",
    "import_module",
    "builtins",
    "Linear",
    "ReLU",
    "Module",
    "weight",
    "data",
]


def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, st.sampled_from(ATTRS)).map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(inner, st.lists(inner, max_size=2)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.tuples(inner, st.sampled_from(["+", "*", "@", "<", "if N else"]), inner).map(lambda t: f"({' '.join(t)})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
    )


def token_text() -> st.SearchStrategy[str]:
    """Token soup (mostly half-typed text) and well-formed expressions over risky names."""
    soup = st.lists(st.sampled_from(TOKENS), max_size=14).map("".join)
    expr = st.recursive(st.sampled_from(ATOMS), extend, max_leaves=6)
    program = st.tuples(expr, expr).map(lambda t: f"t = {t[0]}\n{t[1]}")
    return soup | expr | program


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120) | st.text(alphabet="()[]{}.,:=+-*/ \n\t#'\"\\_abcNxF0123456789é\x00\r", max_size=120))
def test_random_text_only_ever_raises_chain_error(text: str) -> None:
    try:
        parse_chain(text)
    except ChainError as exc:
        assert exc.info.kind in ("syntax", "rejected", "input")


class Recorder:
    """Stands in for builtins.__import__/open while a chain runs, and records what it must not do:
    open anything, load a module not loaded yet, or import from the chain's own code. (torch itself
    re-imports loaded modules lazily, e.g. in Tensor.__rsub__: that is fine.)"""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def importer(self, name: str, *args: object, **kwargs: object) -> object:
        if name not in sys.modules or sys._getframe(1).f_code.co_filename == "<chain>":
            self.calls.append(f"import {name}")
        return ORIGINAL_IMPORT(name, *args, **kwargs)  # type: ignore[arg-type]

    def opener(self, *args: object, **kwargs: object) -> object:
        self.calls.append(f"open {args!r}")
        raise PermissionError("open is not allowed in a chain")


ORIGINAL_IMPORT = builtins.__import__
ORIGINAL_OPEN = builtins.open


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token_text())
def test_accepted_token_soup_stays_in_the_allow_list_and_never_imports_or_opens(text: str) -> None:
    try:
        chain = parse_chain(text)
    except ChainError as exc:
        assert exc.info.kind in ("syntax", "rejected", "input")
        return
    assert_within_allow_list(chain)
    try:
        specs = input_specs(chain, 4, "fp32")
        if sum(spec.nbytes for spec in specs) > 10**6:
            return
        tensors = [torch.randn(spec.shape) for spec in specs if spec.layer is None]
        tensors += make_inputs([spec for spec in specs if spec.layer is not None], torch.device("cpu"), 4)
        function = chain.build_function(NAMESPACE)
    except ChainError:
        return  # e.g. a declared dim that is not positive at N=4, a layer its constructor refuses
    recorder = Recorder()
    builtins.open = recorder.opener  # type: ignore[assignment]
    builtins.__import__ = recorder.importer  # type: ignore[assignment]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's deprecation notes about odd indexing
            function(*tensors, N=4)
    except Exception:
        pass
    finally:
        builtins.__import__ = ORIGINAL_IMPORT
        builtins.open = ORIGINAL_OPEN
    assert recorder.calls == [], (text, recorder.calls)


@pytest.mark.parametrize(
    "text",
    [
        "a * 0 + 10 ** 10 ** 8",
        "a + 2 ** N",
        "a * N ** N",
        "a + 10 ** 100",
        "'x' * 10 ** 9 and a",
        "[0] * 10 ** 9 and a",
        "max(range(10 ** 12)) + a",
    ],
)
def test_chains_that_would_hang_before_any_tensor_op_are_rejected(text: str) -> None:
    with pytest.raises(ChainError) as info:
        parse_chain(text)
    assert info.value.info.kind == "rejected"


@pytest.mark.parametrize("text", ["a ** 2", "(a - b) ** 2.5", "a ** -1", "a ** b", "torch.pow(a, 3) * 2"])
def test_ordinary_powers_are_fine(text: str) -> None:
    parse_chain(text)


# ---------------------------------------------------------------------------------------------
# Plain Python stays bounded: the allow-list's rules and the run-time caps (probes.chain.limits)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("x = 10 ** 9\n10 ** x + a", (2, 7), "both sides of ** must be number literals"),
        ("2 ** int(10 ** 10) + a", (1, 6), "both sides of ** must be number literals"),
        ("x = 2 ** 64\ny = x ** 64\na", (2, 5), "both sides of ** must be number literals"),
        ("N ** 2 * a", (1, 1), "both sides of ** must be number literals"),
        ("k = 60\n(1 << k) * a", (2, 7), "both sides of << must be number literals"),
        ("(1 << 65) * a", (1, 7), "the right side of << must be at most 64"),
        ("round(1.5, -10 ** 9) * a", (1, 1), "round(x, ndigits) is not allowed"),
        ("round(a, ndigits=2)", (1, 1), "round(x, ndigits) is not allowed"),
        ("max(a) + a", (1, 1), "max() of one tensor walks it element by element"),
        ("t = (a + b).relu()\nmin(t)", (2, 1), "min() of one tensor"),
        ("'%0999999999d' % 1 and a", (1, 1), "%-formatting of strings is not allowed"),
        ("m = max\na", (1, 5), "'max' can only be called"),
        ("F.handle_torch_function(max, (a,), a)", (1, 3), "it calls whatever value it is given"),
        ("torch.vmap(a.relu)", (1, 7), "it calls whatever value it is given"),
        ("torch.cond(a.sum() > 0, a.relu, a.sin, (a,))", (1, 7), "it calls whatever value it is given"),
        ("torch.while_loop(a.any, a.relu, (a,))", (1, 7), "it calls whatever value it is given"),
        ("F.has_torch_function_unary(a)", (1, 3), "it calls whatever value it is given"),
    ],
)
def test_python_that_could_hang_is_refused_by_syntax(text: str, where: tuple[int, int], words: str) -> None:
    info = error_of(text)
    assert (info.kind, (info.line, info.col)) == ("rejected", where), info
    assert words in info.message


@pytest.mark.parametrize(
    "text",
    [
        "a ** 100",
        "a ** N",
        "2 ** a",
        "a ** b",
        "(a.long() << 3).float()",
        "x = 2 ** 64\na * (x % 7)",
        "max(N, 2) * a",
        "max(a.shape) * a",
        "round(N / 3) * a",
        "abs(N - 10) * a",
        "min((1, 2, N)) * a",
        "a * (-2) ** 3",
    ],
)
def test_tensor_arithmetic_and_small_python_stay_allowed(text: str) -> None:
    a, b = torch.randn(8), torch.randn(8)
    chain = parse_chain(text)
    assert isinstance(run(chain, 8, *(a, b)[: len(chain.inputs)]), torch.Tensor)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("x = 2 ** 64\n" + "x = x * x\n" * 12 + "a", "Python integer of over 10,000 bits"),
        ("t = a if N > 1 else a.shape\nmax(t) + a", "max() of one value walks it item by item"),
        ("a.shape * 10 ** 9", "repeating a Size 1,000,000,000 times"),
        ("x = [0]\ny = x * 10 ** 9\na", "repeating a list"),
        ("int(1).to_bytes(10 ** 10)\na", "int.to_bytes() is given 10,000,000,000"),
        ("s = 'x'\ns.ljust(4 * 10 ** 9)\na", "str.ljust() is given 4,000,000,000"),
        ("s = 'abcdefghij'\nt = s.replace('', s)\nu = t.replace('', t)\na", "a Python str of over 4,096 items"),
        ("s = 'ab'\n" + "s = s + s\n" * 20 + "a", "a Python str of over 4,096 items"),
        ("t = a.shape\n" + "t = t + t\n" * 20 + "a", "a Python Size of over 4,096 items"),
    ],
)
def test_python_that_could_hang_is_stopped_by_the_caps_as_it_runs(text: str, words: str) -> None:
    function = parse_chain(text).build_function(NAMESPACE)
    begin = time.monotonic()
    with pytest.raises(ChainError) as caught:
        function(torch.randn(8), N=8)
    assert time.monotonic() - begin < 5
    assert caught.value.info.kind == "rejected" and words in caught.value.info.message
    assert caught.value.info.line is not None


def test_tensor_ops_are_compiled_as_written_without_guards() -> None:
    """The code that is measured is the user's: guards only where Python values are built."""
    names = (
        parse_chain("t = (a + b).relu() * 2\nt.sum(dim=0) + a[::2].mean()").build_function(NAMESPACE).__code__.co_names
    )
    assert not [name for name in names if name.startswith("_kt_")], names
    guarded = parse_chain("max(N, 2) * a").build_function(NAMESPACE).__code__.co_names
    assert "_kt_call" in guarded


def test_guarded_python_compiles_into_one_graph() -> None:
    chain = parse_chain("x = a.shape[0] // 2\ny = max(N, 2) * 3 + abs(N - 10)\na.view(x, 2) * y + a.numel()")
    compiled = torch.compile(chain.build_function(NAMESPACE), fullgraph=True, backend="eager")
    a = torch.randn(8)
    torch.testing.assert_close(compiled(a, N=8), a.view(4, 2) * (8 * 3 + 2) + 8)


def fastest_of_five(parse: Callable[[str], object], text: str, error: type[Exception]) -> float:
    """Seconds ``parse(text)`` takes to refuse ``text``, the fastest of five runs: a busy machine
    makes some runs slower, hardly all five."""
    best = float("inf")
    for _ in range(5):
        begin = time.perf_counter()
        with pytest.raises(error):
            parse(text)
        best = min(best, time.perf_counter() - begin)
    return best


def test_declarations_and_sizes_parse_in_linear_time() -> None:
    """Ten times the text takes about ten times as long to refuse, not a hundred (a pattern that
    backtracks over the padding would be quadratic)."""
    cases: list[tuple[Callable[[str], object], type[Exception], Callable[[int], str], int]] = [
        (parse_chain, ChainError, lambda n: "x: [N]" + " " * n + "@\nx", 19_000),
        (parse_chain, ChainError, lambda n: "x: [N] fp32" + " " * n + "@\nx", 19_000),
        (parse_chain, ChainError, lambda n: "x: [" + " " * n + "\nx", 19_000),
        (parse_sizes, ValueError, lambda n: "1e6" + " " * n + "x", 900),
        (parse_sizes, ValueError, lambda n: "1" + "_" * n + "x", 900),
        (parse_sizes, ValueError, lambda n: " " * n + "x", 19_000),
        (parse_sizes, ValueError, lambda n: ",".join(["1e3 "] * (n // 4)) + "x", 800),
    ]
    for parse, error, text, n in cases:
        short, long = (fastest_of_five(parse, text(length), error) for length in (n // 10, n))
        assert long < 30 * short + 1e-3, f"{text(n)[:20]!r}: {short * 1e3:.2f} ms, 10x as long {long * 1e3:.2f} ms"


def test_messages_quoting_the_users_text_are_inert() -> None:
    info = error_of("x: [N\x1bP+qpwned\x1b\\]\nx")
    assert "\x1b" not in info.message and "\\x1bP+qpwned" in info.message
    with pytest.raises(ValueError) as caught:
        parse_sizes("1e3\x1b]52;c;cHduZWQ=\x07")
    assert "\x1b" not in str(caught.value) and "\x07" not in str(caught.value)


PYTHON_ATOMS = [
    "0",
    "1",
    "7",
    "64",
    "10 ** 9",
    "2 ** 64",
    "-3",
    "2.5",
    "N",
    "a.shape",
    "a.shape[0]",
    "'ab'",
    "[0]",
    "(1, 2)",
]


def python_program() -> st.SearchStrategy[str]:
    """A few lines of plain Python over numbers, strings and sequences, each line using the ones
    before it: the shapes of the known hangs (powers of names, repetition, widths, doubling)."""

    def line(names: list[str]) -> st.SearchStrategy[str]:
        atom = st.sampled_from(PYTHON_ATOMS + names)
        binary = st.tuples(atom, st.sampled_from(["*", "**", "<<", "+", "%", "//"]), atom).map(" ".join)
        call = st.one_of(
            st.tuples(
                st.sampled_from(["max", "min", "round", "int", "abs", "len"]), st.lists(atom, min_size=1, max_size=2)
            ).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
            st.tuples(
                atom, st.sampled_from(["ljust", "center", "zfill", "to_bytes", "replace", "count", "index"]), atom
            ).map(lambda t: f"({t[0]}).{t[1]}({t[2]})"),
        )
        return st.one_of(atom, binary, call)

    @st.composite
    def program(draw: st.DrawFn) -> str:
        names: list[str] = []
        lines = []
        for i in range(draw(st.integers(1, 6))):
            lines.append(f"v{i} = {draw(line(names))}")
            names.append(f"v{i}")
        return "\n".join([*lines, f"({', '.join(names)}, a)"])  # every value comes back, to be checked

    return program()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_program())
def test_accepted_plain_python_always_ends_quickly_within_the_caps(text: str) -> None:
    from probes.chain.limits import MAX_INT_BITS, MAX_ITEMS

    try:
        function = parse_chain(text).build_function(NAMESPACE)
    except ChainError as exc:
        assert exc.info.kind == "rejected", exc
        return
    begin = time.monotonic()
    values: tuple[object, ...] = ()
    try:
        values = cast(tuple[object, ...], function(torch.randn(8), N=8))
    except ChainError as exc:
        assert exc.info.kind == "rejected" and exc.info.line is not None, exc
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, IndexError, RuntimeError):
        pass  # ordinary Python errors, which the engine reports as such
    assert time.monotonic() - begin < 5.0, text
    for value in values:
        if isinstance(value, int):
            assert value.bit_length() <= MAX_INT_BITS, text
        if isinstance(value, (str, tuple, list)):
            assert len(value) <= MAX_ITEMS, text
