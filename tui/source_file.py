"""The user's own file in the app (``kernel-tui model.py:block``), read as text, never run here.

The app shows the function's source and watches the file for saves, but the code runs only in the
worker (``probes.engine.user_source``): here the file is read as bounded text
(``probes.link.safe_files``) and parsed with ``ast``, which executes nothing.

``source_view`` extracts the ``def``/``class`` block of the name (decorators included) with its
first line number. ``FileWatch`` polls the file and the modules it imports from its own folder
(found from its import statements): a stat per file per poll, and a hash only when the stat
changed, so a save shows within one poll interval and an idle poll costs microseconds. A file
saved with the same text (an editor touching it) is no change. No textual, no torch.
"""

from __future__ import annotations

import ast
import hashlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from probes.link.protocol import SourceRef
from probes.link.safe_files import MIB, UnreadableFile, read_user_bytes
from probes.link.safe_text import inert_line

SOURCE_LIMIT_BYTES = 4 * MIB
"""Largest source file read (the worker reads no larger)."""
ON_WORKER = "the source lives on the worker machine"


@dataclass(frozen=True)
class SourceView:
    """What the editor shows for a source: the block's text, where it starts, or why not."""

    text: str
    first_line: int = 1
    problem: str | None = None
    """Why the block cannot be shown (the file is not here, does not parse, has no such name)."""


def _parse(text: str, filename: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SyntaxWarning would print over the app
        return ast.parse(text, filename)


def local_path(ref: SourceRef) -> Path:
    """The path as this machine reads it (the worker's own is ``ref.path``)."""
    return Path(ref.path).expanduser()


def source_view(ref: SourceRef) -> SourceView:
    """The ``def``/``class`` block named ``ref.name`` of the file, read and parsed, never run."""
    path = local_path(ref)
    try:
        text = read_user_bytes(path, SOURCE_LIMIT_BYTES, "the source file").decode("utf-8", errors="replace")
    except UnreadableFile as exc:
        if exc.missing:
            return SourceView(f"# {ref.label}: {ON_WORKER}\n", problem=ON_WORKER)
        return SourceView(f"# {inert_line(str(exc))}\n", problem=str(exc))
    try:
        module = _parse(text, str(path))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path.name}:{line}" if line else path.name
        problem = inert_line(f"{where}: {type(exc).__name__}: {getattr(exc, 'msg', exc)}")
        return SourceView(text, 1, problem)
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == ref.name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = text.splitlines()[start - 1 : node.end_lineno]
            return SourceView("\n".join(lines), start)  # no line after the block's last: the file has none
    return SourceView(text, 1, f"{path.name} has no def or class named '{ref.name}' at its top level")


def local_imports(path: Path, text: str) -> list[Path]:
    """The files of ``path``'s folder that its import statements name (``import helpers``, ``from
    layers import Block``, ``from . import util``), found without running anything."""
    try:
        module = _parse(text, str(path))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    folder = path.parent
    names: list[str] = []
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.append(node.module)
            elif node.level == 1:
                names += [node.module] if node.module else [alias.name for alias in node.names]
    found: list[Path] = []
    for name in dict.fromkeys(names):
        first = name.split(".")[0]
        for candidate in (folder / f"{first}.py", folder / first / "__init__.py"):
            if candidate.is_file() and candidate != path and candidate not in found:
                found.append(candidate)
    return found


Stamp = tuple[int, int]
"""(mtime in ns, size): what a poll compares before hashing."""


@dataclass
class FileWatch:
    """The file and its same-folder imports, as last seen. ``poll()`` says whether any changed."""

    path: Path
    stamps: dict[Path, Stamp | None] = field(default_factory=dict)
    hashes: dict[Path, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._look()

    @property
    def version(self) -> str:
        """A short hash of every watched file's text: a new one after each real change."""
        joined = "\n".join(f"{p}={self.hashes[p]}" for p in sorted(self.hashes))
        return hashlib.sha256(joined.encode()).hexdigest()[:12]

    @property
    def files(self) -> list[Path]:
        return list(self.stamps)

    def poll(self) -> bool:
        """True when a watched file's text changed since the last poll (then the watch moves on)."""
        if all(_stamp(p) == stamp for p, stamp in self.stamps.items()):
            return False
        before = self.version
        self._look()
        return self.version != before

    def _look(self) -> None:
        text = _read(self.path)
        files = [self.path, *(local_imports(self.path, text) if text is not None else [])]
        self.stamps = {p: _stamp(p) for p in files}
        self.hashes = {p: _digest(p) for p in files}


def _stamp(path: Path) -> Stamp | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _read(path: Path) -> str | None:
    try:
        return read_user_bytes(path, SOURCE_LIMIT_BYTES, "the source file").decode("utf-8", errors="replace")
    except UnreadableFile:
        return None


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(read_user_bytes(path, SOURCE_LIMIT_BYTES, "the source file")).hexdigest()
    except UnreadableFile:
        return None
