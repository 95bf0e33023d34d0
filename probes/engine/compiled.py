"""What Inductor generated for a compiled chain: kernel sources, fused ops, and bytes per kernel.

Inductor writes one Python "wrapper" module per compiled graph; its ``call()`` looks each kernel
up by name in the module's globals at run time. That gives us two things without parsing any
internals we do not have to: the generated source of each kernel (inline in the module text), and
the kernels' real tensor arguments (by wrapping those globals for one call).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from probes.engine import torch_compat
from probes.engine.trace import spanned_bytes
from probes.link.kernel_names import fused_ops


@dataclass
class GeneratedKernel:
    name: str
    source: str
    aten_ops: list[str] = field(default_factory=list)
    """``aten::add`` style, from Inductor's "Original ATen" comment above the kernel."""
    arg_names: list[str] = field(default_factory=list)


def wrapper_modules_since(start: int) -> list[ModuleType]:
    """Inductor wrapper modules loaded after the first ``start`` of them."""
    return [m for m in torch_compat.inductor_modules(start) if hasattr(m, "call")]


def loaded_module_count() -> int:
    return torch_compat.inductor_module_count()


def _module_text(module: ModuleType) -> str:
    path = getattr(module, "__file__", None)
    if not path:
        return ""
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _is_aten_op(name: str) -> bool:
    return bool(name) and hasattr(torch.ops.aten, name)


def ops_in_name(kernel_name: str) -> list[str]:
    """The ATen ops a generated kernel's name lists, read as whole op names where the words make
    one: ``cpp_fused_gelu_gelu_backward_0`` -> [gelu, gelu_backward], ``cpp_fused__softmax_0`` ->
    [_softmax] (the words alone, as ``fused_ops`` gives them, where they do not)."""
    if "fused_" not in kernel_name:
        return fused_ops(kernel_name)
    words = kernel_name.split("fused_", 1)[1].split("_")
    while words and words[-1].isdigit():
        words.pop()
    ops, i = [], 0
    while i < len(words):
        length = next((k for k in range(min(10, len(words) - i), 0, -1) if _is_aten_op("_".join(words[i : i + k]))), 0)
        if length:
            ops.append("_".join(words[i : i + length]))
            i += length
        else:
            if words[i] and not words[i].isdigit():
                ops.append(words[i])
            i += 1
    return ops


def generated_kernels(modules: list[ModuleType]) -> dict[str, GeneratedKernel]:
    """Each kernel's generated source and the ATen ops it fused, by kernel name."""
    kernels: dict[str, GeneratedKernel] = {}
    for module in modules:
        for found in torch_compat.generated_sources(_module_text(module)):
            name = found.name
            # C++ kernels carry no "Original ATen" comment: fall back on the name's hint
            ops = found.aten_ops if found.aten_ops is not None else [f"aten::{op}" for op in ops_in_name(name)]
            kernels[name] = GeneratedKernel(
                name=name,
                source=found.source,
                aten_ops=[op for op in ops if op],
                arg_names=found.pointer_params,
            )
    return kernels


class _ArgRecorder:
    """Stands in for one kernel object; records the bytes of its tensor arguments per launch."""

    def __init__(self, kernel: Any, arg_names: list[str], sink: dict[str, int], name: str) -> None:
        self._kernel = kernel
        self._arg_names = arg_names
        self._sink = sink
        self._name = name

    def _record(self, args: tuple[Any, ...]) -> None:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        total = 0
        for i, tensor in enumerate(tensors):
            weight = 2 if i < len(self._arg_names) and self._arg_names[i].startswith("in_out") else 1
            total += weight * spanned_bytes(tensor)
        self._sink[self._name] = self._sink.get(self._name, 0) + total

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self._record(args)
        return self._kernel.run(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._record(args)
        return self._kernel(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._kernel, attr)


@contextlib.contextmanager
def recording_kernel_bytes(modules: list[ModuleType], kernels: dict[str, GeneratedKernel]) -> Iterator[dict[str, int]]:
    """Within the block, every call of a generated kernel adds its argument bytes to the dict."""
    sink: dict[str, int] = {}
    swapped: list[tuple[ModuleType, str, Any]] = []
    for module in modules:
        for name, kernel in kernels.items():
            original = module.__dict__.get(name)
            if original is None:
                continue
            setattr(module, name, _ArgRecorder(original, kernel.arg_names, sink, name))
            swapped.append((module, name, original))
    try:
        yield sink
    finally:
        for module, name, original in swapped:
            setattr(module, name, original)


def launch_config(modules: list[ModuleType], name: str) -> str | None:
    """Triton launch configuration chosen by the autotuner (XBLOCK, warps, stages), if any."""
    for module in modules:
        config = torch_compat.triton_launch_config(module.__dict__.get(name))
        if config is not None:
            return config
    return None


def estimated_kernel_bytes(modules: list[ModuleType]) -> dict[str, int]:
    """Inductor's own bytes estimate per Triton kernel (present with config.benchmark_kernel)."""
    estimates: dict[str, int] = {}
    for module in modules:
        for name, kernel in module.__dict__.items():
            estimate = torch_compat.inductor_bytes_estimate(kernel)
            if estimate is not None:
                estimates[name] = estimate
    return estimates
