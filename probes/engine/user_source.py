"""A function or an ``nn.Module`` from the user's own file, measured as a chain is measured.

``kernel-tui profile model.py:block --input 'x: [N, 4096] bf16'`` names a file on the worker's
machine and a name in it. The worker (and only the worker: the app never imports a user's file)
imports the file here and hands the engine a ``SourceChain``, a ``ParsedChain`` whose function calls
the user's code with the declared inputs, so that every mode, size, grad and figure works as it
does for a chain.

Importing. The file's text is read once (a regular file of bounded size), hashed, compiled under its
own path and run as a module of a unique name, with the file's folder on ``sys.path`` for that
import only, so that its sibling modules import. The folder comes after the installed packages: a
``numpy.py`` beside the file never shadows the numpy torch imports (each measurement says which
siblings are passed over so). Those siblings are recorded with their hashes: a
request re-imports when the file or any of them changed, dropping the stale siblings from
``sys.modules`` first. Bytecode is neither read for the file (its text is compiled as read) nor
written for the siblings, so a save within the same second as the last import is never hidden
behind a stale ``.pyc``. Only the modules this import added are ever dropped: a file next to the
tool's own modules leaves them alone.

The name. A function with parameters is the block itself, called with the inputs in the order they
are declared. A class must be an ``nn.Module`` subclass, built with no arguments; a function with
no parameters must return a module. A module is built once per device, dtype and grad for each
version of the file: on the device (under ``torch.device``), converted to the run's dtype, its
parameters requiring grad with ``--grad`` (they then join the step's leaves, so their gradients are
reset between calls as the inputs' are). A second copy is built on ``meta`` for the memory guard.

The guard. The memory guard runs the code on meta tensors first, as for a chain. Arbitrary code may
not run there (it reads a tensor's value, loads weights); then the guard is skipped and the code
runs on the device under the same runtime checks as a chain: the call budget, the plain-Python
watch and the worker's out-of-memory handling.

Errors. Whatever the user's code raises (a SyntaxError on import, an exception at run time) is one
line, ``model.py:LINE: ExcType: message``, at the deepest frame inside the user's files.

The budget. Every part of the user's code runs under the call budget (``CALL_BUDGET.user_code``):
its import, its constructor or factory, the text of what it raises (``text_of``), as the measured
calls do. Past it: ``model.py:LINE: took longer than 5 s (in __init__)``, where it was stopped.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from probes.chain.errors import ChainError
from probes.chain.expr import ParsedChain, parse_inputs
from probes.engine.errors import MeasureError
from probes.engine.inputs import TORCH_DTYPES
from probes.engine.watchdog import CALL_BUDGET, CallOverBudget, text_of
from probes.link.protocol import ChainErrorInfo, ErrorKind, SourceRef
from probes.link.safe_files import MIB, UnreadableFile, read_user_bytes
from probes.link.safe_text import inert_line

SOURCE_LIMIT_BYTES = 4 * MIB
"""Largest source file read: a model file of thousands of lines is well under 1 MiB."""
_MODULE_PREFIX = "_kernel_tui_user_"
_META = torch.device("meta")
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
"""A frame as Dynamo quotes the user's code in its messages (``from user code: File ...``)."""


@dataclass
class _Imported:
    """One version of a user's file, imported, with what it imported beside it."""

    module: types.ModuleType
    hashes: dict[Path, str]
    """The file's and each sibling module's hash when imported: a change re-imports."""
    siblings: list[str]
    """The modules of the file's folder this import added to ``sys.modules``."""
    shadowed: list[str] = field(default_factory=list)
    """The modules of the file's folder that an import finds elsewhere first."""
    built: dict[tuple[str, str, str, bool], _Target] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return next(iter(self.hashes.values()))

    @property
    def files(self) -> frozenset[Path]:
        return frozenset(self.hashes)


@dataclass(frozen=True)
class _Target:
    """What a call runs on one device: the function, or the module built for it, and the
    parameters that require grad."""

    call: Callable[..., Any]
    parameters: tuple[torch.Tensor, ...] = ()


_imported: dict[Path, _Imported] = {}
"""The current version of each file imported by this worker, by resolved path."""


@dataclass(frozen=True, kw_only=True)
class SourceChain(ParsedChain):
    """A user's function or module as the engine's chain: ``build_function`` calls it."""

    ref: SourceRef
    """The file and name asked for, with the hash of the text that runs."""
    identity: str
    """What compiled code is cached by: the name, the hashes of every file it came from, the dtype."""
    files: frozenset[Path]
    on_device: _Target
    on_meta: _Target | None
    """None when the code cannot even be built on meta: the memory guard is skipped."""
    notes: list[str] = field(default_factory=list)
    """What each of its measurements should say besides (the memory guard skipped, and why)."""

    @property
    def folder(self) -> Path:
        """The user's file's folder: frames there are the user's code."""
        return _folder(self.files)

    @property
    def parameters(self) -> tuple[torch.Tensor, ...]:
        """The module's parameters that require grad on the device (none for a function)."""
        return self.on_device.parameters

    def note_unguarded(self, why: str) -> None:
        """Say on each of its measurements that the memory guard could not check it, and why."""
        note = inert_line(
            f"the memory guard could not check {self.text} before it ran ({why}): "
            "it ran under the call budget and the worker's own checks only"
        )
        if note not in self.notes:
            self.notes.append(note)

    def build_function(self, namespace: dict[str, object]) -> Callable[..., object]:
        """``chain(*inputs, N)`` that calls the user's code: on meta inputs the meta copy of a
        module, else the device's. Nothing is built here: both were built when it was loaded."""
        device_call = self.on_device.call
        meta_call = self.on_meta.call if self.on_meta is not None else device_call

        def chain(*tensors: torch.Tensor, N: int) -> object:
            call = meta_call if tensors and tensors[0].is_meta else device_call
            return call(*tensors)

        return chain


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes:
    try:
        return read_user_bytes(path, SOURCE_LIMIT_BYTES, "the source file")
    except UnreadableFile as exc:
        raise ChainError(ChainErrorInfo("input", str(exc))) from None


def _current_hash(path: Path) -> str | None:
    try:
        return _hash(read_user_bytes(path, SOURCE_LIMIT_BYTES, "the source file"))
    except OSError:
        return None


def _module_file(module: object) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if isinstance(file, str) else None


def _folder(files: frozenset[Path]) -> Path:
    """The folder of a user's file, from its files (the file and the siblings beside it)."""
    return min(files, key=lambda file: len(file.parts)).parent


def _is_under(path: Path | None, folder: Path) -> bool:
    return path is not None and path.is_relative_to(folder)


def _forget(imported: _Imported) -> None:
    """Drop an imported version and the sibling modules it added from ``sys.modules``."""
    sys.modules.pop(imported.module.__name__, None)
    for name in imported.siblings:
        sys.modules.pop(name, None)


def _shadowed(folder: Path) -> list[str]:
    """The modules of ``folder`` (``name.py``, ``name/__init__.py``) that an import finds elsewhere
    first: the folder is searched after the installed packages."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    names = {e.stem for e in entries if e.suffix == ".py"} | {e.name for e in entries if (e / "__init__.py").is_file()}
    shadowed = []
    for name in sorted(n for n in names if n.isidentifier()):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin is not None and not _is_under(Path(spec.origin).resolve(), folder):
            shadowed.append(name)
    return shadowed


@contextmanager
def _folder_importable(folder: Path) -> Iterator[None]:
    """The file's folder last on ``sys.path`` and no bytecode written, for one import only."""
    wrote_bytecode = sys.dont_write_bytecode
    sys.path.append(str(folder))
    sys.dont_write_bytecode = True
    importlib.invalidate_caches()  # a sibling written since the last import is found
    try:
        yield
    finally:
        sys.dont_write_bytecode = wrote_bytecode
        try:
            sys.path.remove(str(folder))
        except ValueError:
            pass  # the user's code took it off itself


def _located(exc: BaseException, files: frozenset[Path], kind: ErrorKind = "runtime") -> ChainErrorInfo | None:
    """``model.py:LINE: ExcType: message`` at the deepest frame inside ``files``, searching the
    exception and those it was raised from (Dynamo wraps the user's error in its own); None when
    no frame of the user's files is in it."""
    found: tuple[Path, int, BaseException] | None = None
    current: BaseException | None = exc
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        where = _user_frame(current, files)
        if where is not None:
            found = (*where, current)
        current = current.__cause__ or current.__context__
    if found is None:
        return None
    path, line, error = found
    if isinstance(error, SyntaxError):
        return ChainErrorInfo("syntax", inert_line(f"{path.name}:{line}: {type(error).__name__}: {error.msg}"))
    return ChainErrorInfo(kind, inert_line(f"{path.name}:{line}: {type(error).__name__}: {_first_line(error)}"))


def _user_frame(exc: BaseException, files: frozenset[Path]) -> tuple[Path, int] | None:
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and Path(exc.filename) in files:
        return Path(exc.filename), exc.lineno
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.lineno is not None and Path(frame.filename) in files:
            return Path(frame.filename), frame.lineno
    quoted = [m for m in _FILE_LINE.finditer(text_of(exc)) if Path(m["file"]) in files]
    if quoted:
        return Path(quoted[-1]["file"]), int(quoted[-1]["line"])
    return None


def _first_line(exc: BaseException) -> str:
    for line in text_of(exc).splitlines():
        if line.strip() and not line.strip().startswith(("from user code", "While executing")):
            return line.strip()[:300]
    return type(exc).__name__


def _over_budget(folder: Path, what: str, stack: traceback.StackSummary) -> str:
    """``model.py:LINE: took longer than 5 s (in __init__)``, at the deepest frame of ``stack`` in
    the user's folder; ``what`` took longer, where none is."""
    inside = [frame for frame in stack if frame.lineno is not None and _is_under(Path(frame.filename), folder)]
    limit = f"took longer than {CALL_BUDGET.limit_s:g} s"
    if not inside:
        return inert_line(f"{what} {limit}")
    frame = inside[-1]
    where = "its import" if frame.name == "<module>" else frame.name
    return inert_line(f"{Path(frame.filename).name}:{frame.lineno}: {limit} (in {where})")


def _stopped(folder: Path, what: str, exc: CallOverBudget) -> ChainErrorInfo:
    """The line for a user's code stopped past its budget, where it was stopped."""
    return ChainErrorInfo("stuck", _over_budget(folder, what, traceback.extract_tb(exc.__traceback__)))


def _user_failure(exc: BaseException, files: frozenset[Path], what: str) -> ChainError:
    """The user's error, located; else ``what`` failed with the exception's first line."""
    info = _located(exc, files)
    if info is None:
        info = ChainErrorInfo("runtime", inert_line(f"{what}: {type(exc).__name__}: {_first_line(exc)}"))
    return ChainError(info)


def _import(path: Path) -> _Imported:
    """Import the file at ``path`` afresh, under a name of its own."""
    data = _read(path)
    sha = _hash(data)
    name = _MODULE_PREFIX + re.sub(r"\W", "_", path.stem, flags=re.ASCII) + "_" + sha[:12]
    module = types.ModuleType(name)
    module.__file__ = str(path)
    folder = path.parent
    before = set(sys.modules)
    sys.modules[name] = module
    imported = _Imported(module, {path: sha}, [], _shadowed(folder))
    try:
        with _folder_importable(folder):
            code = compile(data, str(path), "exec", dont_inherit=True)
            with CALL_BUDGET.user_code(functools.partial(_over_budget, folder, f"importing {path.name}")):
                exec(code, module.__dict__)  # the user named this file: it is theirs to run
    except CallOverBudget:
        _forget(_with_siblings(imported, before, folder))
        raise
    except Exception as exc:  # the user's code may raise anything: one line
        failed = _with_siblings(imported, before, folder)
        _forget(failed)
        raise _user_failure(exc, failed.files, f"importing {path.name}") from None
    return _with_siblings(imported, before, folder)


def _with_siblings(imported: _Imported, before: set[str], folder: Path) -> _Imported:
    """``imported`` with the modules of ``folder`` its import added, and their hashes."""
    for name in sorted(set(sys.modules) - before - {imported.module.__name__}):
        file = _module_file(sys.modules.get(name))
        if file is not None and _is_under(file, folder) and file.suffix == ".py":
            imported.siblings.append(name)
            imported.hashes[file] = _current_hash(file) or ""
    return imported


def _fresh(path: Path) -> _Imported:
    """The file's current version: the one imported before if no file of it changed, else a
    fresh import (the stale one and its siblings dropped first)."""
    known = _imported.get(path)
    if known is not None:
        if all(_current_hash(file) == sha for file, sha in known.hashes.items()):
            return known
        _forget(known)
        del _imported[path]
    imported = _import(path)
    _imported[path] = imported
    return imported


def _resolve(ref: SourceRef) -> Path:
    path = Path(ref.path).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    return path.resolve()


def _named(imported: _Imported, ref: SourceRef, path: Path) -> Any:
    module = imported.module
    if not ref.name.isidentifier():
        raise ChainError(ChainErrorInfo("input", inert_line(f"'{ref.name}' is not a Python name")))
    value = module.__dict__.get(ref.name)
    if value is None:
        raise ChainError(
            ChainErrorInfo("input", inert_line(f"{path.name} has no function or class named '{ref.name}'"))
        )
    if isinstance(value, type) and not issubclass(value, torch.nn.Module):
        raise ChainError(
            ChainErrorInfo("input", inert_line(f"{path.name}:{ref.name} is a class but not an nn.Module subclass"))
        )
    if not callable(value):
        raise ChainError(
            ChainErrorInfo("input", inert_line(f"{path.name}:{ref.name} is a {type(value).__name__}, not a function"))
        )
    return value


def _takes_arguments(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is not p.KEYWORD_ONLY or p.default is p.empty for p in parameters)


def _build(value: Any, device: torch.device, dtype: str, grad: bool, files: frozenset[Path], label: str) -> _Target:
    """What runs on ``device``: a function as it is, a module built there."""
    if not isinstance(value, type) and not _takes_arguments(value):
        factory: Callable[[], Any] = value
    elif isinstance(value, type):
        factory = value
    else:
        return _Target(value)
    try:
        with torch.device(device), CALL_BUDGET.user_code(functools.partial(_over_budget, _folder(files), label)):
            module = factory()
    except Exception as exc:  # the user's constructor may raise anything
        raise _user_failure(exc, files, f"building {label}") from None
    if not isinstance(module, torch.nn.Module):
        raise ChainError(
            ChainErrorInfo("runtime", inert_line(f"{label}() returned a {type(module).__name__}, not an nn.Module"))
        )
    module.to(device=device, dtype=TORCH_DTYPES[dtype])
    parameters = tuple(module.parameters())
    for parameter in parameters:
        parameter.requires_grad_(grad)
    return _Target(module, parameters if grad else ())


def _target(imported: _Imported, value: Any, device: torch.device, dtype: str, grad: bool, label: str) -> _Target:
    key = (label, str(device), dtype, grad)
    target = imported.built.get(key)
    if target is None:
        target = imported.built[key] = _build(value, device, dtype, grad, imported.files, label)
    return target


def _meta_target(imported: _Imported, value: Any, dtype: str, label: str) -> _Target | None:
    try:
        return _target(imported, value, _META, dtype, False, label)
    except ChainError:
        return None  # built for real below, where its error (if any) is the one to report


def _check_arity(call: Callable[..., Any], count: int, label: str) -> None:
    try:
        inspect.signature(call).bind(*range(count))
    except TypeError as exc:
        raise ChainError(
            ChainErrorInfo(
                "input",
                inert_line(
                    f"{label} does not take the {count} declared input(s): {exc}; "
                    "declare each with --input 'x: [N, 4096] bf16'"
                ),
            )
        ) from None
    except ValueError:
        return  # no signature to check (a builtin): the call will say


def load_source(ref: SourceRef, device: torch.device, dtype: str, grad: bool, label: str) -> SourceChain:
    """The user's ``ref.name`` of ``ref.path``, ready to measure on ``device``: imported (afresh
    when a file of it changed), built, checked against its declared inputs. Raises ChainError in
    one line (``model.py:LINE: ...`` for an error in the user's code)."""
    inputs = parse_inputs(ref.inputs)
    path = _resolve(ref)
    name = f"{path.name}:{ref.name}"
    try:
        imported = _fresh(path)
        value = _named(imported, ref, path)
        on_device = _target(imported, value, device, dtype, grad, name)
        on_meta = _meta_target(imported, value, dtype, name)
    except CallOverBudget as exc:
        raise ChainError(_stopped(path.parent, name, exc)) from None
    _check_arity(on_device.call, len(inputs), name)
    hashes = ",".join(imported.hashes[file] for file in sorted(imported.hashes))
    return SourceChain(
        text=label,
        inputs=inputs,
        result_name=None,
        ref=SourceRef(ref.path, ref.name, list(ref.inputs), imported.sha256),
        identity=f"{name}\n{hashes}\n{dtype}",
        files=imported.files,
        on_device=on_device,
        on_meta=on_meta,
        notes=[_shadowed_note(path, imported.shadowed)] if imported.shadowed else [],
    )


def _shadowed_note(path: Path, names: list[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return inert_line(
        f"{shown} beside {path.name} not imported from there: installed modules come first "
        "(the file's folder is searched after the installed packages)"
    )


def stopped_in(chain: SourceChain, exc: CallOverBudget) -> ChainErrorInfo:
    """The line for the user's code stopped past its budget outside a measured call (the memory
    guard's meta run), where it was stopped."""
    return _stopped(chain.folder, chain.text, exc)


def located(chain: ParsedChain, exc: ChainError | MeasureError) -> ChainErrorInfo:
    """A failure's info, at its line in the user's file when ``chain`` is one and the failure
    came from there; a chain's as it is."""
    if not isinstance(chain, SourceChain):
        return exc.info
    try:
        found = _located(exc, chain.files, exc.info.kind)
    except CallOverBudget as stopped:
        return _stopped(chain.folder, chain.text, stopped)
    return found if found is not None else exc.info


def over_budget(chain: ParsedChain, exc: CallOverBudget) -> ChainErrorInfo:
    """A measurement stopped past the call budget: at its line in the user's file when ``chain``
    is one and the stop came there, else the budget's line naming the size and the mode."""
    if isinstance(chain, SourceChain):
        stack = traceback.extract_tb(exc.__traceback__)
        if any(_is_under(Path(frame.filename), chain.folder) for frame in stack):
            return ChainErrorInfo("stuck", _over_budget(chain.folder, chain.text, stack))
    return ChainErrorInfo("stuck", CALL_BUDGET.message())
