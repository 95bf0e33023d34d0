"""What a measurement can be asked for, and the limits of every setting, written once.

The headless command's flags, the app's command line and dialogs, the workspace reader and the
worker's check of a ``ProfileRequest`` all validate through this module, so each front end refuses
the same values in the same words. Each setting has one ``check`` (a value from a file or the
wire) and, where people type it, one ``parse`` (text); both raise ``SettingError``, a
``ValueError`` whose message is one plain line.

``Settings`` is the one shape of what to measure: the flags of the three commands parse into it
(``FLAGS``, the one table of them), a ``ProfileRequest`` is made from it and checked as it, and the
workspace saves and repairs it. Dependency-free and light: the command lines build their parsers
from ``FLAGS`` before the app starts its workers.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from probes.chain.dtype_names import DTYPES
from probes.link.safe_text import inert_line

if TYPE_CHECKING:
    import argparse

T = TypeVar("T")


class SettingError(ValueError):
    """A setting outside its limits; the message says which and what is allowed, in one line."""


MODES: tuple[str, ...] = ("eager", "compiled", "max-autotune", "reduce-overhead", "dynamic")
"""Every measurement mode. The others are ``torch.compile`` with that compile mode; ``dynamic`` is
the default compile mode with ``dynamic=True`` (one symbolic-shape compile for every size)."""
COMPILED_MODES: tuple[str, ...] = MODES[1:]
DEFAULT_MODES: tuple[str, ...] = ("eager", "compiled")
DEFAULT_SIZES: tuple[int, ...] = (100, 10_000, 1_000_000, 10_000_000, 100_000_000)
DEFAULT_FOCUS_SIZE = 1_000_000
DEFAULT_DTYPE = "fp32"


class Bounded(NamedTuple):
    """A whole number between two limits, both included."""

    what: str
    low: int
    high: int

    def check(self, value: object) -> int:
        if type(value) is not int or not self.low <= value <= self.high:
            raise SettingError(f"{self.what} must be between {self.low} and {self.high}")
        return value

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"


REPS = Bounded("reps", 1, 10_000)
"""Timing reps, when given (None: sized to the kernel time)."""
MAX_SIZE = 10**13
"""Largest N: far past any device's memory, small enough that arithmetic on it stays exact."""
MAX_SIZES_TEXT = 1_000
"""Longest sizes text accepted (a sweep is a handful of sizes)."""
MAX_SIZES = 64
"""Most sizes in one sweep."""

_SIZE = re.compile(r"([+-]?+[0-9][0-9_]*+(?:\.[0-9]++)?+(?:e[+-]?+[0-9]++)?+)\s*+([kmgt]?+)", re.IGNORECASE)
"""Possessive quantifiers (``*+``): a long text that does not match fails in linear time."""
_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_DEVICE = re.compile(r"cpu|cuda(:[0-9]{1,3})?")


def _shown(text: str) -> str:
    return inert_line(text if len(text) <= 40 else text[:37] + "...")


# -- sizes -----------------------------------------------------------------------------------


def check_size(value: object) -> int:
    """A size N from a file or the wire: a whole number from 1 to MAX_SIZE."""
    if type(value) is not int:
        raise SettingError(f"size {_shown(repr(value))} is not a whole number of elements")
    if value <= 0:
        raise SettingError(f"size {value} is not positive")
    if value > MAX_SIZE:
        raise SettingError(f"size {value:,} is absurdly large (over {MAX_SIZE:.0e} elements)")
    return value


def parse_size(text: str) -> int:
    """``1e6``, ``1_000_000``, ``1M``, ``10k`` -> an int; SettingError with a plain reason otherwise."""
    match = _SIZE.fullmatch(text.strip()) if len(text) <= MAX_SIZES_TEXT else None
    if not match:
        raise SettingError(f"'{_shown(text)}' is not a size: use e.g. 1e6, 1_000_000 or 1M")
    value = float(match.group(1).replace("_", "")) * _SUFFIX[match.group(2).lower()]
    shown = _shown(text.strip())
    if not math.isfinite(value) or value > MAX_SIZE:  # 1e400 is inf
        raise SettingError(f"size '{shown}' is absurdly large (over {MAX_SIZE:.0e} elements)")
    if value != int(value):
        raise SettingError(f"'{shown}' is not a whole number of elements")
    if value <= 0:
        raise SettingError(f"size '{shown}' is not positive")
    return int(value)


def check_sizes(values: object) -> list[int]:
    """A sweep's sizes from a file or the wire: one to MAX_SIZES sizes, each checked."""
    if not isinstance(values, (list, tuple)) or not values:
        raise SettingError("no sizes given: use e.g. 1e2,1e4,1e6")
    if len(values) > MAX_SIZES:
        raise SettingError(f"{len(values):,} sizes is too many for one sweep (the limit is {MAX_SIZES})")
    return [check_size(value) for value in values]


def parse_sizes(text: str) -> list[int]:
    """A comma-separated list of sizes (see parse_size); SettingError with a plain reason otherwise."""
    if len(text) > MAX_SIZES_TEXT:
        raise SettingError(f"the sizes are too long ({len(text):,} characters; the limit is {MAX_SIZES_TEXT:,})")
    return check_sizes([parse_size(part) for part in text.split(",") if part.strip()])


# -- modes -----------------------------------------------------------------------------------


def check_modes(values: Iterable[object]) -> list[str]:
    """Modes from a file, the wire or a command line: known names, each once, in the order given."""
    modes: list[str] = []
    for value in values:
        if value not in MODES:
            raise SettingError(f"unknown mode '{_shown(str(value))}': use {', '.join(MODES)}")
        if value not in modes:
            modes.append(str(value))
    if not modes:
        raise SettingError(f"give at least one mode: {', '.join(MODES)}")
    return modes


def parse_modes(text: str) -> list[str]:
    """``eager,compiled`` -> ["eager", "compiled"] (see check_modes)."""
    return check_modes(part.strip() for part in text.split(",") if part.strip())


def check_compile_mode(value: object) -> str:
    """The compile mode set against eager: one of COMPILED_MODES."""
    if value not in COMPILED_MODES:
        raise SettingError(f"unknown compile mode '{_shown(str(value))}': use {', '.join(COMPILED_MODES)}")
    return str(value)


# -- dtype, device, reps, grad ----------------------------------------------------------------


def check_dtype(value: object) -> str:
    """The dtype of the default inputs: one of DTYPES (declared inputs may use others)."""
    if value not in DTYPES:
        raise SettingError(f"unknown dtype '{_shown(str(value))}': use {', '.join(DTYPES)}")
    return str(value)


def check_device(value: object) -> str | None:
    """``cpu``, ``cuda`` or ``cuda:N`` (as written, any case), or None for the worker's default;
    whether this machine has that device is the worker's to say."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise SettingError(f"device {_shown(repr(value))} is not a name: use cpu, cuda or cuda:N")
    name = value.strip().lower()
    if not name:
        return None
    if ("," in name or ":" in name) and not _DEVICE.fullmatch(name):
        raise SettingError(f"'{_shown(value)}': {SEVERAL_DEVICES_ELSEWHERE}")
    if not _DEVICE.fullmatch(name):
        raise SettingError(f"unknown device '{_shown(value)}': use cpu, cuda or cuda:N")
    return name


MAX_DEVICES = 8
"""Most ``[HOST:]DEVICE`` entries one ``kernel-tui profile`` measures side by side: a worker each."""
MAX_HOSTS = 8
"""Most ``--host`` boxes one command line names."""
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
SEVERAL_DEVICES_ELSEWHERE = "a device list, or a HOST: device, is for --device of kernel-tui and kernel-tui profile"
"""Why one device is wanted here (the demo's, a workspace's own device): its views follow one worker."""


class DeviceEntry(NamedTuple):
    """One ``[HOST:]DEVICE`` of a device list: a worker on that box measuring that device."""

    host: str | None
    """A ``--host`` name; None for this machine's own worker."""
    device: str | None
    """As ``check_device`` gives it: None for the worker's default."""

    def __str__(self) -> str:
        device = self.device or "default"
        return device if self.host is None else f"{self.host}:{device}"


def parse_device_entries(text: str) -> list[DeviceEntry]:
    """``cpu``, ``cuda:0,cuda:1`` or ``cpu,gpu2:cuda`` -> the entries, each device checked by
    ``check_device``; a word before the first colon that is not a device (``gpu2:cuda``) is a host
    name, which ``--host`` must define (``check_hosts``). An empty text is one default entry."""
    if len(text) > MAX_SIZES_TEXT:
        raise SettingError(f"the device list is too long (the limit is {MAX_SIZES_TEXT:,} characters)")
    parts = [part.strip() for part in text.split(",")]
    if len(parts) > MAX_DEVICES:
        raise SettingError(f"{len(parts)} devices is too many to measure side by side (the limit is {MAX_DEVICES})")
    entries = []
    for part in parts:
        host, _, device = part.partition(":")
        if _DEVICE.fullmatch(part.lower()) or not device:
            entries.append(DeviceEntry(None, check_device(part)))
        elif _HOST_NAME.fullmatch(host):
            entries.append(DeviceEntry(host, check_device(device)))
        else:
            raise SettingError(f"'{_shown(host)}' is not a host name: use letters, digits, '.', '-' and '_'")
    if len(set(entries)) < len(entries):
        raise SettingError("a device is named twice: give each [HOST:]DEVICE once")
    return entries


def check_spread(entries: list[DeviceEntry]) -> None:
    """A device list a sweep can be spread over: several entries, each naming a device, all of
    one kind (all cpu or all cuda: the pairs each measures are set side by side in one sweep);
    SettingError saying what is wrong otherwise."""
    if len(entries) < 2:
        raise SettingError("give --device several entries to share the sweep among, e.g. cuda:0,cuda:1")
    if any(entry.device is None for entry in entries):
        raise SettingError("name each entry's device (cpu, cuda or cuda:N): the kinds must match")
    kinds = sorted({str(entry.device).partition(":")[0] for entry in entries})
    if len(kinds) > 1:
        raise SettingError(f"the devices share one sweep, so they must be of one kind: {' and '.join(kinds)} are mixed")


def check_host_name(value: object) -> str:
    """A ``--host`` name as a report or a measurement carries it: letters, digits, '.', '-' and
    '_', at most 63 characters."""
    if not isinstance(value, str) or not _HOST_NAME.fullmatch(value):
        raise SettingError(f"{_shown(repr(value))} is not a host name: use letters, digits, '.', '-' and '_'")
    return value


def parse_host(text: str) -> tuple[str, str]:
    """``NAME=COMMAND`` -> (name, command): a box reached by COMMAND, which starts a worker on its
    stdin/stdout (``gpu2=ssh gpu2 kernel-tui worker``); SettingError with a plain reason otherwise."""
    import shlex  # only a command line that names a host pays for it

    name, equals, command = text.partition("=")
    if not equals or not _HOST_NAME.fullmatch(name.strip()):
        raise SettingError(f"'{_shown(text)}' is not NAME=COMMAND, e.g. gpu2='ssh gpu2 kernel-tui worker'")
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise SettingError(f"{name.strip()}: {exc}") from None
    if not words:
        raise SettingError(f"{name.strip()}: empty command")
    return name.strip(), command


def check_hosts(entries: Iterable[DeviceEntry], hosts: Iterable[str]) -> dict[str, str]:
    """The ``--host`` texts as name -> command, each entry's host among them; SettingError naming
    an unknown host or one defined twice."""
    commands: dict[str, str] = {}
    for text in hosts:
        name, command = parse_host(text)
        if name in commands:
            raise SettingError(f"host '{name}' is defined twice")
        commands[name] = command
    if len(commands) > MAX_HOSTS:
        raise SettingError(f"{len(commands)} hosts is too many (the limit is {MAX_HOSTS})")
    for entry in entries:
        if entry.host is not None and entry.host not in commands:
            raise SettingError(f"unknown host '{entry.host}': define it with --host {entry.host}=COMMAND")
    return commands


Fleet = tuple[list[DeviceEntry], dict[str, str]]
"""The devices measured side by side, and the commands of the hosts they name, by name."""


def check_fleet(devices: object, hosts: object) -> Fleet:
    """A device list and its hosts from a file (``["cpu", "b:cpu"]``, ``{"b": "COMMAND"}``), each
    checked as ``--device`` and ``--host`` check them; SettingError otherwise."""
    if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
        raise SettingError("devices: not a list of [HOST:]DEVICE names")
    if not isinstance(hosts, dict) or not all(isinstance(v, str) for v in hosts.values()):
        raise SettingError("hosts: not a table of NAME: COMMAND")
    entries = parse_device_entries(",".join(devices)) if devices else [DeviceEntry(None, None)]
    return entries, check_hosts(entries, (f"{name}={command}" for name, command in hosts.items()))


def check_reps(value: object) -> int | None:
    """Timing reps from a file or the wire: None (sized to the kernel time) or within REPS."""
    return None if value is None else REPS.check(value)


def parse_reps(text: str) -> int | None:
    """Typed reps: ``auto`` or nothing for None, else a whole number within REPS."""
    if text.strip().lower() in ("", "auto"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise SettingError(f"give a whole number of reps ({REPS}) or 'auto'") from None
    return REPS.check(value)


def check_flag(value: object) -> bool:
    """An on/off setting (grad) from a file or the wire: true or false, nothing else."""
    if not isinstance(value, bool):
        raise SettingError("give true or false")
    return value


# -- the time budget for one call -------------------------------------------------------------

DEFAULT_CALL_BUDGET_S = 5.0
"""Longest one call of a chain may take (warm-up calls included, a compile not): a measurement runs
the call tens of times, so one past this would keep the device for minutes; it stops with one line
instead (probes.engine.watchdog.CallBudget)."""
MIN_CALL_BUDGET_S, MAX_CALL_BUDGET_S = 0.1, 3600.0
_SECONDS = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*s?", re.IGNORECASE)


def check_call_budget(value: object) -> float:
    """The call budget from a file or the wire: seconds, from MIN_CALL_BUDGET_S to MAX_CALL_BUDGET_S."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SettingError(f"call budget {_shown(repr(value))} is not a number of seconds")
    if not MIN_CALL_BUDGET_S <= value <= MAX_CALL_BUDGET_S:
        raise SettingError(f"call budget must be between {MIN_CALL_BUDGET_S:g} and {MAX_CALL_BUDGET_S:g} seconds")
    return float(value)


def parse_call_budget(text: str) -> float:
    """Typed call budget: ``5``, ``2.5`` or ``30s`` (seconds); SettingError otherwise."""
    match = _SECONDS.fullmatch(text.strip()) if len(text) <= 40 else None
    if not match:
        raise SettingError(f"'{_shown(text)}' is not a number of seconds: use e.g. 5 or 30s")
    return check_call_budget(float(match.group(1)))


# -- what to measure ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """What to measure: the one settings type of the headless command, the app (its workspace and
    command line), the demo and the worker's check of a request."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    """The sweep's sizes N (a request measures these)."""
    modes: tuple[str, ...] = DEFAULT_MODES
    dtype: str = DEFAULT_DTYPE
    device: str | None = None
    """None: the worker's default (CUDA if present, else the CPU)."""
    reps: int | None = None
    """None: sized to the kernel time."""
    grad: bool = False
    """Measure forward + backward."""
    call_budget_s: float = DEFAULT_CALL_BUDGET_S
    """The longest one call may take (see DEFAULT_CALL_BUDGET_S)."""
    focus_size: int = DEFAULT_FOCUS_SIZE
    """The app's live N, measured on every edit."""
    spread: bool = False
    """With several devices of one kind: the sweep's sizes and modes shared out among them and
    measured in parallel, instead of measured on each (``probes.link.spread``); nothing with one."""

    @property
    def compiled_mode(self) -> str:
        """The compiled mode set against eager: the first mode measured that is not eager
        (``compiled`` when none is)."""
        return next((mode for mode in self.modes if mode != "eager"), "compiled")

    def checked(self) -> Settings:
        """The same settings, normalised (modes once each, the device in lower case); the first
        setting out of its limits raises SettingError, named."""
        return Settings(**{name: _named(SHOWN[name], CHECKS[name], getattr(self, name)) for name in CHECKS})

    def given(self, changes: Mapping[str, Any]) -> Settings:
        """These settings with ``changes`` (by field name), each checked (SettingError, named).
        Sizes given without a live N make the first of them the live N: ``--sizes 1e3,1e4``
        measures 1e3 on every edit."""
        checked = {name: _named(SHOWN[name], CHECKS[name], value) for name, value in changes.items()}
        if "sizes" in checked and "focus_size" not in checked:
            checked["focus_size"] = checked["sizes"][0]
        return dataclasses.replace(self, **checked)

    @classmethod
    def repaired(cls, data: Mapping[str, object]) -> tuple[Settings, list[str]]:
        """The settings in ``data`` (a file's, by field name; missing ones take their default) and
        the names of those out of their limits, which take their default too."""
        values: dict[str, Any] = {}
        refused: list[str] = []
        for name, check in CHECKS.items():
            if name in data:
                try:
                    values[name] = check(data[name])
                except SettingError:
                    refused.append(SHOWN[name])
        return cls(**values), refused


def _tuple_of(check: Callable[[Any], list[T]]) -> Callable[[Any], tuple[T, ...]]:
    """``check`` giving a tuple, as ``Settings`` holds its sizes and modes."""
    return lambda value: tuple(check(value))


CHECKS: dict[str, Callable[[Any], Any]] = {
    "sizes": _tuple_of(check_sizes),
    "modes": _tuple_of(check_modes),
    "dtype": check_dtype,
    "device": check_device,
    "reps": check_reps,
    "grad": check_flag,
    "call_budget_s": check_call_budget,
    "focus_size": check_size,
    "spread": check_flag,
}
"""Each setting's check of a value from a file or the wire (a list of sizes becomes a tuple)."""
SHOWN: dict[str, str] = {name: name for name in CHECKS} | {"call_budget_s": "call budget", "focus_size": "focus size"}
"""Each setting's name in a refusal."""


def _named(name: str, check: Callable[[Any], T], value: object) -> T:
    """``check(value)``, its refusal prefixed with the setting's name where the message lacks it."""
    try:
        return check(value)
    except SettingError as exc:
        message = str(exc)
        raise SettingError(message if name.rstrip("s") in message else f"{name}: {message}") from None


# -- the flags of the three commands -----------------------------------------------------------


class Flag(NamedTuple):
    """A command-line flag that sets one field of ``Settings``: the one definition of its name,
    help and parser; each command (``kernel-tui``, ``kernel-tui profile``, ``kernel-tui demo``)
    picks the flags it takes."""

    name: str
    setting: str
    """The ``Settings`` field it sets."""
    help: str
    parse: Callable[[str], Any] | None
    """Typed text -> a checked value (SettingError otherwise); None for a switch (on when given)."""
    metavar: str | None = None


FLAGS: dict[str, Flag] = {
    flag.setting: flag
    for flag in (
        Flag(
            "--sizes",
            "sizes",
            "the sweep's sizes N, comma-separated: 1e6, 1_000_000 and 1M all work (default: "
            f"{','.join(f'{n:.0e}'.replace('e+0', 'e') for n in DEFAULT_SIZES)})",
            _tuple_of(parse_sizes),
            "SIZES",
        ),
        Flag(
            "--n",
            "focus_size",
            "the size the app measures on every edit (default: the first of --sizes, else 1e6)",
            parse_size,
            "SIZE",
        ),
        Flag(
            "--modes",
            "modes",
            f"what to measure, comma-separated, any of: {', '.join(MODES)} (default: {','.join(DEFAULT_MODES)})",
            _tuple_of(parse_modes),
            "MODES",
        ),
        Flag(
            "--device",
            "device",
            "cpu, cuda or cuda:N (default: CUDA when present, else the CPU)",
            check_device,
            "DEVICE",
        ),
        Flag(
            "--dtype",
            "dtype",
            f"dtype of the default inputs a, b, c: {', '.join(DTYPES)} (default: {DEFAULT_DTYPE})",
            check_dtype,
            "DTYPE",
        ),
        Flag(
            "--reps",
            "reps",
            f"timing reps, {REPS}, or auto (the default): sized to the kernel time",
            parse_reps,
            "REPS",
        ),
        Flag(
            "--call-budget",
            "call_budget_s",
            f"stop when one call of the chain takes longer than this (default: {DEFAULT_CALL_BUDGET_S:g} s)",
            parse_call_budget,
            "SECONDS",
        ),
        Flag(
            "--spread",
            "spread",
            "with several devices of one kind (--device cuda:0,cuda:1): share the sweep's sizes and modes "
            "out among them, measured in parallel and shown as one sweep, instead of measuring each on all "
            "(with one device: nothing)",
            None,
        ),
        Flag(
            "--grad",
            "grad",
            "measure a training step: forward, then backward from ones of the result's shape and dtype",
            None,
        ),
    )
}
"""Every settings flag, by the field it sets."""


def add_flags(parser: argparse.ArgumentParser, settings: Iterable[str], notes: Mapping[str, str] = {}) -> None:
    """Add the flags of ``settings`` (field names) to ``parser``, each None unless given; ``notes``
    adds what a flag means to this command alone to its help, by field name."""
    for setting in settings:
        flag = FLAGS[setting]
        text = f"{flag.help}; {notes[setting]}" if setting in notes else flag.help
        if flag.parse is None:
            parser.add_argument(flag.name, dest=setting, action="store_const", const=True, help=text)
        else:
            parser.add_argument(flag.name, dest=setting, metavar=flag.metavar, help=text)


def add_host_flag(parser: argparse.ArgumentParser) -> None:
    """``--host NAME=COMMAND`` (repeatable), the box a ``HOST:`` of ``--device`` names; beside
    ``--worker-cmd`` it says where a worker runs."""
    parser.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a box reached by COMMAND, which starts a worker on its stdin/stdout, for --device NAME:DEVICE, "
        f"e.g. gpu2='ssh gpu2 kernel-tui worker' (repeatable, at most {MAX_HOSTS})",
    )


def flags_given(args: argparse.Namespace, settings: Iterable[str]) -> dict[str, Any]:
    """The settings the flags of ``settings`` set (field name -> checked value), those given only;
    a refusal is a SettingError that names the flag."""
    given: dict[str, Any] = {}
    for setting in settings:
        flag, text = FLAGS[setting], getattr(args, setting)
        if text is None:
            continue
        try:
            given[setting] = text if flag.parse is None else flag.parse(text)
        except SettingError as exc:
            raise SettingError(f"{flag.name}: {exc}") from None
    return given
