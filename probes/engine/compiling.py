"""A chain made ready to call in one mode: eager as is, or a fresh ``torch.compile`` at this size.

Three rules keep a compiled figure what a user's own fresh ``torch.compile`` would get:

- **A code object of its own per compile.** Dynamo keeps its compiled entries (and guards) on the
  code object of the frame it compiles. The chain function is exec'd, so it has no source file;
  torch before 2.13 wraps such functions in one shared ``inner`` frame, so every compile of every
  chain and size piled up on that one code object: from the 9th, ``recompile_limit (8)`` made
  sizes silently run eager, and every call walked the guards of all the others first. Each compile
  here goes through a trampoline whose code object is new, so it holds exactly one entry.
- **Scoped configuration, only where needed.** C++ kernels visible to the profiler (on the CPU)
  and Inductor's bytes estimate for kernels replayed in CUDA graphs are patched around the tool's
  own compiles only; a compiled chain on CUDA is compiled exactly as the user's own would be.
  Nothing is changed at import or left behind.
- **A compiled run that ran eager says so**: no graph captured, graph breaks, the recompile limit;
  what torch printed about it is kept as diagnostics.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

from probes.chain.expr import ParsedChain
from probes.engine import compiled as inductor
from probes.engine import torch_compat
from probes.engine.cpu_kernel_record import light_kernel_records
from probes.engine.device_lock import compiling, measuring
from probes.engine.diagnostics import Diagnostics
from probes.engine.dynamo_deferral import end_dynamo_deferral
from probes.engine.errors import MeasureError, check_result
from probes.engine.inputs import differentiable
from probes.engine.training_step import GradStep, outputs_of
from probes.engine.watchdog import CALL_BUDGET
from probes.link import fast_paths
from probes.link.protocol import ChainErrorInfo, CompileInfo

if TYPE_CHECKING:
    from probes.engine.plan import SizePlan

CHAIN_NAMESPACE: dict[str, Any] = {"torch": torch, "F": F}

CPU_KERNEL_PROFILE = {"cpp.enable_kernel_profile": True}
"""Inductor's C++ kernels only show in the profiler (as graph_N_cpp_fused_* rows) when built so
(with the range declared lightly: probes.engine.cpu_kernel_record)."""
CUDA_GRAPH_BYTES = {"benchmark_kernel": True}
"""Inductor's own bytes estimate per Triton kernel (kernel_num_gb): the fall-back for kernels that
only run inside a CUDA graph, where no Python call can be observed. It makes every compile slower
(it benchmarks each kernel), so only the modes that replay CUDA graphs get it."""
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")

COMPILED_CACHE_SIZE = 16

_frame_ids = itertools.count()
_compiling = threading.Event()


@contextmanager
def compile_window() -> Iterator[None]:
    """Marks a compile in progress: a stretch with no safe point, where a request that is stopped
    (the worker's cancel) is better stopped at once than after a grace (see ``compiling_now``)."""
    _compiling.set()
    try:
        yield
    finally:
        _compiling.clear()


def compiling_now() -> bool:
    return _compiling.is_set()


def _not_aimed(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("a chain's trampoline was called before it was given the chain")


def own_frame() -> tuple[Callable[..., Any], Callable[[Callable[..., Any]], None]]:
    """A trampoline with a code object of its own (Dynamo's cache lives on it), and how to give it
    the function it calls (before its first call: Dynamo reads it from the closure as it traces)."""
    target: Callable[..., Any] = _not_aimed

    def chain_call(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **kwargs)

    def aim(fn: Callable[..., Any]) -> None:
        nonlocal target
        target = fn

    chain_call.__code__ = chain_call.__code__.replace(co_name=f"kernel_tui_chain_{next(_frame_ids)}")
    return chain_call, aim


@dataclass
class _Wrapped:
    """A trampoline and its ``torch.compile`` wrapper, not yet given a chain."""

    frame: Callable[..., Any]
    aim: Callable[[Callable[..., Any]], None]
    compiled: Callable[..., Any]


_spare: _Wrapped | None = None
"""The next default-mode compile's wrapper, made while the worker had nothing to do."""


def _wrapped(mode: str) -> _Wrapped:
    frame, aim = own_frame()
    return _Wrapped(frame, aim, torch.compile(frame, **_compile_options(mode)))


def make_spare_wrapper() -> None:
    """Make the next new chain's ``torch.compile`` wrapper now (default mode), for a worker with
    nothing to do: ``torch.compile(fn)`` copies Inductor's whole config, milliseconds in the way of
    the chain's compiled rows. The wrapper is what the compile would make then: the config is only
    read by torch again as the chain compiles. A fast path (``probes.link.fast_paths``)."""
    global _spare
    if _spare is None and fast_paths.enabled("spare_compile_wrapper"):
        end_dynamo_deferral()
        _spare = _wrapped("compiled")


def _take_wrapped(mode: str) -> _Wrapped:
    global _spare
    if mode == "compiled" and _spare is not None:
        spare, _spare = _spare, None
        return spare
    return _wrapped(mode)


def grad_leaves(size: SizePlan) -> list[torch.Tensor]:
    """Make the float inputs, the layers' parameters and a user's module's parameters require
    grad; refuse a chain with nothing to differentiate."""
    chain, inputs = size.chain, size.inputs
    leaves = [t.requires_grad_(True) for t in differentiable(chain, inputs)] + list(size.parameters)
    if not leaves:
        raise MeasureError(ChainErrorInfo("input", "with grad, at least one input must be a float tensor"))
    result = chain.build_function(CHAIN_NAMESPACE)(*inputs, N=size.n)
    check_result(result)
    if not any(out.requires_grad for out in outputs_of(result)):
        raise MeasureError(
            ChainErrorInfo(
                "runtime", "with grad, the chain's result must depend on a float input (nothing to differentiate)"
            )
        )
    return leaves


def cache_entries(fn: Callable[..., Any]) -> int | None:
    """How many compiled entries Dynamo holds for ``fn``'s own code object (None: unknown)."""
    return torch_compat.dynamo_cache_entries(fn.__code__)


def compile_settings(mode: str, device: torch.device) -> dict[str, Any]:
    """The Inductor settings a compile of ``mode`` on ``device`` needs to be measured (else none:
    a compile as the user's own)."""
    if device.type == "cpu":
        return CPU_KERNEL_PROFILE
    return CUDA_GRAPH_BYTES if mode in CUDA_GRAPH_MODES else {}


@contextmanager
def tool_compile_settings(mode: str, device: torch.device) -> Iterator[None]:
    """The Inductor settings the tool's own compiles need, for the duration of the block only. A
    fake-tensor failure (a shape mismatch) is logged with its whole stack, then re-raised;
    classify_failure reports it in plain words, so the log is silenced meanwhile."""
    records = light_kernel_records() if device.type == "cpu" else nullcontext()
    with torch_compat.inductor_settings(compile_settings(mode, device)), torch_compat.quiet_fake_tensor_log(), records:
        yield


def autotune_recording(device: torch.device) -> Any:
    """A block in which Inductor's autotuning results are recorded (Triton kernels: CUDA only)."""
    return torch_compat.recording_autotune_trials() if device.type == "cuda" else nullcontext({})


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _counted_since(before: dict[str, Counter[str]] | None) -> tuple[int | None, dict[str, int]]:
    """(graphs captured, graph breaks by reason) since ``before``, leaving torch's counters alone;
    graphs None where Dynamo's counters cannot be read."""
    now = torch_compat.dynamo_counters()
    if before is None or now is None:
        return None, {}
    graphs = now.get("stats", Counter())["unique_graphs"] - before.get("stats", Counter())["unique_graphs"]
    breaks: dict[str, int] = {}
    for reason, count in (now.get("graph_break", Counter()) - before.get("graph_break", Counter())).items():
        line = str(reason).strip().splitlines()[0] if str(reason).strip() else "graph break"
        breaks[line] = breaks.get(line, 0) + count
    return graphs, breaks


@dataclass
class CompiledChain:
    """A chain compiled for one mode at one input signature, kept warm in the worker."""

    fn: Callable[..., Any]
    frame: Callable[..., Any]
    """The trampoline Dynamo compiled (its code object holds the compiled entries)."""
    info: CompileInfo
    modules: list[Any]
    kernels: dict[str, inductor.GeneratedKernel]
    ran_compiled: bool
    fallback_reason: str | None
    diagnostics: list[str] = field(default_factory=list)
    autotune_trials: torch_compat.AutotuneTrials = field(default_factory=dict)
    """The configurations Inductor's autotuner timed per Triton kernel while compiling."""


@dataclass
class PreparedCall:
    """A ready-to-call chain in one mode, warmed up, with what compiling it produced."""

    call: Callable[[], Any]
    compile_info: CompileInfo | None = None
    modules: list[Any] = field(default_factory=list)
    kernels: dict[str, inductor.GeneratedKernel] = field(default_factory=dict)
    ran_compiled: bool = False
    fallback_reason: str | None = None
    frame: Callable[..., Any] | None = None
    """The trampoline Dynamo compiled (None in eager mode)."""
    profiled_call: Callable[[], Any] | None = None
    """The call for the profiled reps when it differs (with grad: the backward labelled)."""
    grad: bool = False
    autotune_trials: torch_compat.AutotuneTrials = field(default_factory=dict)
    """See ``CompiledChain.autotune_trials``."""


_compiled_cache: OrderedDict[tuple[object, ...], CompiledChain] = OrderedDict()
"""Compiled chains by (text, mode, N, device, input shapes and dtypes): re-measuring a chain the
user just had on screen (an edit undone, a mode toggled back) skips the compile. A hit is exactly
what a fresh compile at that size would run: shapes are static, and its code object is its own.
For ``dynamic`` the key leaves out N and the sizes: one symbolic compile serves the sweep."""


def _compile_options(mode: str) -> dict[str, Any]:
    if mode == "dynamic":
        return {"mode": None, "dynamic": True}
    return {"mode": None if mode == "compiled" else mode, "dynamic": False}


def _call_compiled(
    fn: Callable[..., Any], mode: str, device: torch.device, inputs: list[torch.Tensor], n: int
) -> Callable[[], Any]:
    if mode in ("reduce-overhead", "max-autotune") and device.type == "cuda":

        def call() -> Any:
            torch.compiler.cudagraph_mark_step_begin()
            return fn(*inputs, N=n)

        return call
    return lambda: fn(*inputs, N=n)


def _fallback_reason(
    graphs: int | None, entries: int | None, breaks: dict[str, int], diagnostics: Diagnostics
) -> str | None:
    """Why a compile ran eager, as far as Dynamo tells (None where it tells nothing: the profile
    still shows whether compiled code ran)."""
    limit = next((line for line in diagnostics if "recompile_limit" in line), None)
    if limit:
        return f"ran eager: {limit}"
    if graphs == 0 or entries == 0:
        return "ran eager: " + ("; ".join(breaks) or "torch.compile captured no graph")
    return None


def _compile(
    chain: ParsedChain,
    mode: str,
    inputs: list[torch.Tensor],
    n: int,
    device: torch.device,
    diagnostics: Diagnostics,
    leaves: list[torch.Tensor] | None,
) -> CompiledChain:
    """A fresh ``torch.compile`` of the chain at this size (with its backward when ``leaves``):
    compile, warm up, and inspect."""
    end_dynamo_deferral()
    before = torch_compat.dynamo_counters()
    modules_before = inductor.loaded_module_count()
    fn = chain.build_function(CHAIN_NAMESPACE)
    wrapped = _take_wrapped(mode)
    wrapped.aim(fn)
    frame, compiled_fn = wrapped.frame, wrapped.compiled
    call = _call_compiled(compiled_fn, mode, device, inputs, n)
    if leaves is not None:
        call = GradStep(call, leaves)
    trials: torch_compat.AutotuneTrials = {}
    with tool_compile_settings(mode, device):
        begin = time.perf_counter()
        with compile_window(), compiling(device), autotune_recording(device) as trials:
            result = call()
            _sync(device)
        compile_time = time.perf_counter() - begin
        if leaves is None:
            check_result(result)
        del result
        graphs, breaks = _counted_since(before)
        entries = cache_entries(frame)
        with measuring(device):
            for _ in range(3):
                call()
            _sync(device)
    recompiles = _new_entries(frame, entries)
    modules = inductor.wrapper_modules_since(modules_before)
    kernels = inductor.generated_kernels(modules)
    fallback = _fallback_reason(graphs, entries, breaks, diagnostics)
    info = CompileInfo(
        compile_time_s=compile_time,
        graphs=graphs if graphs is not None else len(modules),
        graph_breaks=sum(breaks.values()),
        break_reasons=list(breaks),
        recompiles=recompiles,
        generated_source={name: k.source for name, k in kernels.items()},
        launch_config={name: cfg for name in kernels if (cfg := inductor.launch_config(modules, name))},
    )
    return CompiledChain(
        compiled_fn, frame, info, modules, kernels, fallback is None, fallback, list(diagnostics), trials
    )


def _new_entries(frame: Callable[..., Any], before: int | None) -> int:
    """Compiled entries Dynamo added to ``frame`` since it held ``before`` (0 where unknown)."""
    now = cache_entries(frame)
    return max(0, now - before) if now is not None and before is not None else 0


def _cache_key(size: SizePlan, mode: str) -> tuple[object, ...]:
    device, grad, inputs = str(size.device), size.grad, size.inputs
    if mode == "dynamic":
        return (size.identity, mode, grad, device, tuple((t.dim(), t.dtype) for t in inputs))
    return (size.identity, mode, grad, size.n, device, tuple((tuple(t.shape), t.dtype) for t in inputs))


def prepare(size: SizePlan, mode: str, diagnostics: Diagnostics) -> PreparedCall:
    """The pipeline's build stage: the callable for ``mode`` at this size (as a fresh
    torch.compile at this size would run), warmed up.

    With grad the call is a training step: forward, then backward from ``GradStep``'s seeds. What
    torch reports while compiling goes to ``diagnostics``; a compile reused from the cache brings
    back what its compile reported.
    """
    leaves = grad_leaves(size) if size.grad else None
    if mode == "eager":
        return _eager_call(size, leaves)
    return _compiled_call(size, mode, diagnostics, leaves)


def _eager_call(size: SizePlan, leaves: list[torch.Tensor] | None) -> PreparedCall:
    """The chain as it is, called twice (its first call checked)."""
    inputs, n, device = size.inputs, size.n, size.device
    fn = size.chain.build_function(CHAIN_NAMESPACE)

    def forward() -> Any:
        return fn(*inputs, N=n)

    with measuring(device), CALL_BUDGET.calls(2):  # its first call is the budget's first look
        if leaves is None:
            prepared = PreparedCall(call=forward)
            check_result(prepared.call())
        else:
            step = GradStep(forward, leaves)
            prepared = PreparedCall(call=step, profiled_call=step.labelled_twin(), grad=True)
            prepared.call()
        prepared.call()
        _sync(device)
    return prepared


def _compiled_call(
    size: SizePlan, mode: str, diagnostics: Diagnostics, leaves: list[torch.Tensor] | None
) -> PreparedCall:
    """A fresh compile at this size, or the one made for it before (``_compiled_cache``)."""
    chain, inputs, n, device = size.chain, size.inputs, size.n, size.device
    key = _cache_key(size, mode)
    compiled = _compiled_cache.get(key)
    cached = compiled is not None
    if compiled is None:
        compiled = _compile(chain, mode, inputs, n, device, diagnostics, leaves)
        _compiled_cache[key] = compiled
        while len(_compiled_cache) > COMPILED_CACHE_SIZE:
            _compiled_cache.popitem(last=False)
    else:
        for line in compiled.diagnostics:
            diagnostics.add(line)
    _compiled_cache.move_to_end(key)
    forward = _call_compiled(compiled.fn, mode, device, inputs, n)
    call: Callable[[], Any] = forward
    profiled_call = None
    if leaves is not None:
        step = GradStep(forward, leaves)
        call, profiled_call = step, step.labelled_twin()
    info = compiled.info
    if leaves is not None and not cached:  # the seeds made now, outside every measured call
        with tool_compile_settings(mode, device), measuring(device):
            call()
            _sync(device)
    if cached:
        entries = cache_entries(compiled.frame)
        with (
            tool_compile_settings(mode, device),
            measuring(device),
        ):  # a dynamic compile may specialise again at a new size
            for _ in range(2):
                call()
            _sync(device)
        again = _new_entries(compiled.frame, entries)
        if again > 0:
            info = dataclasses.replace(info, recompiles=info.recompiles + again)
            diagnostics.add(f"{mode}: compiled again at N={n:,} ({again} new graph(s))")
    return PreparedCall(
        call=call,
        compile_info=dataclasses.replace(info, cached=cached),
        modules=compiled.modules,
        kernels=compiled.kernels,
        ran_compiled=compiled.ran_compiled,
        fallback_reason=compiled.fallback_reason,
        frame=compiled.frame,
        profiled_call=profiled_call,
        grad=leaves is not None,
        autotune_trials=compiled.autotune_trials,
    )
