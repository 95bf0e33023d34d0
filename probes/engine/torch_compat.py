"""Every use of a private torch name, and every reading of the text Inductor generates, in one place.

The engine leans on a few of torch's internals: names with a leading underscore, modules under
``torch._dynamo`` and ``torch._inductor``, attributes of Inductor's objects, methods it patches on
them, and the form of Inductor's generated source. Each such use is one small function here,
checked on torch 2.11 to 2.15 (``CHECKED``). Where a name is missing, or torch is older or newer
than ``CHECKED`` (read once from ``torch.__version__``), the function takes a plain fallback
instead: a new torch then measures, at worst more slowly or with a detail unknown, rather than
breaking on an internal that moved.

Public torch APIs (``torch.compile``, ``torch.profiler``, ``torch.compiler``, ``torch.cuda``) are
used where they are needed, not here. This module imports nothing of torch at import: each function
imports what it touches, when it is called.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import logging
import re
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch.autograd.profiler import profile

CHECKED = ((2, 11), (2, 15))
"""The oldest and the newest torch (major, minor) every function here was checked on."""

DYNAMO = "torch._dynamo"
COMPILER = "torch._inductor.compile_fx"
"""The module whose import brings in Dynamo and Inductor whole (a compile's first step)."""


@functools.cache
def torch_version() -> tuple[int, int] | None:
    """torch's (major, minor), read once; None where it cannot be read."""
    import torch

    match = re.match(r"(\d+)\.(\d+)", str(getattr(torch, "__version__", "")))
    return (int(match[1]), int(match[2])) if match else None


def checked() -> bool:
    """Whether this torch is one the private names here were checked on."""
    version = torch_version()
    return version is not None and CHECKED[0] <= version <= CHECKED[1]


def _private(module: str, name: str) -> Any:
    """``module.name`` on a checked torch that has it (importing ``module``); else None."""
    if not checked():
        return None
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    return getattr(found, name, None)


# -- names and events of the profiler ---------------------------------------------------------------

PROFILER_BOOKKEEPING = frozenset(
    {
        "[memory]",
        "[OutOfMemory]",
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)
"""The events torch's own reading of a profile leaves out, as torch 2.11-2.15 lists them."""


def is_profiler_bookkeeping(name: str) -> bool:
    """Whether torch's reading of a profile drops an event of this name
    (``torch.autograd.profiler_util._filter_name``, checked on 2.11-2.15); fallback: the names it
    drops in those versions."""
    drops = _private("torch.autograd.profiler_util", "_filter_name")
    return bool(drops(name)) if drops is not None else name in PROFILER_BOOKKEEPING


def demangle(name: str) -> str:
    """A C++ symbol as torch shows it in a profile (``torch._C._demangle``, checked on 2.11-2.15);
    fallback: the symbol as it is."""
    demangled = _private("torch._C", "_demangle")
    return str(demangled(name)) if demangled is not None else name


def raw_profile_events_readable() -> bool:
    """Whether a finished profile's raw results (``profile.kineto_results``: ``events()``,
    ``trace_start_ns()`` and the events' accessors, undocumented) read as on torch 2.11-2.15;
    elsewhere the profile is read through torch's ``function_events``."""
    return checked()


def memory_events(results: Any) -> list[tuple[int, int]] | None:
    """The allocations and frees a profile recorded with ``profile_memory`` (its raw results'
    ``[memory]`` events: start in ns and bytes, negative for a free, read as torch's
    ``_parse_kineto_results`` reads them; checked on 2.11-2.15), in order of time; fallback None
    (unknown: torch's own reading folds them into the ops)."""
    if not checked() or results is None:
        return None
    return sorted((raw.start_ns(), int(raw.nbytes())) for raw in results.events() if raw.name() == "[memory]")


def range_start_ns(results: Any, name: str) -> int | None:
    """When the first profiler range called ``name`` began (ns, on the clock of
    ``memory_events``; raw results read as in ``memory_events``); fallback None."""
    if not checked() or results is None:
        return None
    return min((raw.start_ns() for raw in results.events() if raw.name() == name), default=None)


def profiler_set_up_apart() -> bool:
    """Whether a profile can be set up apart from its start (``profile._prepare_trace`` then
    ``profile._start_trace``, as ``torch.profiler.profile`` does; checked on 2.11-2.15); elsewhere
    a profile is set up as it starts."""
    if not checked():
        return False
    from torch.autograd.profiler import profile

    return callable(getattr(profile, "_prepare_trace", None)) and callable(getattr(profile, "_start_trace", None))


def prepare_profile(prof: profile) -> None:
    """Set ``prof`` up without starting it (see ``profiler_set_up_apart``)."""
    prof._prepare_trace()


def start_prepared_profile(prof: profile) -> None:
    """Start ``prof``, set up already by ``prepare_profile``."""
    prof._start_trace()


# -- the op tracing ---------------------------------------------------------------------------------

if TYPE_CHECKING:
    from torch.utils._python_dispatch import TorchDispatchMode as TorchDispatchMode
else:

    def __getattr__(name: str) -> Any:
        """``TorchDispatchMode``, imported when first asked for (this module imports no torch)."""
        if name == "TorchDispatchMode":
            return dispatch_mode_base()
        raise AttributeError(name)


def dispatch_mode_base() -> type:
    """The base class of a mode that sees every ATen op below autograd
    (``torch.utils._python_dispatch.TorchDispatchMode``, under this name since torch 2.0, checked on
    2.11-2.15). No fallback: the memory guard, the eager attribution and the FLOP count are built on
    it, and torch has no public name for it; a torch without it is told in one line."""
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError as exc:
        raise ImportError(f"kernel-tui needs torch's TorchDispatchMode, which this torch lacks: {exc}") from None
    return TorchDispatchMode


def _plain_leaves(tree: Any) -> Iterator[Any]:
    if isinstance(tree, (list, tuple)):
        for item in tree:
            yield from _plain_leaves(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from _plain_leaves(item)
    else:
        yield tree


def _plain_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    if isinstance(tree, list):
        return [_plain_map(fn, item) for item in tree]
    if isinstance(tree, tuple):
        return tuple(_plain_map(fn, item) for item in tree)
    if isinstance(tree, dict):
        return {key: _plain_map(fn, item) for key, item in tree.items()}
    return fn(tree)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of an op's arguments or outputs (``torch.utils._pytree.tree_leaves``, checked on
    2.11-2.15); fallback: a walk through lists, tuples and dicts, the containers ATen ops use."""
    leaves = _private("torch.utils._pytree", "tree_leaves")
    return list(leaves(tree)) if leaves is not None else list(_plain_leaves(tree))


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to each leaf (``torch.utils._pytree.tree_map``, checked on
    2.11-2.15); fallback: a walk through lists, tuples and dicts."""
    mapped = _private("torch.utils._pytree", "tree_map")
    return mapped(fn, tree) if mapped is not None else _plain_map(fn, tree)


def unique_op() -> Any:
    """The ATen op ``torch.unique`` runs (``aten._unique2``, checked on 2.11-2.15), whose output
    size depends on the data; fallback None (the memory guard then cannot bound it, and says so)."""
    if not checked():
        return None
    import torch

    return getattr(torch.ops.aten, "_unique2", None)


# -- Dynamo and Inductor ----------------------------------------------------------------------------


def dynamo_imported() -> bool:
    """Whether Dynamo is imported in this process (module ``torch._dynamo``)."""
    return DYNAMO in sys.modules


def compiler_imported() -> bool:
    """Whether Dynamo and Inductor are imported whole (``torch._inductor.compile_fx``, checked on
    2.11-2.15); fallback False."""
    return checked() and COMPILER in sys.modules


def compiler_to_import() -> bool:
    """Whether Dynamo and Inductor can be imported whole ahead of a first compile and are not yet
    (see ``compiler_imported``); fallback False: nothing is imported ahead, and the compile imports
    what it needs."""
    return checked() and COMPILER not in sys.modules


def import_compiler() -> None:
    """Import Dynamo and Inductor whole (see ``compiler_to_import``); fallback: nothing."""
    if checked():
        with contextlib.suppress(ImportError):
            importlib.import_module(COMPILER)


def is_compiler_error(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by Dynamo or Inductor (its class in ``torch._dynamo`` or
    ``torch._inductor``, checked on 2.11-2.15); fallback False (the error is then reported as the
    chain's, in torch's words)."""
    return checked() and type(exc).__module__.startswith((DYNAMO, "torch._inductor"))


def dynamo_cache_entries(code: types.CodeType) -> int | None:
    """How many compiled entries Dynamo holds on ``code``
    (``torch._dynamo.eval_frame._debug_get_cache_entry_list``, checked on 2.11-2.15); fallback
    None (unknown: recompiles are then not counted)."""
    entries = _private("torch._dynamo.eval_frame", "_debug_get_cache_entry_list")
    return len(entries(code)) if entries is not None else None


def dynamo_counters() -> dict[str, Counter[str]] | None:
    """A copy of Dynamo's counters (graphs captured, graph breaks by reason:
    ``torch._dynamo.utils.counters``, checked on 2.11-2.15); fallback None (unknown: a compiled run
    that ran eager is then told by the profile alone, where no compiled code ran)."""
    counters = _private("torch._dynamo.utils", "counters")
    if counters is None:
        return None
    return {key: Counter(value) for key, value in counters.items()}


def on_compiles(start: Callable[[], None], end: Callable[[], None]) -> bool:
    """Call ``start`` as each outermost Dynamo compile begins and ``end`` as it ends, in the
    compiling thread (``torch._dynamo.callback.callback_handler``, checked on 2.11-2.15; imports
    Dynamo); fallback False: nothing is called."""
    handler = _private("torch._dynamo.callback", "callback_handler")
    if handler is None:
        return False
    handler.register_start_callback(lambda args: start())
    handler.register_end_callback(lambda args: end())
    return True


@contextlib.contextmanager
def quiet_fake_tensor_log() -> Iterator[None]:
    """The fake-tensor logger (``torch._subclasses.fake_tensor``, checked on 2.11-2.15) silenced
    for the block: it logs a failure's whole stack before the failure is raised; fallback: left as
    it is."""
    if not checked():
        yield
        return
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def inductor_settings(settings: dict[str, Any]) -> Iterator[None]:
    """Inductor's configuration patched with ``settings`` (dotted keys:
    ``cpp.enable_kernel_profile``) for the block only (``torch._inductor.config.patch``, checked on
    2.11-2.15 with the keys the engine sets). Inductor's configuration is how torch itself tells
    users to change how it builds, so on another torch the keys it still has are set; one it lacks
    is left out."""
    if not settings:
        yield
        return
    import torch._inductor.config as config

    if not checked():
        settings = {key: value for key, value in settings.items() if _has_setting(config, key)}
    with config.patch(settings):
        yield


def _has_setting(config: Any, key: str) -> bool:
    owner = config
    *path, name = key.split(".")
    for part in path:
        owner = getattr(owner, part, None)
    return owner is not None and hasattr(owner, name)


def inductor_modules(start: int = 0) -> list[types.ModuleType]:
    """The wrapper modules Inductor loaded, from index ``start`` on
    (``torch._inductor.codecache.PyCodeCache.modules``, checked on 2.11-2.15); fallback none
    (compiled kernels are then measured without their source and bytes)."""
    cache = _private("torch._inductor.codecache", "PyCodeCache")
    modules = getattr(cache, "modules", None)
    return list(modules[start:]) if isinstance(modules, list) else []


def inductor_module_count() -> int:
    """How many wrapper modules Inductor has loaded (see ``inductor_modules``)."""
    cache = _private("torch._inductor.codecache", "PyCodeCache")
    modules = getattr(cache, "modules", None)
    return len(modules) if isinstance(modules, list) else 0


def triton_launch_config(kernel: Any) -> str | None:
    """The launch configuration Inductor's autotuner chose for a Triton kernel of a wrapper module
    (its ``launchers[0].config``: block sizes, ``num_warps``, ``num_stages``; checked on
    2.11-2.15); fallback None (not shown)."""
    if not checked():
        return None
    launchers = getattr(kernel, "launchers", None)
    if not launchers:
        return None
    config = getattr(launchers[0], "config", None)
    return triton_config_text(config) if config is not None else None


@dataclasses.dataclass(frozen=True)
class TritonKernelFacts:
    """What Inductor's compiled Triton kernel knows about its chosen launch (see
    ``triton_kernel_facts``); None where it does not say."""

    block_sizes: dict[str, int]
    num_warps: int | None
    num_stages: int | None
    registers_per_thread: int | None
    spills: int | None
    shared_memory_bytes: int | None
    autotune_cache: str | None


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def triton_kernel_facts(kernel: Any) -> TritonKernelFacts | None:
    """The chosen launch of a Triton kernel of a wrapper module (a ``CachingAutotuner``: its
    ``launchers[0]``'s ``config`` (``kwargs``, ``num_warps``, ``num_stages``), ``n_regs``,
    ``n_spills`` and ``shared``, and its ``autotune_cache_info``'s state; checked on 2.11-2.15);
    fallback None (not shown)."""
    if not checked():
        return None
    launchers = getattr(kernel, "launchers", None)
    if not launchers:
        return None
    launcher = launchers[0]
    config = getattr(launcher, "config", None)
    kwargs = getattr(config, "kwargs", None)
    cache_info = getattr(kernel, "autotune_cache_info", None)
    state = cache_info.get("autotune_cache_state") if isinstance(cache_info, dict) else None
    return TritonKernelFacts(
        block_sizes={str(k): int(v) for k, v in kwargs.items() if isinstance(v, int)}
        if isinstance(kwargs, dict)
        else {},
        num_warps=_int_or_none(getattr(config, "num_warps", None)),
        num_stages=_int_or_none(getattr(config, "num_stages", None)),
        registers_per_thread=_int_or_none(getattr(launcher, "n_regs", None)),
        spills=_int_or_none(getattr(launcher, "n_spills", None)),
        shared_memory_bytes=_int_or_none(getattr(launcher, "shared", None)),
        autotune_cache=str(state) if state is not None else None,
    )


def config_text(block_sizes: dict[str, Any], num_warps: Any, num_stages: Any) -> str:
    """A Triton launch configuration as ``XBLOCK=256, num_warps=4, num_stages=1``."""
    blocks = [f"{k}={v}" for k, v in block_sizes.items()]
    return ", ".join([*blocks, f"num_warps={num_warps}", f"num_stages={num_stages}"])


def triton_config_text(config: Any) -> str:
    """A triton ``Config`` (``kwargs``, ``num_warps``, ``num_stages``) as ``config_text`` writes it."""
    kwargs = getattr(config, "kwargs", None)
    return config_text(
        kwargs if isinstance(kwargs, dict) else {},
        getattr(config, "num_warps", "?"),
        getattr(config, "num_stages", "?"),
    )


AutotuneTrials = dict[str, list[tuple[str, float]]]
"""Per Triton kernel name: each configuration benchmarked (``triton_config_text``) and its ms."""


@contextlib.contextmanager
def recording_autotune_trials() -> Iterator[AutotuneTrials]:
    """Within the block, every ``CachingAutotuner.benchmark_all_configs`` (Inductor's autotuner
    timing each candidate configuration of a kernel, ``torch._inductor.runtime.triton_heuristics``;
    its result, a dict launcher -> ms, is not kept by Inductor) records its timings under the
    kernel's name (``inductor_meta["kernel_name"]``; checked on 2.11-2.15). Fallback: nothing is
    recorded (the configurations tried are not shown)."""
    trials: AutotuneTrials = {}
    owner = _private("torch._inductor.runtime.triton_heuristics", "CachingAutotuner") if _triton_importable() else None
    original = getattr(owner, "__dict__", {}).get("benchmark_all_configs")
    if owner is None or not callable(original):
        yield trials
        return

    @functools.wraps(original)
    def benchmark_all_configs(self: Any, *args: Any, **kwargs: Any) -> Any:
        timings = original(self, *args, **kwargs)
        with contextlib.suppress(Exception):  # a record that cannot be read only goes unshown
            meta = getattr(self, "inductor_meta", None) or {}
            name = str(meta.get("kernel_name") or getattr(getattr(self, "fn", None), "__name__", ""))
            trials[name] = [(triton_config_text(launcher.config), float(ms)) for launcher, ms in timings.items()]
        return timings

    owner.benchmark_all_configs = benchmark_all_configs
    try:
        yield trials
    finally:
        owner.benchmark_all_configs = original


def _triton_importable() -> bool:
    """Whether triton is installed (Inductor's Triton runtime imports it)."""
    return importlib.util.find_spec("triton") is not None


def inductor_bytes_estimate(kernel: Any) -> int | None:
    """Inductor's own estimate of the bytes a Triton kernel moves (its ``inductor_meta``'s
    ``kernel_num_gb``, present when built with ``benchmark_kernel``; checked on 2.11-2.15);
    fallback None (unknown)."""
    if not checked():
        return None
    meta = getattr(kernel, "inductor_meta", None)
    if isinstance(meta, dict) and meta.get("kernel_num_gb"):
        return int(round(float(meta["kernel_num_gb"]) * 1e9))
    return None


@contextlib.contextmanager
def rewriting_cpp_kernels(rewrite: Callable[[str], str]) -> Iterator[None]:
    """For the block, each C++ kernel Inductor builds through its kernels' code cache is built
    from ``rewrite(source)`` (``torch._inductor.codecache.CppPythonBindingsCodeCache
    .load_pybinding_async``, patched for the block; checked on 2.11-2.15); fallback: built as
    Inductor wrote it. Only the kernels' own cache: the caches built on it (a C++ wrapper's) get
    their source as it is."""
    owner = _private("torch._inductor.codecache", "CppPythonBindingsCodeCache")
    original = getattr(owner, "__dict__", {}).get("load_pybinding_async")
    if not isinstance(original, classmethod):
        yield
        return
    load = original.__func__

    def load_pybinding_async(cls: type, argtypes: Any, main_code: str, *args: Any, **kwargs: Any) -> Any:
        if cls is owner:  # its kernels come whole as main_code; only a C++ wrapper passes kernel_code
            main_code = rewrite(main_code)
        return load(cls, argtypes, main_code, *args, **kwargs)

    owner.load_pybinding_async = classmethod(load_pybinding_async)
    try:
        yield
    finally:
        owner.load_pybinding_async = original


GUARDED = "_kernel_tui_guarded"
"""Marks Inductor's benchmarker as wrapped already (a process wraps it once)."""


def wrap_inductor_benchmarks(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> bool:
    """Wrap each benchmark method of Inductor's benchmarker (one object, shared by its autotuners:
    ``torch._inductor.runtime.benchmarking.benchmarker``, checked on 2.11-2.15) with ``wrap``, once
    a process. False where it cannot be reached (fallback: left alone)."""
    benchmarker = _private("torch._inductor.runtime.benchmarking", "benchmarker")
    if benchmarker is None:
        return False
    if getattr(benchmarker, GUARDED, False):
        return True
    names = ("benchmark", "benchmark_gpu", "benchmark_gpu_with_cuda_graph")
    methods = [name for name in names if callable(getattr(benchmarker, name, None))]
    if not methods:
        return False
    for name in methods:
        setattr(benchmarker, name, wrap(getattr(benchmarker, name)))
    setattr(benchmarker, GUARDED, True)
    return True


# -- Inductor's generated source --------------------------------------------------------------------
# Inductor's wrapper modules and C++ kernels are text whose form is no API: each reading of it is
# here, read on every torch: where the text takes another form nothing matches, which is the plain
# fallback (a kernel's source, fused ops and bytes unknown; C++ kernels built as Inductor writes
# them).

_KERNEL_DEF = re.compile(
    r"^(?P<name>\w+) = async_compile\.(?P<kind>triton|cpp_pybinding|cpp)\((?P<head>.*?)'''(?P<src>.*?)'''",
    re.DOTALL | re.MULTILINE,
)
_ORIGINAL_ATEN = re.compile(r"Original ATen: \[([^\]]*)\]")
_POINTER_PARAM = re.compile(r"\b((?:in_out|in|out)_ptr\d+)\b")


@dataclasses.dataclass(frozen=True)
class GeneratedSource:
    """One kernel as a wrapper module's text defines it."""

    name: str
    source: str
    aten_ops: list[str] | None
    """``aten::add`` style, from Inductor's "Original ATen" comment above the kernel; None where
    there is none (C++ kernels)."""
    pointer_params: list[str]
    """The kernel's pointer parameters in order (``in_ptr0``, ``in_out_ptr0``, ``out_ptr0``)."""


def generated_sources(text: str) -> list[GeneratedSource]:
    """The kernels a wrapper module's text defines (``name = async_compile.triton(..., src)``).
    Checked on 2.11 to 2.15."""
    found = []
    for match in _KERNEL_DEF.finditer(text):
        source = match.group("src").strip("\n")
        preamble = text[max(0, match.start() - 2000) : match.start()]
        aten = _ORIGINAL_ATEN.findall(preamble)
        ops = [op.strip().replace("aten.", "aten::") for op in aten[-1].split(",")] if aten else None
        start = source.find("def " if match.group("kind") == "triton" else 'extern "C"')
        signature = source[start : source.find(")", start) + 1] if start >= 0 else ""
        found.append(GeneratedSource(match.group("name"), source, ops, _POINTER_PARAM.findall(signature)))
    return found


def cpp_ranges_opened_by_name(source: str, record: str) -> int:
    """How many profiler ranges a C++ kernel's source opens by name alone, as Inductor's kernels
    open theirs (``<record>name("graph_0_cpp_fused_add_0", nullptr);``). Checked on 2.11 to 2.15."""
    return len(re.findall(re.escape(record) + r'\w+\("[^"]*", nullptr\);', source))


# -- Dynamo's mark on torch's own functions ---------------------------------------------------------

DYNAMO_MARK = "__dynamo_disable"
"""The attribute torch caches a function's Dynamo-disabled version under."""

_deferred: list[Callable[..., Any]] = []


def _call_through(fn: Callable[..., Any], recursive: bool) -> Callable[..., Any]:
    def dynamo_mark_deferred(*args: Any, **kwargs: Any) -> Any:
        if DYNAMO not in sys.modules:
            return fn(*args, **kwargs)
        import torch._dynamo

        disabled = torch._dynamo.disable(fn, recursive, wrapping=False)
        setattr(fn, DYNAMO_MARK, disabled)
        return disabled(*args, **kwargs)

    return dynamo_mark_deferred


def _disable_dynamo_code() -> types.CodeType | None:
    """The code object every ``torch._compile._disable_dynamo`` wrapper shares, where it caches
    its mark as checked."""
    wrap = _private("torch._compile", "_disable_dynamo")
    if wrap is None:
        return None
    code = wrap(lambda: None).__code__
    if DYNAMO_MARK not in code.co_consts or not {"fn", "recursive"} <= set(code.co_freevars):
        return None
    found: types.CodeType = code
    return found


def defer_dynamo_marks(objects: Iterable[object]) -> int:
    """Give each of torch's functions wrapped in ``torch._compile._disable_dynamo`` among
    ``objects`` a stand-in for its Dynamo mark (``__dynamo_disable``): it calls the function
    straight through while Dynamo is not imported, and puts the real mark in place once it is
    (checked on 2.11-2.15). How many have one; fallback 0 (each wrapper imports Dynamo at its first
    call, as torch does it)."""
    if DYNAMO in sys.modules:
        return 0
    code = _disable_dynamo_code()
    if code is None:
        return 0
    for wrapper in objects:
        if type(wrapper) is not types.FunctionType or wrapper.__code__ is not code or not wrapper.__closure__:
            continue
        cells = dict(zip(code.co_freevars, (cell.cell_contents for cell in wrapper.__closure__), strict=True))
        fn = cells["fn"]
        if getattr(fn, DYNAMO_MARK, None) is None:
            setattr(fn, DYNAMO_MARK, _call_through(fn, cells["recursive"]))
            _deferred.append(fn)
    return len(_deferred)


def end_dynamo_marks() -> None:
    """Take every stand-in of ``defer_dynamo_marks`` away: each function gets its real mark at its
    next call, as torch does it."""
    while _deferred:
        fn = _deferred.pop()
        mark = getattr(fn, DYNAMO_MARK, None)
        if getattr(mark, "__name__", "") == "dynamo_mark_deferred":
            delattr(fn, DYNAMO_MARK)


def deferred_functions() -> list[Callable[..., Any]]:
    """The functions of torch that carry a stand-in mark now."""
    return list(_deferred)


# -- the CUDA driver ---------------------------------------------------------------------------------


def cuda_driver_version() -> int | None:
    """The CUDA driver's version (``torch._C._cuda_getDriverVersion``, checked on 2.11-2.15 with a
    CUDA build); fallback None (unknown)."""
    version = _private("torch._C", "_cuda_getDriverVersion")
    if version is None:
        return None
    try:
        return int(version())
    except RuntimeError:
        return None
