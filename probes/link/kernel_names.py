"""Readable names for kernels, and which ones count as real device work.

Pure string functions (no torch), so the UI, the replay worker and the tests can use them too.
"""

from __future__ import annotations

import re

from probes.link.protocol import KernelKind

MAX_SHORT_NAME = 60

_GRAPH_PREFIX = re.compile(r"^graph_\d+_")
_INDUCTOR_KERNEL = re.compile(r"^(?:graph_\d+_)?(triton|cpp)_(?:[a-z]+_)?fused_(.+?)(?:_\d+)?$")
_NAMED_FUNCTOR = re.compile(r"(?:^|::|<|\s)(\w+?)_functor\b")
_LAMBDA_OWNER = re.compile(r"(\w+)\([^()]*\)::\{lambda")

BOOKKEEPING_OPS = frozenset(
    f"aten::{name}"
    for name in (
        "empty",
        "empty_strided",
        "empty_like",
        "resize_",
        "as_strided",
        "view",
        "_reshape_alias",
        "reshape",
        "expand",
        "t",
        "transpose",
        "permute",
        "detach",
        "alias",
        "unsqueeze",
        "squeeze",
        "select",
        "slice",
        "lift_fresh",
        "_unsafe_view",
        "unbind",
        "split",
        "chunk",
        "narrow",
        "contiguous",
        "result_type",
        "is_nonzero",
        "item",
        "_local_scalar_dense",
        "set_",
        "_to_copy_meta",
        "view_as",
        "expand_as",
        "diagonal",
        "unfold",
        "flatten",
        "ravel",
        "split_with_sizes",
        "resolve_conj",
        "resolve_neg",
        "conj",
        "_conj",
        "_neg_view",
        "is_same_size",
        "size",
        "stride",
        "numel",
        "dim",
        "is_complex",
        "is_floating_point",
        "_has_compatible_shallow_copy_type",
        # In place on the metadata: oneDNN's convolution sets its output's strides with as_strided_,
        # which, counted as work, stood for the convolution itself (microseconds of a seconds-long call).
        "as_strided_",
        "_nnpack_available",
        "resize_as_",
        "squeeze_",
        "unsqueeze_",
        "t_",
        "transpose_",
        "detach_",
    )
)
"""CPU leaf ops that allocate or reshape metadata but do no pass over memory."""


def classify_device_event(name: str) -> KernelKind:
    """memcpy and memset rows are shown apart from kernels and never counted as kernels."""
    lowered = name.lower()
    if lowered.startswith("memcpy") or "memcpy" in lowered.split("(")[0]:
        return "memcpy"
    if lowered.startswith("memset") or "memset" in lowered.split("(")[0]:
        return "memset"
    return "kernel"


def is_cpu_work_op(name: str) -> bool:
    """On the CPU the 'kernels' are leaf ATen ops doing work and Inductor's ``cpp_*`` kernels."""
    if _INDUCTOR_KERNEL.match(name) or _GRAPH_PREFIX.match(name):
        return True
    return name.startswith("aten::") and name not in BOOKKEEPING_OPS


def fused_ops(kernel_name: str) -> list[str]:
    """The op names Inductor encoded in a kernel name: ``triton_poi_fused_add_relu_0`` -> [add, relu].

    Names are truncated by Inductor for long chains, so this is a hint; the generated source's
    "Original ATen" comment is authoritative when available.
    """
    match = _INDUCTOR_KERNEL.match(kernel_name)
    if not match:
        return []
    return [part for part in match.group(2).split("_") if part and not part.isdigit()]


def strip_graph_prefix(name: str) -> str:
    """``graph_0_cpp_fused_add_relu_0`` (profiler row) -> ``cpp_fused_add_relu_0`` (source name)."""
    return _GRAPH_PREFIX.sub("", name)


def _split_top_level(text: str, sep: str = ",") -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _unqualified(name: str) -> str:
    depth, cut = 0, 0
    for i, ch in enumerate(name):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == ":" and depth == 0:
            cut = i + 1
    return name[cut:]


_WRAPPER_FUNCTORS = ("BinaryFunctor", "AUnaryFunctor", "BUnaryFunctor", "UnaryFunctor")
_INNER_FUNCTOR = re.compile(r"(\w+Functor\w*)")


def _functor_name(text: str) -> str:
    """``CUDAFunctor_add<float>`` -> ``add``; ``FillFunctor<signed char>`` -> ``Fill``;
    ``BinaryFunctor<float, float, float, MulFunctor<float>>`` -> ``Mul`` (the op, not the wrapper)."""
    base = text.partition("<")[0]
    if base in _WRAPPER_FUNCTORS:
        inner = [f for f in _INNER_FUNCTOR.findall(text.partition("<")[2]) if f not in _WRAPPER_FUNCTORS]
        if inner:
            base = inner[-1]
    for prefix in ("CUDAFunctor_", "CUDAFunctorOnSelf_", "CUDAFunctorOnOther_"):
        base = base.removeprefix(prefix)
    return base.removesuffix("Functor") or text


def short_name(name: str) -> str:
    """A readable name for a (possibly mangled, templated) kernel name.

    ``void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, ...>(...)``
    becomes ``vectorized_elementwise_kernel<CUDAFunctor_add<float>>``; lambdas are named after the
    function that defines them (``launch_clamp_scalar``). Inductor and cuBLAS names pass unchanged.
    """
    text = strip_graph_prefix(name.strip()).replace("(anonymous namespace)::", "")
    if text.startswith("aten::"):
        return text[:MAX_SHORT_NAME]
    if text.startswith("void "):
        text = text[5:]
    # Drop the parameter list: the last top-level "(...)" group.
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            text = text[:i]
            break
    base, _, args = text.partition("<")
    base = _unqualified(base)
    if not args:
        return base[:MAX_SHORT_NAME]
    detail = ""
    candidates = _split_top_level(args.rstrip(">"))
    functors = [arg for arg in candidates if "Functor" in arg.partition("<")[0]]
    for arg in functors or candidates:
        functor = _NAMED_FUNCTOR.search(arg)
        if functor:
            detail = functor.group(1)
            break
        if "lambda" in arg:
            owner = _LAMBDA_OWNER.search(arg)
            detail = owner.group(1).removeprefix("launch_") if owner else "lambda"
            break
        if arg and not arg[0].isdigit() and not arg.startswith(("std::", "bool", "int", "unsigned", "long")):
            detail = _functor_name(_unqualified(arg))
            break
    result = f"{base}<{detail}>" if detail else base
    if len(result) > MAX_SHORT_NAME:
        result = result[: MAX_SHORT_NAME - 1] + "…"
    return result
