"""Measure one chain in one mode at one size: kernel rows, device time, wall time, bytes.

The rules (DESIGN.md, "Measuring right"): warm up first and report compile time apart; kernel rows
come from profiler device events over several reps, counting only real kernels (memcpy/memset
apart, nothing the tool launched itself); wall time per call is timed separately with the L2
flushed before each rep, median, like ``triton.testing.do_bench``.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import re
import statistics
import time
import traceback
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch._inductor.config
import torch.nn.functional as F
from torch.autograd.profiler_util import FunctionEvent
from torch.profiler import ProfilerActivity, profile, record_function

from probes import compiled as inductor
from probes.expr import ParsedChain
from probes.kernel_names import (
    classify_device_event,
    is_cpu_work_op,
    short_name,
    strip_graph_prefix,
)
from probes.protocol import ChainErrorInfo, CompileInfo, KernelRow, Measurement, OpNode
from probes.trace import OP_LABEL_PREFIX, OpTrace, recording_ops

REP_LABEL = "kernel_tui::rep"
FLUSH_LABEL = "kernel_tui::flush"
L2_FLUSH_BYTES = 256 * 1024 * 1024
"""Larger than any current GPU's L2 (H200: 60 MB), like do_bench's cache buffer."""

TARGET_TIMING_S = 0.05
"""Wall-time reps are sized to take about this long: enough for a stable median, short enough
that an edit re-profiles in well under a second."""
MIN_REPS, MAX_REPS = 5, 100
WARMUP_BUDGET_S = 0.5
MIN_PROFILE_REPS, MAX_PROFILE_REPS = 3, 10

CHAIN_NAMESPACE: dict[str, Any] = {"torch": torch, "F": F}

# Inductor's C++ kernels only appear in the profiler (as graph_N_cpp_fused_* rows) when built
# with this on; it must be set before anything is compiled.
torch._inductor.config.cpp.enable_kernel_profile = True
# Makes Inductor record its own bytes estimate (kernel_num_gb) for each Triton kernel: the
# fallback for kernels that only run inside a CUDA graph, where no Python call can be observed.
torch._inductor.config.benchmark_kernel = True
# A fake-tensor failure while compiling (a shape mismatch) is logged with its whole stack and then
# re-raised; classify_failure reports it in plain words, so the log would only be a traceback on
# the user's terminal.
logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)

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
    text = str(exc).strip() or type(exc).__name__
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
    while type(current).__module__.startswith(("torch._dynamo", "torch._inductor")):
        seen.add(id(current))
        below = current.__cause__ or current.__context__
        if below is None or id(below) in seen:
            break
        current = below
    return current


def classify_failure(exc: BaseException, mode: str) -> MeasureError:
    """Turn whatever running the chain raised into a plain-words error of the right kind."""
    message = _first_line(exc if mode == "eager" else _user_cause(exc))
    full = str(exc)
    if isinstance(exc, torch.OutOfMemoryError) or "out of memory" in full.lower():
        return MeasureError(ChainErrorInfo("memory", f"out of memory: {message}"))
    if isinstance(exc, MemoryError):  # Python itself ([0] * 10 ** 10)
        return MeasureError(ChainErrorInfo("memory", "out of memory: the chain built a Python object too large for memory", line=_chain_line(exc)))
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
    kind = "runtime"
    if mode != "eager" and type(exc).__module__.startswith(("torch._dynamo", "torch._inductor")):
        if "BackendCompilerFailed" in type(exc).__name__ or "InductorError" in type(exc).__name__:
            kind = "compile"
    return MeasureError(ChainErrorInfo(kind, message, line=_chain_line(exc)))


@dataclass
class PreparedCall:
    """A ready-to-call chain in one mode, warmed up, with what compiling it produced."""

    call: Callable[[], Any]
    compile_info: CompileInfo | None = None
    modules: list[Any] = field(default_factory=list)
    kernels: dict[str, inductor.GeneratedKernel] = field(default_factory=dict)
    ran_compiled: bool = False
    fallback_reason: str | None = None


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _dynamo_counts() -> tuple[int, dict[str, int]]:
    from torch._dynamo.utils import counters

    graphs = int(counters["stats"]["unique_graphs"])
    breaks = {str(reason).strip().splitlines()[0]: int(count) for reason, count in counters["graph_break"].items()}
    return graphs, breaks


@dataclass
class CompiledChain:
    """A chain compiled for one mode at one input signature, kept warm in the worker."""

    fn: Callable[..., Any]
    info: CompileInfo
    modules: list[Any]
    kernels: dict[str, inductor.GeneratedKernel]
    ran_compiled: bool
    fallback_reason: str | None


COMPILED_CACHE_SIZE = 16
_compiled_cache: OrderedDict[tuple, CompiledChain] = OrderedDict()
"""Compiled chains by (text, mode, N, device, input shapes and dtypes): re-measuring a chain the
user just had on screen (an edit undone, a mode toggled back) skips the compile. A hit is exactly
what a fresh compile at that size would run, since shapes are static."""


def _call_compiled(fn: Callable[..., Any], mode: str, device: torch.device, inputs: list[torch.Tensor], n: int) -> Callable[[], Any]:
    if mode in ("reduce-overhead", "max-autotune") and device.type == "cuda":

        def call() -> Any:
            torch.compiler.cudagraph_mark_step_begin()
            return fn(*inputs, N=n)

        return call
    return lambda: fn(*inputs, N=n)


def _compile(chain: ParsedChain, mode: str, inputs: list[torch.Tensor], n: int, device: torch.device) -> CompiledChain:
    """A fresh ``torch.compile`` of the chain at this size: compile, warm up, and inspect."""
    from torch._dynamo.utils import counters

    counters.clear()
    modules_before = inductor.loaded_module_count()
    compiled_fn = torch.compile(
        chain.build_function(CHAIN_NAMESPACE), mode=None if mode == "compiled" else mode, dynamic=False
    )
    call = _call_compiled(compiled_fn, mode, device, inputs, n)
    begin = time.perf_counter()
    result = call()
    _sync(device)
    compile_time = time.perf_counter() - begin
    check_result(result)
    del result
    graphs, breaks = _dynamo_counts()
    for _ in range(3):
        call()
    _sync(device)
    graphs_after, _ = _dynamo_counts()
    modules = inductor.wrapper_modules_since(modules_before)
    kernels = inductor.generated_kernels(modules)
    fallback = None
    if graphs == 0:
        fallback = "ran eager: " + ("; ".join(breaks) or "torch.compile captured no graph")
    info = CompileInfo(
        compile_time_s=compile_time,
        graphs=graphs,
        graph_breaks=sum(breaks.values()),
        break_reasons=list(breaks),
        recompiles=max(0, graphs_after - graphs),
        generated_source={name: k.source for name, k in kernels.items()},
        launch_config={name: cfg for name in kernels if (cfg := inductor.launch_config(modules, name))},
    )
    return CompiledChain(compiled_fn, info, modules, kernels, graphs > 0, fallback)


def prepare(chain: ParsedChain, mode: str, inputs: list[torch.Tensor], n: int, device: torch.device) -> PreparedCall:
    """Build the callable for ``mode`` (as a fresh torch.compile at this size would run) and warm it up."""
    if mode == "eager":
        fn = chain.build_function(CHAIN_NAMESPACE)
        prepared = PreparedCall(call=lambda: fn(*inputs, N=n))
        check_result(prepared.call())
        prepared.call()
        _sync(device)
        return prepared

    key = (chain.text, mode, n, str(device), tuple((tuple(t.shape), t.dtype) for t in inputs))
    compiled = _compiled_cache.get(key)
    cached = compiled is not None
    if compiled is None:
        compiled = _compile(chain, mode, inputs, n, device)
        _compiled_cache[key] = compiled
        while len(_compiled_cache) > COMPILED_CACHE_SIZE:
            _compiled_cache.popitem(last=False)
    _compiled_cache.move_to_end(key)
    call = _call_compiled(compiled.fn, mode, device, inputs, n)
    if cached:
        for _ in range(2):
            call()
        _sync(device)
    return PreparedCall(
        call=call,
        compile_info=dataclasses.replace(compiled.info, cached=cached),
        modules=compiled.modules,
        kernels=compiled.kernels,
        ran_compiled=compiled.ran_compiled,
        fallback_reason=compiled.fallback_reason,
    )


# ---------------------------------------------------------------------------------------------
# Profiler events -> kernel launches
# ---------------------------------------------------------------------------------------------


@dataclass
class Launch:
    name: str
    duration_us: float
    rep: int | None
    """Which profiled rep it belongs to (None: outside any rep, e.g. the attribution pass)."""
    op_index: int | None
    """The traced op that launched it (attribution pass only)."""
    aten_op: str | None
    """The innermost ATen op above it, e.g. aten::mm under a compiled graph's extern call."""


def _ancestors(event: FunctionEvent) -> list[FunctionEvent]:
    chain = []
    parent = event.cpu_parent
    while parent is not None:
        chain.append(parent)
        parent = parent.cpu_parent
    return chain


def _context(event: FunctionEvent, rep_ids: dict[int, int]) -> tuple[bool, int | None, int | None, str | None]:
    """(launched by the tool itself?, rep index, op index, innermost aten op) for an event."""
    rep = op_index = aten = None
    lineage = [event, *_ancestors(event)]
    for ancestor in lineage:
        name = ancestor.name
        if name == FLUSH_LABEL:
            return True, None, None, None
        if rep is None and name == REP_LABEL:
            rep = rep_ids.get(id(ancestor))
        if op_index is None and name.startswith(OP_LABEL_PREFIX):
            op_index = int(name[len(OP_LABEL_PREFIX) :])
        if aten is None and name.startswith("aten::") and ancestor is not event:
            aten = name
    return False, rep, op_index, aten


def _is_runtime_call(name: str) -> bool:
    """CUDA runtime/driver API events (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch...)."""
    return name.startswith("cuda") or (name.startswith("cu") and name[2:3].isupper())


def _cuda_launches(events: list[FunctionEvent], rep_ids: dict[int, int]) -> list[Launch]:
    """Device events tied to the CPU call that launched them through the runtime call's
    correlation id; a kernel launched inside the tool's flush range is the tool's own."""
    cpu = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    launchers = {e.id: e for e in cpu if _is_runtime_call(e.name)}
    launches = []
    for event in events:
        if event.device_type != torch.autograd.DeviceType.CUDA or event.name.startswith("kernel_tui::"):
            continue
        if getattr(event, "is_user_annotation", False):
            continue
        launcher = launchers.get(event.id)
        if launcher is None:
            continue
        own, rep, op_index, aten = _context(launcher, rep_ids)
        if not own:
            launches.append(Launch(event.name, float(event.time_range.elapsed_us()), rep, op_index, aten))
    return launches


def launches_from_profile(prof: profile, device: torch.device) -> list[Launch]:
    """Every real device launch (CUDA) or leaf work op (CPU) in a profile, tool launches excluded."""
    events = list(prof.events())
    cpu = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    rep_events = sorted((e for e in cpu if e.name == REP_LABEL), key=lambda e: e.time_range.start)
    rep_ids = {id(e): i for i, e in enumerate(rep_events)}
    if device.type == "cuda":
        return _cuda_launches(events, rep_ids)
    launches: list[Launch] = []
    roots = [e for e in cpu if is_cpu_work_op(e.name) and not any(is_cpu_work_op(a.name) for a in _ancestors(e))]
    for root in roots:
        for event in _cpu_kernels(root):
            own, rep, op_index, aten = _context(event, rep_ids)
            if op_index is None:  # in the attribution pass the op's label can sit just below it
                op_index = _label_below(event)
            if not own:
                launches.append(Launch(event.name, float(event.time_range.elapsed_us()), rep, op_index, aten))
    return launches


def _label_below(event: FunctionEvent) -> int | None:
    stack = list(event.cpu_children)
    while stack:
        child = stack.pop()
        if child.name.startswith(OP_LABEL_PREFIX):
            return int(child.name[len(OP_LABEL_PREFIX) :])
        stack.extend(child.cpu_children)
    return None


CHILD_WORK_SHARE = 0.5
"""An op whose work-op children take at least this share of its time is a wrapper (relu around
clamp_min, linear around addmm): its children are the kernels. Below it the op does the work
itself (sum, whose fill_ and copy_ are set-up), and the op is the kernel."""


def _cpu_kernels(event: FunctionEvent) -> list[FunctionEvent]:
    """The events that did the work under a CPU op: itself, or (recursively) its work-op children."""
    below, stack = [], list(event.cpu_children)
    while stack:
        child = stack.pop()
        if is_cpu_work_op(child.name):
            below.append(child)
        else:
            stack.extend(child.cpu_children)
    if not below:
        return [event]
    if sum(c.time_range.elapsed_us() for c in below) < CHILD_WORK_SHARE * event.time_range.elapsed_us():
        return [event]
    return [kernel for child in sorted(below, key=lambda c: c.time_range.start) for kernel in _cpu_kernels(child)]


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


class L2Flusher:
    """Writes a buffer larger than L2 so each timed rep starts cold, as do_bench and ncu do."""

    def __init__(self, device: torch.device) -> None:
        self.buffer = (
            torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device) if device.type == "cuda" else None
        )

    def __call__(self) -> None:
        if self.buffer is not None:
            with record_function(FLUSH_LABEL):
                self.buffer.zero_()


def measure_wall_time(call: Callable[[], Any], device: torch.device, reps: int, flush: L2Flusher) -> list[float]:
    """Per-call wall times in µs: CUDA events around each call (L2 flushed first), or perf_counter."""
    if device.type == "cuda":
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for start, end in zip(starts, ends):
            flush()
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(device)
        return [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
    times = []
    for _ in range(reps):
        begin = time.perf_counter()
        call()
        times.append((time.perf_counter() - begin) * 1e6)
    return times


def choose_reps(call: Callable[[], Any], device: torch.device, reps: int | None) -> tuple[int, int]:
    """(timing reps, profiled reps): sized so timing takes about TARGET_TIMING_S, unless given.

    Calls until two in a row agree within 25% (at most WARMUP_BUDGET_S): a fresh process's first
    calls pay for page faults and thread-pool start-up, which must not size, or land in, the reps.
    """
    times: list[float] = []
    spent = 0.0
    while spent < WARMUP_BUDGET_S and len(times) < 20:
        _sync(device)
        begin = time.perf_counter()
        call()
        _sync(device)
        times.append(max(time.perf_counter() - begin, 1e-7))
        spent += times[-1]
        if len(times) >= 2 and abs(times[-1] - times[-2]) <= 0.25 * times[-2]:
            break
    if reps is not None:
        return reps, max(1, min(reps, MAX_PROFILE_REPS))
    single = min(times[-2:])
    timing = int(min(MAX_REPS, max(MIN_REPS, TARGET_TIMING_S / single)))
    profiled = int(min(MAX_PROFILE_REPS, max(MIN_PROFILE_REPS, TARGET_TIMING_S / single)))
    return timing, profiled


def _activities(device: torch.device) -> list[ProfilerActivity]:
    return [ProfilerActivity.CPU, ProfilerActivity.CUDA] if device.type == "cuda" else [ProfilerActivity.CPU]


@dataclass
class ProfiledRun:
    launches: list[Launch]
    """Launches inside the timed reps."""
    attribution: list[Launch]
    """Launches of the labelled eager call (empty when there was none)."""
    trace: OpTrace | None


def profile_run(
    call: Callable[[], Any],
    device: torch.device,
    reps: int,
    flush: L2Flusher,
    labelled_call: Callable[[], Any] | None = None,
) -> ProfiledRun:
    """One profiler session (starting one costs tens of ms): first, optionally, one eager call with
    every op labelled, which ties each kernel to the op that launched it; then ``reps`` reps."""
    trace = None
    with profile(activities=_activities(device)) as prof:
        if labelled_call is not None:
            with recording_ops(label_ops=True) as trace:
                labelled_call()
            _sync(device)
        for _ in range(reps):
            flush()
            with record_function(REP_LABEL):
                call()
        _sync(device)
    launches = launches_from_profile(prof, device)
    return ProfiledRun(
        launches=[launch for launch in launches if launch.rep is not None],
        attribution=[launch for launch in launches if launch.rep is None],
        trace=trace,
    )


# ---------------------------------------------------------------------------------------------
# Putting a measurement together
# ---------------------------------------------------------------------------------------------


def _eager_bytes(trace: OpTrace, attribution: list[Launch]) -> tuple[dict[str, int], dict[str, list[str]], dict[int, list[str]]]:
    """Bytes and ops per kernel name from the attribution pass; an op's bytes are split between
    its kernels by device time when it launched more than one."""
    by_op: dict[int, list[Launch]] = defaultdict(list)
    for launch in attribution:
        if launch.op_index is not None and classify_device_event(launch.name) == "kernel":
            by_op[launch.op_index].append(launch)
    kernel_bytes: dict[str, int] = defaultdict(int)
    kernel_ops: dict[str, list[str]] = defaultdict(list)
    op_kernels: dict[int, list[str]] = defaultdict(list)
    for index, launches in by_op.items():
        op = trace.ops[index]
        total_time = sum(launch.duration_us for launch in launches) or 1.0
        for launch in launches:
            share = launch.duration_us / total_time if len(launches) > 1 else 1.0
            kernel_bytes[launch.name] += int((op.bytes_in + op.bytes_out) * share)
            if op.op not in kernel_ops[launch.name]:
                kernel_ops[launch.name].append(op.op)
            op_kernels[index].append(short_name(launch.name))
    return kernel_bytes, kernel_ops, op_kernels


def _compiled_bytes(
    prepared: PreparedCall, trace: OpTrace | None
) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Bytes per generated kernel from its real tensor arguments during one call."""
    with inductor.recording_kernel_bytes(prepared.modules, prepared.kernels) as sink:
        prepared.call()
    for name, estimate in inductor.estimated_kernel_bytes(prepared.modules).items():
        # CUDA graph replays never call the Python wrapper: use Inductor's own estimate.
        sink.setdefault(name, estimate)
    kernel_ops = {name: kernel.aten_ops for name, kernel in prepared.kernels.items()}
    return dict(sink), kernel_ops


def _op_nodes(trace: OpTrace | None, op_kernels: dict[int, list[str]], prepared: PreparedCall) -> list[OpNode]:
    if trace is None:
        return []
    remaining = {name: list(k.aten_ops) for name, k in prepared.kernels.items()}
    nodes = []
    for op in trace.ops:
        if op.is_view:
            continue
        fused_into = None
        for name, ops in remaining.items():
            if op.op in ops:
                ops.remove(op.op)
                fused_into = name
                break
        nodes.append(
            OpNode(
                op=op.op,
                shape=op.shape,
                dtype=op.dtype,
                bytes_out=op.bytes_out,
                bytes_in=op.bytes_in,
                eager_kernels=op_kernels.get(op.index, []),
                compiled_kernel=fused_into,
            )
        )
    return nodes


def _rows(
    launches: list[Launch],
    reps: int,
    kernel_bytes: dict[str, int],
    kernel_ops: dict[str, list[str]],
    op_bytes_by_name: dict[str, int],
    peak: float | None,
) -> tuple[list[KernelRow], list[KernelRow], list[float]]:
    durations: dict[str, list[float]] = defaultdict(list)
    aten_of: dict[str, str | None] = {}
    per_rep = [0.0] * reps
    for launch in launches:
        durations[launch.name].append(launch.duration_us)
        aten_of.setdefault(launch.name, launch.aten_op)
        if classify_device_event(launch.name) == "kernel" and launch.rep is not None and launch.rep < reps:
            per_rep[launch.rep] += launch.duration_us
    kernel_total = sum(
        statistics.median(d) * len(d) / reps for n, d in durations.items() if classify_device_event(n) == "kernel"
    )
    kernels, transfers = [], []
    for name, times in durations.items():
        kind = classify_device_event(name)
        launches_per_call = len(times) / reps
        median = statistics.median(times)
        per_call = median * launches_per_call
        key = strip_graph_prefix(name)
        nbytes = kernel_bytes.get(key, kernel_bytes.get(name))
        ops = kernel_ops.get(key) or kernel_ops.get(name) or ([aten_of[name]] if aten_of.get(name) else [])
        if nbytes is None and aten_of.get(name) in op_bytes_by_name:
            nbytes = int(op_bytes_by_name[aten_of[name]] * launches_per_call)
        gbps = nbytes / (per_call * 1e3) if nbytes and per_call > 0 else None
        row = KernelRow(
            name=name,
            short_name=short_name(name),
            kind=kind,
            launches_per_call=launches_per_call,
            device_time_us=median,
            time_per_call_us=per_call,
            share=per_call / kernel_total if kind == "kernel" and kernel_total > 0 else 0.0,
            bytes=nbytes,
            gbps=gbps,
            pct_of_peak=100 * gbps / peak if gbps and peak else None,
            ops=list(ops),
        )
        (kernels if kind == "kernel" else transfers).append(row)
    kernels.sort(key=lambda r: -r.time_per_call_us)
    return kernels, transfers, per_rep


def measure(
    chain: ParsedChain,
    mode: str,
    n: int,
    device: torch.device,
    dtype: str,
    inputs: list[torch.Tensor],
    *,
    trace: OpTrace | None = None,
    reps: int | None = None,
    peak_gbps: float | None = None,
    flush: L2Flusher | None = None,
) -> Measurement:
    """Measure ``chain`` in ``mode`` at size ``n`` on ``device`` with the given inputs.

    ``trace`` is the chain's op trace (e.g. from meta tensors) when the caller already has it.
    Raises MeasureError (or DevicePoisoned) with a plain-words reason.
    """
    flush = flush or L2Flusher(device)
    try:
        prepared = prepare(chain, mode, inputs, n, device)
        timing_reps, profiled_reps = choose_reps(prepared.call, device, reps)
        op_kernels: dict[int, list[str]] = {}
        if mode == "eager":
            run = profile_run(prepared.call, device, profiled_reps, flush, labelled_call=prepared.call)
            trace = run.trace
            kernel_bytes, kernel_ops, op_kernels = _eager_bytes(run.trace, run.attribution)
        else:
            if trace is None:
                fn = chain.build_function(CHAIN_NAMESPACE)
                with recording_ops() as trace:
                    fn(*inputs, N=n)
            kernel_bytes, kernel_ops = _compiled_bytes(prepared, trace)
            run = profile_run(prepared.call, device, profiled_reps, flush)
        launches = run.launches
        wall = measure_wall_time(prepared.call, device, timing_reps, flush)
    except MeasureError:
        raise
    except Exception as exc:  # noqa: BLE001 - anything the chain or torch raises becomes a message
        raise classify_failure(exc, mode) from exc
    op_bytes_by_name: dict[str, int] = {}
    for op in trace.ops if trace else []:
        op_bytes_by_name.setdefault(op.op, op.bytes_in + op.bytes_out)
    kernels, transfers, per_rep = _rows(launches, profiled_reps, kernel_bytes, kernel_ops, op_bytes_by_name, peak_gbps)
    known = [k.bytes for k in kernels if k.bytes is not None]
    input_bytes = sum(t.numel() * t.element_size() for t in inputs)
    outputs = [op for op in trace.ops if not op.is_view] if trace else []
    return Measurement(
        chain=chain.text,
        mode=mode,
        size=n,
        device=str(device),
        dtype=dtype,
        kernels=kernels,
        transfers=transfers,
        kernels_per_call=sum(k.launches_per_call for k in kernels),
        bytes_per_call=sum(known) if known and len(known) == len(kernels) else (sum(known) or None),
        device_time_us=statistics.median(per_rep) if per_rep else 0.0,
        wall_time_us=statistics.median(wall),
        reps=timing_reps,
        ran_compiled=prepared.ran_compiled,
        fallback_reason=prepared.fallback_reason,
        compile=prepared.compile_info,
        ops=_op_nodes(trace, op_kernels, prepared),
        peak_gbps=peak_gbps,
        input_bytes=input_bytes,
        output_bytes=outputs[-1].bytes_out if outputs else 0,
    )

