"""The memory guard: run the chain on meta tensors first, and refuse what would not fit.

Before anything is allocated at a size, the chain runs once on ``meta`` tensors of the real shapes:
every op's output is sized and nothing is allocated. That run cannot be bypassed:

- every device argument becomes meta (``torch.ones(N * N, device="cuda")`` too) and so does every
  tensor made from Python data, so the trace never allocates for real;
- ops whose output size depends on the data (``nonzero``, ``masked_select``, boolean masks,
  ``unique``) are sized by their upper bound;
- a chain whose meta run fails is not run: an error it would also hit on the device is reported
  before anything is allocated, and anything the guard cannot size (an op with no meta version,
  Python that reads a tensor's values) is refused with the reason;
- it is watched (probes.engine.watchdog): Python that runs for long without reaching a tensor op is
  stopped, and the number of ops is capped.

The chain's plain Python values are capped as it runs (probes.chain.limits), here as in the real run.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import re
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from probes.chain.expr import ChainError, ParsedChain
from probes.engine import torch_compat
from probes.engine.errors import MeasureError, classify_failure
from probes.engine.inputs import InputSpec, layer_bytes, meta_inputs
from probes.engine.trace import OpTrace, RecordingMode
from probes.engine.watchdog import WATCH, ChainStuck, stuck_message, text_of
from probes.link import fast_paths
from probes.link.protocol import ChainErrorInfo

MEMORY_HEADROOM = 0.9
"""Use at most this fraction of free memory; the rest is for the allocator, cuBLAS, Inductor."""
MAX_TRACED_OPS = 10_000
"""More tensor ops than this in one call of a chain (a loop inside a torch function) is refused."""
MAX_PIECES = 4_096
"""An op that would return more tensors than this (``a.split(1)`` at N=1e8) is refused."""

_META = torch.device("meta")
_BOOL_MASKS = (torch.bool, torch.uint8)


def _cpu_available_bytes() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def free_memory(device: torch.device) -> tuple[int, int]:
    """(free, total) bytes; on CUDA, memory the caching allocator holds but does not use is free."""
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return free + cached, total
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return _cpu_available_bytes(), total


def release_memory(device: torch.device, *, full: bool = False) -> None:
    """Give back what finished runs held. Reference counting has freed their tensors already; a
    collection of the young generations catches cycles made since. A full collection walks every
    object Inductor ever built (tens of milliseconds after a few compiles, in the way of the next
    request), so it is only for when memory runs short, where every byte counts, or where the fast
    paths are off (``probes.link.fast_paths``)."""
    if full or not fast_paths.enabled("young_collections"):
        gc.collect()
    else:
        gc.collect(1)
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _fits(nbytes: int, device: torch.device, free: int | None = None) -> tuple[bool, int]:
    """Whether ``nbytes`` fit in the free memory (``free`` where it was just read), and how much is
    free. Before saying no, a full collection: cycles left by a stopped or failed run may still
    hold memory."""
    if free is None:
        free, _ = free_memory(device)
    if nbytes > free * MEMORY_HEADROOM:
        release_memory(device, full=True)
        free, _ = free_memory(device)
    return nbytes <= free * MEMORY_HEADROOM, free


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1e9:.2f} GB" if nbytes >= 1e8 else f"{nbytes / 1e6:.1f} MB"


def _to_meta(value: Any) -> Any:
    if isinstance(value, torch.device):
        return _META
    if isinstance(value, torch.Tensor) and not value.is_meta:
        return value.to(_META)  # a small tensor made from Python data (torch.tensor([1, 2]))
    return value


def _meta_empty(
    shape: tuple[int, ...] | list[int], like: torch.Tensor, dtype: torch.dtype | None = None
) -> torch.Tensor:
    return torch.empty(tuple(shape), dtype=dtype or like.dtype, device=_META)


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, index: int, default: Any) -> Any:
    """An argument of an op, given by position or by name."""
    return kwargs.get(name, args[index] if len(args) > index else default)


_SPLITTERS = frozenset(
    {
        "split",
        "unsafe_split",
        "split_copy",
        "chunk",
        "unsafe_chunk",
        "tensor_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "unbind",
        "unbind_copy",
    }
)


def _pieces(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """How many tensors a splitting function will return, at most (0 when it cannot tell)."""
    tensor = args[0] if args else kwargs.get("input", kwargs.get("self"))
    if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0:
        return 0
    if name in ("unbind", "unbind_copy"):
        return int(tensor.shape[_argument(args, kwargs, "dim", 1, 0)])
    count = (
        args[1] if len(args) > 1 else next((v for k, v in kwargs.items() if k not in ("input", "self", "dim")), None)
    )
    if not isinstance(count, int) or count <= 0:
        return 0  # a list of sizes or indices: Python lists are capped already (probes.chain.limits)
    length = int(tensor.shape[_argument(args, kwargs, "dim", 2, 0)])
    if name in ("split", "unsafe_split", "split_copy"):
        return -(-length // count)
    return min(count, length) if name in ("chunk", "unsafe_chunk") else count


class _PiecesMode(TorchFunctionMode):
    """Refuses a split into more than MAX_PIECES tensors before torch starts on it: millions of
    views would take minutes and the process's memory as Python objects (``a.split(1)`` at 1e8),
    and ``tensor_split(a, 10 ** 9)`` sizes a vector of a billion in C++ first."""

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in _SPLITTERS:
            pieces = _pieces(name, args, kwargs)
            if pieces > MAX_PIECES:
                raise ChainError(
                    ChainErrorInfo(
                        "rejected", f"{name} would return {pieces:,} tensors (over {MAX_PIECES:,}): too many to measure"
                    )
                )
        return func(*args, **kwargs)


def _upper_bound(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The output of an op whose size depends on the data, at its largest; None for other ops."""
    aten = torch.ops.aten
    packet = func.overloadpacket
    if packet is aten.nonzero:
        (x,) = args[:1]
        return _meta_empty((x.numel(), x.dim()), x, torch.long)
    if packet is aten.masked_select:
        x, mask = args[:2]
        return _meta_empty((math.prod(torch.broadcast_shapes(x.shape, mask.shape)),), x)
    if func is aten.index.Tensor:
        x, indices = args[:2]
        masks = [i for i in indices if i is not None and i.dtype in _BOOL_MASKS]
        if not masks or any(mask.dim() == 0 for mask in masks):
            return None
        every: list[torch.Tensor | None] = []
        for index in indices:  # a mask of k dims stands for k index tensors, each as long as the mask
            if index is not None and index.dtype in _BOOL_MASKS:
                every += [_meta_empty((index.numel(),), index, torch.long)] * index.dim()
            else:
                every.append(index)
        return func(x, every)
    unique = torch_compat.unique_op()
    if (unique is not None and packet is unique) or (
        packet is aten.unique_consecutive and _argument(args, kwargs, "dim", 3, None) is None
    ):
        x = args[0]
        first = 2 if packet is unique else 1
        inverse = _argument(args, kwargs, "return_inverse", first, False)
        counts = _argument(args, kwargs, "return_counts", first + 1, False)
        return (
            _meta_empty((x.numel(),), x),
            _meta_empty(x.shape if inverse else (0,), x, torch.long),
            _meta_empty((x.numel(),) if counts else (0,), x, torch.long),
        )
    return None


class _MetaTraceMode(RecordingMode):
    """Records the chain on meta: devices forced to meta, data-dependent sizes bounded, ops
    counted, and each op reported to the plain-Python watch."""

    def __init__(self, trace: OpTrace, tick: Callable[[], None]) -> None:
        super().__init__(trace)
        self.tick = tick
        self.failed_op: str | None = None

    def run_op(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.tick()
        if len(self.trace.ops) >= MAX_TRACED_OPS:
            raise ChainError(
                ChainErrorInfo(
                    "rejected", f"the chain runs over {MAX_TRACED_OPS:,} tensor ops per call: too many to measure"
                )
            )
        args, kwargs = torch_compat.tree_map(_to_meta, (args, kwargs))
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        try:
            bound = _upper_bound(func, args, kwargs)
            return func(*args, **kwargs) if bound is None else bound
        except Exception:
            self.failed_op = str(func.overloadpacket).removeprefix("aten.")
            raise


_META_BROADCAST = re.compile(
    r"Attempting to broadcast a dimension of length (\d+) at (-?\d+)! Mismatching argument at index (\d+) "
    r"had torch\.Size\(\[[^\]]*\]\); but expected shape should be broadcastable to \[([^\]]*)\]"
)
_META_MATMUL = re.compile(r"a and b must have same reduction dim, but got \[([^\]]*)\] X \[([^\]]*)\]")


def _as_on_device(message: str) -> str:
    """The meta version of a shape error, worded as the device would word it (what users know)."""
    broadcast = _META_BROADCAST.search(message)
    if broadcast and broadcast[3] in ("0", "1"):
        length, at, index = int(broadcast[1]), int(broadcast[2]), int(broadcast[3])
        expected = [int(dim) for dim in broadcast[4].split(",") if dim.strip()]
        dim = at + len(expected) if at < 0 else at
        if 0 <= dim < len(expected):
            sizes = (length, expected[dim]) if index == 0 else (expected[dim], length)
            return (
                f"The size of tensor a ({sizes[0]}) must match the size of tensor b ({sizes[1]}) "
                f"at non-singleton dimension {dim}"
            )
    matmul = _META_MATMUL.search(message)
    if matmul:
        return f"mat1 and mat2 shapes cannot be multiplied ([{matmul[1]}] @ [{matmul[2]}])"
    return message


_READS_VALUES = (
    "the chain reads a tensor's values in Python (bool(), int(), float(), if/and/or or min/max on a "
    "tensor): that cannot be checked before it runs, so it was not run; keep it in tensor ops "
    "(torch.where, x.max()...)"
)


def _reads_values(message: str) -> bool:
    return "item()" in message or "_local_scalar_dense" in message


def _cannot_size(exc: Exception, failed_op: str | None) -> str | None:
    """Why the guard cannot size the chain, when the meta run failed for want of a meta version
    of an op or of a data-dependent size (None: a real error the device would raise as well)."""
    text = text_of(exc)
    if "repeat_interleave" in text:
        return "repeat_interleave with tensor repeats makes a size that depends on the data: give output_size="
    if isinstance(exc, NotImplementedError) or "meta" in text.lower():
        op = f"'{failed_op}'" if failed_op else "an op of the chain"
        return f"{op} cannot run on meta tensors, so the chain's memory cannot be checked before it runs"
    return None


def trace_on_meta(fn: Callable[..., Any], metas: list[torch.Tensor], n: int) -> OpTrace:
    """The chain's ops on meta tensors of the same shapes: sizes everything, allocates nothing.

    Raises ChainError when the chain cannot run this way: the error it would hit on the device
    (kind "runtime"...), why it cannot be sized ("memory"), or that it was stopped ("stuck").
    """
    trace = OpTrace()
    mode: _MetaTraceMode | None = None
    try:
        with WATCH.watching() as tick, torch.device(_META), _PiecesMode():
            mode = _MetaTraceMode(trace, tick)
            with mode:
                fn(*metas, N=n)
    except ChainStuck:
        raise ChainError(ChainErrorInfo("stuck", stuck_message(WATCH.limit_s))) from None
    except ChainError:
        raise
    except Exception as exc:  # whatever the chain raises becomes one plain line
        info = classify_failure(exc, "eager").info
        if _reads_values(text_of(exc)):
            info = ChainErrorInfo("rejected", _READS_VALUES, info.line)
        elif why := _cannot_size(exc, mode.failed_op if mode else None):
            info = ChainErrorInfo("memory", f"{why}; it was not run", info.line)
        else:
            info = dataclasses.replace(info, message=_as_on_device(info.message))
        raise ChainError(info) from None
    return trace


def _inputs_words(specs: list[InputSpec]) -> str:
    """What the chain's inputs are, in a refusal: with layers, how much of it their tensors are
    and the largest layer, where it is constructed."""
    layers = layer_bytes(specs)
    if not layers:
        return "its inputs"
    by_layer: dict[int, int] = {}
    for spec in specs:
        if spec.layer is not None:
            by_layer[spec.layer.index] = by_layer.get(spec.layer.index, 0) + spec.nbytes
    index = max(by_layer, key=lambda i: by_layer[i])
    largest = next(spec.layer.layer for spec in specs if spec.layer is not None and spec.layer.index == index)
    return (
        f"its inputs and layers (layers {_gb(layers)}; {largest.text()} on line {largest.line} "
        f"holds {_gb(by_layer[index])})"
    )


def check_memory(chain: ParsedChain, specs: list[InputSpec], n: int, device: torch.device) -> OpTrace:
    """The chain's meta trace at size ``n`` with the inputs ``specs`` (``input_specs``);
    MeasureError if its inputs (the layers' parameters and buffers among them) and intermediates
    would not fit in ``device``'s free memory, ChainError if it cannot be traced (see
    trace_on_meta).

    The intermediates are counted as if all alive at once, an upper bound that keeps the guard on
    the safe side.
    """
    inputs = sum(spec.nbytes for spec in specs)
    fits, free = _fits(inputs, device)
    if not fits:
        raise MeasureError(
            ChainErrorInfo(
                "memory",
                f"the chain needs about {_gb(inputs)} for {_inputs_words(specs)} but {device} has {_gb(free)} free",
            )
        )
    function = chain.build_function({"torch": torch, "F": torch.nn.functional})
    trace = trace_on_meta(function, meta_inputs(specs), n)
    intermediates = trace.output_bytes_total
    needed = inputs + intermediates
    layers = layer_bytes(specs)
    fits, free = _fits(needed, device, free)  # read a moment ago: the meta trace allocated nothing
    if not fits:
        raise MeasureError(
            ChainErrorInfo(
                "memory",
                f"the chain needs about {_gb(needed)} (inputs {_gb(inputs - layers)}"
                + (f" + layers {_gb(layers)}" if layers else "")
                + f" + intermediates {_gb(intermediates)}) but {device} has {_gb(free)} free",
            )
        )
    return trace
