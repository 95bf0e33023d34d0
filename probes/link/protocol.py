"""The typed messages that cross between the probe worker and its clients.

This module is the single source of truth for the wire format: every message is a dataclass,
serialised as one JSON object per line with a ``"type"`` tag. It imports neither torch nor
textual, so both sides (and the replay worker) share it.

Decoding is strict: a field of the wrong type, a missing field, an unknown value of a closed set or
a number out of its bounds is a ``ProtocolError``, one line. Unknown keys are ignored, so a report
written by a newer version still reads; a worker of another protocol version is refused at
``WorkerReady`` with one line. Every line and report that comes in is read here (``decode``,
``read_report``): numbers are finite, integers at most ``MAX_INT_DIGITS`` long, sizes from 1 to
``MAX_SIZE``, times not negative, a device's name and versions at most ``MAX_NAME_CHARS``, a host
name as ``--host`` writes it, and a report at most ``REPORT_LIMIT_BYTES`` and
``MAX_REPORT_RESULTS`` measurements of ``MAX_REPORT_ROWS`` kernel rows in all.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    IO,
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NoReturn,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from probes.link.safe_files import REPORT_LIMIT_BYTES, UnreadableFile, read_user_file
from probes.link.safe_text import inert_line
from probes.link.settings import COMPILED_MODES as COMPILED_MODES
from probes.link.settings import (
    DEFAULT_CALL_BUDGET_S,
    DEFAULT_DTYPE,
    DEFAULT_FOCUS_SIZE,
    DEFAULT_MODES,
    MAX_DEVICES,
    MAX_SIZES,
    SettingError,
    Settings,
    check_device,
    check_host_name,
    check_size,
)
from probes.link.settings import DEFAULT_SIZES as DEFAULT_SIZES
from probes.link.settings import MODES as MODES

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

PROTOCOL_VERSION = 5
"""Bumped whenever a message changes shape; ``WorkerReady.protocol`` carries the worker's."""

EXIT_DEVICE_POISONED = 3
"""Worker exit status after a CUDA error that leaves the context unusable (the client restarts it)."""
EXIT_STUCK = 4
"""Worker exit status when its watchdog stopped a chain stuck in plain Python."""

ErrorKind = Literal["syntax", "rejected", "input", "runtime", "memory", "compile", "worker", "link", "replay", "stuck"]
KernelKind = Literal["kernel", "memcpy", "memset"]
Pass = Literal["forward", "backward"]
Stage = Literal["peak", "inputs", "importing", "compiling", "measuring", "replaying", "warmup", "waiting"]
"""What a request is doing now: measuring the device's peaks, making inputs, importing the
compiler (once per worker, never stopped halfway: a cancel takes effect when it ends), compiling
(slow, GIL released), measuring, replaying a recording, warming Inductor up in the background, or
waiting for a device another process measures on (the message says who)."""


def _not_negative(value: float) -> None:
    if value < 0:
        raise ValueError(f"{value:g} is negative")


Size = Annotated[int, check_size]
"""A size N read from a line or a report: a whole number from 1 to MAX_SIZE (bytes are divided by it)."""
Time = Annotated[float, _not_negative]
"""A duration read from a line or a report: finite, as every number read, and not negative."""
HostName = Annotated[str, check_host_name]
"""A ``--host`` name read from a report: bounded, in the characters a host name uses."""
MAX_NAME_CHARS = 200
"""Longest name or version a device's identity carries (``NVIDIA H200``, ``2.6.0+cu124``)."""


def _short(value: str) -> None:
    if len(value) > MAX_NAME_CHARS:
        raise ValueError(f"{len(value):,} characters (the most is {MAX_NAME_CHARS})")


ShortText = Annotated[str, _short]
"""A device's name or a version, read from a line or a report: at most MAX_NAME_CHARS."""


def _device_name(value: str) -> None:
    if check_device(value) is None:
        raise ValueError("empty device name")


DeviceName = Annotated[str, _device_name]
"""``cpu``, ``cuda`` or ``cuda:N``, as ``probes.link.settings.check_device`` reads it."""


def json_name(name: str) -> dict[str, str]:
    """Field metadata: the field is written under ``name`` in JSON (``pass`` is a Python keyword)."""
    return {"json": name}


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass
class ChainErrorInfo:
    """Why a chain could not be measured, in plain words, with where in the text when known."""

    kind: ErrorKind
    message: str
    line: int | None = None
    col: int | None = None

    def located(self) -> str:
        """The message prefixed by ``line L, col C:`` when the position is known."""
        if self.line is None:
            return self.message
        where = f"line {self.line}" + (f", col {self.col}" if self.col is not None else "")
        return f"{where}: {self.message}"


@dataclass
class AutotuneTrial:
    """One configuration an autotuner benchmarked for a Triton kernel, with its time."""

    config: str
    """``XBLOCK=256, num_warps=4, num_stages=1`` style."""
    time_ms: Time
    chosen: bool = False


@dataclass
class LaunchInfo:
    """How a GPU kernel was launched and the resources it holds (what a kernel is made of).

    Grid, block, registers and shared memory come from the profiler's record of the launch;
    occupancy is computed by the tool from them and the device's limits (theoretical: the warps
    an SM can hold at once over the most it can hold). Triton's fields come from Inductor's
    compiled kernel; each is None where unknown."""

    grid: list[int] | None = None
    block: list[int] | None = None
    registers_per_thread: int | None = None
    shared_memory_bytes: int | None = None
    """Static + dynamic shared memory per block."""
    blocks_per_sm: int | None = None
    """Blocks one SM holds at once, the tightest of the limits below."""
    occupancy: float | None = None
    """Theoretical occupancy, 0..1: resident warps per SM over the most an SM holds."""
    occupancy_limit: str | None = None
    """What bounds it: ``warps``, ``registers``, ``shared memory`` or ``blocks``."""
    num_warps: int | None = None
    num_stages: int | None = None
    block_sizes: dict[str, int] = field(default_factory=dict)
    """Triton's block sizes (``XBLOCK``, ``R0_BLOCK``...)."""
    spills: int | None = None
    """Registers spilled to local memory per thread (Triton's ``n_spills``)."""
    autotune: list[AutotuneTrial] = field(default_factory=list)
    """The configurations the autotuner benchmarked, with their times (empty: one config, or
    the choice came from its cache); one that could not run (out of resources) is left out."""
    autotune_cache: str | None = None
    """The autotuner's cache state (``hit``, ``miss``, ``only 1 config``...), where known."""


@dataclass
class KernelRow:
    """One device kernel (or memcpy/memset) of a measured call, aggregated by name."""

    name: str
    """The full (possibly mangled) kernel name, as the profiler reported it."""
    short_name: str
    kind: KernelKind
    launches_per_call: float
    device_time_us: Time
    """Median device time of one launch."""
    time_per_call_us: Time
    """launches_per_call x device_time_us: what this kernel costs each call."""
    share: float
    """Fraction of the call's kernel device time spent in this kernel (0..1)."""
    bytes: int | None
    """Bytes this kernel moves per call (all its launches), when known."""
    gbps: float | None
    pct_of_peak: float | None
    ops: list[str] = field(default_factory=list)
    """The ATen op(s) it ran, e.g. ``["aten::add"]``, or for a fused kernel ``["add", "relu"]``."""
    device_time_us_iqr: list[Time] | None = None
    """[p25, p75] of one launch's device time over the profiled reps."""
    pass_: Pass | None = field(default=None, metadata=json_name("pass"))
    """With grad: the pass the kernel belongs to."""
    flops: int | None = None
    """Floating-point operations per call (all launches), where they can be known; else None."""
    tflops: float | None = None
    intensity: float | None = None
    """Arithmetic intensity, FLOP per byte moved."""
    pct_of_compute_peak: float | None = None
    launch: LaunchInfo | None = None
    """GPU kernels: launch configuration and resources, where the profiler recorded them."""


@dataclass
class OpNode:
    """One ATen op of the chain, in execution order, with its output and the kernel that ran it."""

    op: str
    shape: list[int]
    dtype: str
    bytes_out: int
    bytes_in: int
    eager_kernels: list[str] = field(default_factory=list)
    compiled_kernel: str | None = None


@dataclass
class CompileInfo:
    """What torch.compile did for one compiled measurement."""

    compile_time_s: Time
    graphs: int
    graph_breaks: int
    break_reasons: list[str] = field(default_factory=list)
    recompiles: int = 0
    generated_source: dict[str, str] = field(default_factory=dict)
    """Generated source (Triton or C++) by kernel name."""
    launch_config: dict[str, str] = field(default_factory=dict)
    """Triton launch configuration (XBLOCK, num_warps, num_stages) by kernel name."""
    cached: bool = False
    """True when the worker reused this chain's compiled code; compile_time_s is the original's."""


@dataclass
class Measurement:
    """One chain measured in one mode at one size: the unit every view is built from."""

    chain: str
    mode: str
    size: Size
    device: str
    dtype: str
    kernels: list[KernelRow]
    transfers: list[KernelRow]
    """memcpy/memset rows, shown apart and never counted as kernels."""
    kernels_per_call: float
    bytes_per_call: int | None
    device_time_us: Time
    """Sum of kernel device time per call (memcpy/memset excluded)."""
    wall_time_us: Time | None
    """Median wall time of one call (L2 flushed before each rep on CUDA); None in an early-rows
    result (``ProfileRequest.early_rows``), whose wall-time reps are still running."""
    reps: int
    ran_compiled: bool
    """False for eager, and for a 'compiled' run that actually ran eager (see fallback_reason)."""
    fallback_reason: str | None = None
    compile: CompileInfo | None = None
    ops: list[OpNode] = field(default_factory=list)
    peak_gbps: float | None = None
    input_bytes: int = 0
    output_bytes: int = 0
    wall_time_us_iqr: list[Time] | None = None
    """[p25, p75] of the wall time per call over the timing reps."""
    device_time_us_iqr: list[Time] | None = None
    """[p25, p75] of the device time per call over the profiled reps."""
    noisy: bool = False
    """The spread is wide enough to change a conclusion; ``noise_reasons`` says why."""
    noise_reasons: list[str] = field(default_factory=list)
    grad: bool = False
    """Forward and backward were measured (``kernels`` carry their ``pass_``)."""
    forward_time_us: Time | None = None
    backward_time_us: Time | None = None
    grad_seed: str | None = None
    """With grad: how the backward was seeded (the output's gradient the step starts from)."""
    compute_peak_tflops: float | None = None
    """The measured compute peak of this dtype on this device that ``pct_of_compute_peak`` uses."""
    diagnostics: list[str] = field(default_factory=list)
    """What torch reported while this was measured (warnings, recompile limits, fall-backs), and
    the tool's own explanations (a kernel above the bandwidth peak), one line each."""
    peak_memory_bytes: int | None = None
    """The most memory one call allocates above what it started with (its inputs), output
    included: the caching allocator's peak on CUDA, the profiler's memory events on the CPU."""
    forward_peak_memory_bytes: int | None = None
    """With grad: the forward's peak, the activations it saves for the backward included."""
    backward_peak_memory_bytes: int | None = None
    """With grad: the backward's peak above what the forward left allocated."""
    cpu_threads: int | None = None
    """On the CPU: the threads torch ran its kernels on (``torch.get_num_threads()``)."""
    source: SourceRef | None = None
    """The user's file and function measured (with the file's hash), when not a chain."""
    host: HostName | None = None
    """The ``--host`` box whose worker measured it (None: this machine's); the client sets it,
    so that a sweep spread over several boxes says which measured what (``measured_on``)."""

    @property
    def measured_on(self) -> str:
        """``b:cuda:1``: the box and the device that measured it, as a device list names them."""
        return f"{self.host}:{self.device}" if self.host else self.device

    @property
    def compile_time_s(self) -> float | None:
        return self.compile.compile_time_s if self.compile else None

    @property
    def wall_pending(self) -> bool:
        """An early-rows result: rows, device time and bytes are final, the wall time is not yet."""
        return self.wall_time_us is None

    @property
    def gbps(self) -> float | None:
        if not self.bytes_per_call or self.device_time_us <= 0:
            return None
        return self.bytes_per_call / (self.device_time_us * 1e3)


@dataclass
class SourceRef:
    """A function or ``nn.Module`` in the user's own file, measured instead of a chain
    (``kernel-tui model.py:block``). The path is the worker machine's; the file is imported in the
    worker only."""

    path: str
    name: str
    """A function, an ``nn.Module`` subclass built with no arguments, or a function of no
    arguments that returns a module."""
    inputs: list[str] = field(default_factory=list)
    """Input declarations as a chain writes them (``x: [N, 4096] bf16``), passed in this order."""
    sha256: str | None = None
    """In a measurement: the hash of the file's text that was measured."""

    @property
    def label(self) -> str:
        """``model.py:block``: what the app and the tables show."""
        return f"{self.path}:{self.name}"


@dataclass
class DeviceInfo:
    name: str
    """What requests use: ``cpu``, ``cuda:0``..."""
    label: str
    """What people read: ``NVIDIA H200``, ``CPU (2 cores)``."""
    total_memory: int
    free_memory: int
    peak_gbps: float | None = None
    peak_gbps_iqr: list[float] | None = None
    compute_peaks_tflops: dict[str, float] = field(default_factory=dict)
    """Measured compute peak by dtype (``fp32``, ``bf16``...), where measured."""
    driver: ShortText | None = None
    """A CUDA device's NVIDIA driver version (``550.54.15``), where the worker can read it."""


@dataclass
class DeviceIdentity:
    """Which device measured a report's results, to tell them apart from another box's: the
    ``--host`` box (None: the machine that ran the command), the device as the worker names it,
    what people call it, the torch it ran and, on CUDA, the driver."""

    host: HostName | None
    device: DeviceName
    label: ShortText
    torch: ShortText
    driver: ShortText | None = None

    @classmethod
    def of(cls, host: str | None, device: str, ready: WorkerReady) -> DeviceIdentity:
        """``device`` as the worker that said ``ready`` names it, on the ``--host`` box ``host``."""
        info = next((d for d in ready.devices if d.name == device), None)
        return cls(
            host=host,
            device=device or ready.default_device,
            label=(info.label if info else "")[:MAX_NAME_CHARS],
            torch=ready.torch_version[:MAX_NAME_CHARS],
            driver=info.driver if info else None,
        )


# ---------------------------------------------------------------------------------------------
# Requests (client -> worker)
# ---------------------------------------------------------------------------------------------


@dataclass
class ProfileRequest:
    """Measure one chain at each size x mode; answers stream one ``MeasurementResult`` each.

    Its settings are ``probes.link.settings.Settings`` (``of`` makes a request from them,
    ``settings`` reads them back), written flat on the wire: a field each, as every version of
    the protocol has written them."""

    id: str
    chain: str
    sizes: list[int] = field(default_factory=lambda: [DEFAULT_FOCUS_SIZE])
    modes: list[str] = field(default_factory=lambda: list(DEFAULT_MODES))
    device: str | None = None
    """None: the worker's default (CUDA if present, else the CPU)."""
    dtype: str = DEFAULT_DTYPE
    reps: int | None = None
    """None: sized to the kernel time."""
    grad: bool = False
    """Measure forward + backward: float inputs require grad; the backward starts from ones of the result's shape."""
    early_rows: bool = False
    """Each mode answers twice: once its profiled reps end (the rows, wall time None), then whole.
    The rows show without waiting for the wall-time reps (sized by ``TARGET_TIMING_S``), which
    are a large part of a new chain's eager wait. On a GPU only (``rows_before_wall_time``)."""
    call_budget_s: float = DEFAULT_CALL_BUDGET_S
    """The longest one call of the chain may take; past it the request stops with one line."""
    source: SourceRef | None = None
    """Measure a function of the user's file instead of a chain; ``chain`` then names it for
    display (``model.py:block``)."""
    type: Literal["profile"] = "profile"

    @classmethod
    def of(
        cls,
        id: str,
        chain: str,
        settings: Settings,
        *,
        sizes: list[int] | None = None,
        modes: list[str] | None = None,
        early_rows: bool = False,
        source: SourceRef | None = None,
    ) -> ProfileRequest:
        """A request to measure ``chain`` with ``settings``: at its sizes and modes, or at the
        ``sizes`` and ``modes`` given (the app's live N, one mode of a pair)."""
        return cls(
            id,
            chain,
            sizes=list(settings.sizes if sizes is None else sizes),
            modes=list(settings.modes if modes is None else modes),
            device=settings.device,
            dtype=settings.dtype,
            reps=settings.reps,
            grad=settings.grad,
            early_rows=early_rows,
            call_budget_s=settings.call_budget_s,
            source=source,
        )

    def settings(self) -> Settings:
        return Settings(
            sizes=tuple(self.sizes),
            modes=tuple(self.modes),
            dtype=self.dtype,
            device=self.device,
            reps=self.reps,
            grad=self.grad,
            call_budget_s=self.call_budget_s,
        )

    def invalid(self) -> str | None:
        """Why this request cannot be measured as asked (a setting out of its limits, in the
        settings model's words), or None."""
        try:
            self.settings().checked()
        except SettingError as exc:
            return str(exc)
        return None

    def rows_before_wall_time(self, device: str) -> bool:
        """Whether each mode's rows go out before its wall-time reps on ``device`` (``cuda:0``,
        ``cpu``): not on the CPU, whose wall-time reps run on every core, so the app drawing the
        rows meanwhile lands in them and widens their spread. On a GPU the app draws on a core of
        its own."""
        return self.early_rows and not device.startswith("cpu")


@dataclass
class InfoRequest:
    """Ask for the worker's devices and versions again (e.g. to refresh free memory)."""

    id: str
    type: Literal["info"] = "info"


@dataclass
class WarmupRequest:
    """Import and warm up Inductor/Triton in the background so that the first compile is fast;
    answered with ``RequestDone``. The client sends it when the worker would otherwise be idle."""

    id: str
    device: str | None = None
    type: Literal["warmup"] = "warmup"


@dataclass
class CancelRequest:
    """Cancel request ``id``; it answers ``RequestDone(cancelled=True)`` at its next safe point."""

    id: str
    type: Literal["cancel"] = "cancel"


@dataclass
class ShutdownRequest:
    type: Literal["shutdown"] = "shutdown"


# ---------------------------------------------------------------------------------------------
# Events (worker -> client)
# ---------------------------------------------------------------------------------------------


@dataclass
class WorkerReady:
    """Sent once torch is imported and the devices are known; also the answer to InfoRequest."""

    pid: int
    torch_version: str
    devices: list[DeviceInfo]
    default_device: str
    python: str = ""
    id: str | None = None
    protocol: int = 1
    """The worker's PROTOCOL_VERSION (workers before version 2 did not send it)."""
    type: Literal["ready"] = "ready"


@dataclass
class Progress:
    """What the worker is doing for request ``id``; ``message`` is the same in plain words."""

    id: str
    message: str
    stage: Stage = "measuring"
    mode: str | None = None
    size: Size | None = None
    step: int = 0
    total: int = 0
    type: Literal["progress"] = "progress"


@dataclass
class Heartbeat:
    """Sent about once a second while a request runs, from a thread that needs the GIL: a worker
    that goes quiet is stuck in one long C call (big-integer arithmetic), and is restarted."""

    id: str
    stage: str = ""
    type: Literal["heartbeat"] = "heartbeat"


@dataclass
class MeasurementResult:
    id: str
    measurement: Measurement
    type: Literal["result"] = "result"


@dataclass
class RequestFailed:
    """The request (or one size x mode of it) failed; ``size``/``mode`` say which when known."""

    id: str
    error: ChainErrorInfo
    size: Size | None = None
    mode: str | None = None
    type: Literal["failed"] = "failed"


@dataclass
class RequestDone:
    """The last message of every request."""

    id: str
    cancelled: bool = False
    type: Literal["done"] = "done"


Request = ProfileRequest | InfoRequest | WarmupRequest | CancelRequest | ShutdownRequest
Event = WorkerReady | Progress | Heartbeat | MeasurementResult | RequestFailed | RequestDone

_MESSAGES: dict[str, type[Request | Event]] = {
    get_args(get_type_hints(cls)["type"])[0]: cls for cls in (*get_args(Request), *get_args(Event))
}


# ---------------------------------------------------------------------------------------------
# JSON codec
# ---------------------------------------------------------------------------------------------


class ProtocolError(ValueError):
    """A line (or a report) that is not a message of this protocol, in plain words."""


def _json_key(f: dataclasses.Field[Any]) -> str:
    key: str = f.metadata.get("json", f.name)
    return key


def to_dict(obj: Any) -> Any:
    """A dataclass tree as plain JSON-able values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {_json_key(f): to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _build(tp: Any, value: Any, where: str) -> Any:
    """Rebuild ``value`` (plain JSON) as type ``tp``, or raise ProtocolError naming ``where``."""
    origin = get_origin(tp)
    if origin is Annotated:
        inner, *checks = get_args(tp)
        built = _build(inner, value, where)
        for check in checks:
            try:
                check(built)
            except ValueError as exc:
                raise ProtocolError(f"{where}: {exc}") from None
        return built
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise ProtocolError(f"{where}: missing value")
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _build(arg, value, where)
            except ProtocolError as exc:
                errors.append(str(exc))
        raise ProtocolError(errors[0] if len(errors) == 1 else f"{where}: {value!r:.40} is not a {_type_name(tp)}")
    if origin is Literal:
        if value not in get_args(tp):
            choices = ", ".join(repr(a) for a in get_args(tp))
            raise ProtocolError(f"{where}: {value!r:.40} is not one of {choices}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ProtocolError(f"{where}: expected a list, got {type(value).__name__}")
        (item,) = get_args(tp)
        return [_build(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where}: expected an object, got {type(value).__name__}")
        _, item = get_args(tp)
        return {str(k): _build(item, v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_dict(tp, value, where)
    if tp is Any:
        return value
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, bool):
        raise ProtocolError(f"{where}: expected int, got bool")
    if isinstance(tp, type) and not isinstance(value, tp):
        raise ProtocolError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
    return value


_HINTS: dict[type, dict[str, Any]] = {}

_Built = TypeVar("_Built", bound="DataclassInstance")


def from_dict(cls: type[_Built], data: Any, where: str = "") -> _Built:
    """Build dataclass ``cls`` from ``data`` (as written by ``to_dict``), strictly: every field
    without a default must be there, every value must have its field's type. Unknown keys are
    ignored (a newer peer's additions)."""
    where = where or cls.__name__
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: expected an object, got {type(data).__name__}")
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls, include_extras=True)
    values = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        key = _json_key(f)
        if key in data:
            values[f.name] = _build(hints[f.name], data[key], f"{where}.{key}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ProtocolError(f"{where}: missing field '{key}'")
    return cls(**values)


def encode(message: Any) -> str:
    """One message as one JSON line (no trailing newline)."""
    return json.dumps(to_dict(message), separators=(",", ":"))


MAX_INT_DIGITS = 30
"""Longest integer read: bytes and FLOPs stay far below 10**30. A longer one is refused before
Python converts it (past 4,300 digits its int-string limit raises, and below that the conversion
takes time quadratic in the length)."""


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ProtocolError(f"an integer of {digits:,} digits (the most is {MAX_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400
        raise ProtocolError(f"{text[:40]} is out of range")
    return value


def _no_constant(name: str) -> NoReturn:
    raise ProtocolError(f"{name} is not a finite number")


def loads(text: str) -> Any:
    """JSON as everything that comes in is read: numbers finite (no NaN, Infinity or 1e400),
    integers at most MAX_INT_DIGITS digits; ProtocolError in one line otherwise."""
    try:
        return json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON ({exc})") from None
    except RecursionError:
        raise ProtocolError("not JSON: nested too deep") from None


def decode(line: str) -> Request | Event:
    """Parse one JSON line into its message dataclass; ProtocolError if it is not one."""
    data = loads(line)
    if not isinstance(data, dict) or data.get("type") not in _MESSAGES:
        raise ProtocolError(f"unknown message: {line[:80]!r}")
    return from_dict(_MESSAGES[data["type"]], data, data["type"])


# ---------------------------------------------------------------------------------------------
# Recorded reports (what `kernel-tui profile --json` prints and the replay worker serves)
# ---------------------------------------------------------------------------------------------


def incoming(stream: IO[str], answer: Callable[[Event], None]) -> Iterator[Request | CancelRequest]:
    """The requests read from ``stream`` until its end. A line that is not one is answered with a
    RequestFailed; a ShutdownRequest ends the process at once, whatever it is doing."""
    for line in stream:
        if not line.strip():
            continue
        try:
            message = decode(line)
        except ProtocolError as exc:
            answer(RequestFailed("", ChainErrorInfo("worker", f"bad request: {exc}")))
            continue
        if isinstance(message, ShutdownRequest):
            os._exit(0)
        if isinstance(message, (ProfileRequest, InfoRequest, WarmupRequest, CancelRequest)):
            yield message


def _at_most_devices(devices: list[DeviceIdentity]) -> None:
    if len(devices) > MAX_DEVICES:
        raise ValueError(f"{len(devices)} devices (the most is {MAX_DEVICES})")


@dataclass
class ProfileReport:
    """A whole headless run: where it ran and every measurement, as committed under tests/data."""

    device: str
    device_label: str
    torch: str
    date: str
    results: list[Measurement]
    failures: list[RequestFailed] = field(default_factory=list)
    host: str = ""
    peak_gbps: float | None = None
    compute_peaks_tflops: dict[str, float] = field(default_factory=dict)
    """The compute peaks by dtype that the results' roofline figures use."""
    devices: Annotated[list[DeviceIdentity], _at_most_devices] = field(default_factory=list)
    """The devices that measured the results: one, or each entry of a sweep spread over several
    (each measurement names its own with ``host`` and ``device``); empty in reports written
    before protocol 5."""
    protocol: int = PROTOCOL_VERSION

    def to_json(self) -> str:
        data = to_dict(self)
        for result, measurement in zip(data["results"], self.results, strict=True):
            result["compile_time_s"] = measurement.compile_time_s
            result["gbps"] = measurement.gbps
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> ProfileReport:
        """The report in ``text``; ProtocolError, in plain words, if it is not one."""
        data = loads(text)
        _check_counts(data)
        return from_dict(cls, data, "report")


MAX_REPORT_RESULTS = 2 * MAX_SIZES * len(MODES)
"""Most measurements in a report: a sweep of every size in every mode, with and without grad."""
MAX_REPORT_ROWS = 5_000
"""Most kernel rows (memcpy/memset included) in a report, all its measurements together: recorded
ones hold tens; each row costs its share of the tables (about 1.5 ms on a CPU machine)."""


def _check_counts(data: Any) -> None:
    """Refuse a report too big to show in seconds, counted on the JSON before anything is built."""
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        return  # from_dict says what is wrong
    if len(results) > MAX_REPORT_RESULTS:
        raise ProtocolError(f"{len(results):,} measurements: over the limit of {MAX_REPORT_RESULTS:,}")
    lists = [m.get(key) for m in results if isinstance(m, dict) for key in ("kernels", "transfers")]
    rows = sum(len(found) for found in lists if isinstance(found, list))
    if rows > MAX_REPORT_ROWS:
        raise ProtocolError(f"{rows:,} kernel rows: over the limit of {MAX_REPORT_ROWS:,}")


def read_report(path: str | Path) -> tuple[str, ProfileReport]:
    """The report file at ``path`` (``--from``, ``--baseline``, ``--replay``): its text, as
    written, and what it holds. ProtocolError in one line naming the path if it is not a regular
    file of at most REPORT_LIMIT_BYTES, or not a report within the bounds above."""
    try:
        text = read_user_file(path, REPORT_LIMIT_BYTES, "the report")
    except UnreadableFile as exc:
        raise ProtocolError(str(exc)) from None
    try:
        return text, ProfileReport.from_json(text)
    except ProtocolError as exc:
        raise ProtocolError(f"{inert_line(str(path))} is not a kernel-tui report: {inert_line(str(exc))}") from None
