"""Why a chain could not be measured, in plain words: whatever torch raised, classified.

The kinds (``ChainErrorInfo.kind``) tell the client what to do: a ``runtime`` error stops the
request, ``memory`` skips one size, ``compile`` one mode, and ``DevicePoisoned`` means the CUDA
context is unusable, so the worker must exit for a fresh one.
"""

from __future__ import annotations

import inspect
import re
import traceback
from typing import Any

import torch

from probes.engine import torch_compat
from probes.engine.watchdog import text_of
from probes.link.protocol import ChainErrorInfo, ErrorKind

CUDA_POISON_MARKERS = (
    "illegal memory access",
    "device-side assert",
    "unspecified launch failure",
    "CUDA error: an illegal instruction",
    "misaligned address",
    "uncorrectable ECC",
)


class MeasureError(Exception):
    """The chain could not be measured; ``info`` says why in plain words."""

    def __init__(self, info: ChainErrorInfo) -> None:
        super().__init__(info.located())
        self.info = info


class DevicePoisoned(MeasureError):
    """A CUDA error that leaves the context unusable: the worker must restart."""


class Cancelled(Exception):
    """The request was cancelled between two steps."""


def _first_line(exc: BaseException) -> str:
    text = text_of(exc).strip() or type(exc).__name__
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("While executing", "Original traceback", "from user code")):
            return line[:300]
    return type(exc).__name__


def _chain_line(exc: BaseException) -> int | None:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == "<chain>":
            return frame.lineno
    return None


_CPU_OOM = re.compile(r"(?:can't allocate memory|not enough memory)(?:.*?tried to allocate (\d+) bytes)?", re.DOTALL)


def check_result(result: Any) -> None:
    """Refuse a chain whose value is not a tensor (or a tuple/list of tensors): ``(a + b).relu``
    (a method), ``a.shape``, ``int(a.sum())``... there would be nothing to measure."""
    if _all_tensors(result):
        return
    if isinstance(result, torch.Size):
        what = f"a shape [{', '.join(map(str, result))}]"
    elif isinstance(result, (tuple, list)):
        what = f"a {type(result).__name__} with items that are not tensors"
    elif inspect.ismethod(result) or isinstance(getattr(result, "__self__", None), torch.Tensor):
        what = "a method"
    elif callable(result) and not isinstance(result, type):
        what = "a function"
    elif isinstance(result, torch.dtype):
        what = f"a dtype ({result})"
    elif isinstance(result, (bool, int, float, complex)):
        what = f"a number ({result!r:.40})"
    elif result is None:
        what = "None"
    else:
        what = f"a {type(result).__name__}"
    hint = ": did you mean to call it, with ()?" if what in ("a method", "a function") else ""
    raise MeasureError(ChainErrorInfo("runtime", f"the chain's result is {what}, not a tensor{hint}"))


def _all_tensors(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    return isinstance(value, (tuple, list)) and len(value) > 0 and all(_all_tensors(v) for v in value)


def _user_cause(exc: BaseException) -> BaseException:
    """The error under torch.compile's wrappers: Dynamo re-raises a shape mismatch as "RuntimeError
    when making fake tensor call", the real reason being the innermost exception of the chain."""
    current, seen = exc, set()
    while torch_compat.is_compiler_error(current):
        seen.add(id(current))
        below = current.__cause__ or current.__context__
        if below is None or id(below) in seen:
            break
        current = below
    return current


def classify_failure(exc: BaseException, mode: str) -> MeasureError:
    """Turn whatever running the chain raised into a plain-words error of the right kind."""
    message = _first_line(exc if mode == "eager" else _user_cause(exc))
    full = text_of(exc)
    if isinstance(exc, torch.OutOfMemoryError) or "out of memory" in full.lower():
        return MeasureError(ChainErrorInfo("memory", f"out of memory: {message}"))
    if isinstance(exc, MemoryError):  # Python itself ([0] * 10 ** 10)
        return MeasureError(
            ChainErrorInfo(
                "memory", "out of memory: the chain built a Python object too large for memory", line=_chain_line(exc)
            )
        )
    cpu_oom = _CPU_OOM.search(full)
    if cpu_oom:  # the CPU allocator's RuntimeError ("[enforce fail at alloc_cpu.cpp] ... can't allocate memory")
        asked = int(cpu_oom.group(1)) if cpu_oom.group(1) else None
        size = f" {asked / 1e9:,.2f} GB at once" if asked else ""
        return MeasureError(ChainErrorInfo("memory", f"out of memory: the chain tried to allocate{size} on the CPU"))
    if any(marker in full for marker in CUDA_POISON_MARKERS):
        return DevicePoisoned(ChainErrorInfo("worker", f"the GPU reported a fatal error: {message}"))
    if "same device" in full:
        hint = "; tensors made in the chain need device=a.device (e.g. torch.ones(N, device=a.device))"
        return MeasureError(ChainErrorInfo("runtime", message + hint, line=_chain_line(exc)))
    if isinstance(exc, RecursionError):
        return MeasureError(ChainErrorInfo("runtime", "the chain nests too deeply to run"))
    kind: ErrorKind = "runtime"
    if mode != "eager" and torch_compat.is_compiler_error(exc):
        if "BackendCompilerFailed" in type(exc).__name__ or "InductorError" in type(exc).__name__:
            kind = "compile"
    return MeasureError(ChainErrorInfo(kind, message, line=_chain_line(exc)))
