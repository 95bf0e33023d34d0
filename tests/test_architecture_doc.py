"""The architecture as written is the architecture in the tree: every module, file or folder that
ARCHITECTURE.md (and the README and docs/) cites exists, and every name cited after a module
(``probes.link.client.WorkerClient``) is defined in it.

Docs that name a module the code no longer has send a reader to the wrong place, and they go stale
silently when modules are renamed or split; this test makes the rename fail until the docs follow.
It reads the sources with ``ast`` and imports nothing of the project: no torch, fast.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("ARCHITECTURE.md", "README.md", "docs/measuring.md", "docs/security.md", "docs/performance.md")
PACKAGES = ("probes", "tui")
PATH_ROOTS = (*PACKAGES, "tests", "benchmarks", "docs")

PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(PATH_ROOTS)})/[\w./-]*[\w/])")
"""``probes/engine/sweep.py``, ``tui/widgets/`` (a trailing ``*`` or punctuation is not part of it)."""
DOTTED = re.compile(rf"(?<![\w./-])((?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+)")
"""``probes.link.protocol``, ``probes.link.client.WorkerClient``, ``LiveSession.on_event``-style tails."""


def cited_paths(text: str) -> set[str]:
    return {match.rstrip(".") for match in PATH.findall(text)}


def cited_modules(text: str) -> set[str]:
    """Dotted names under probes/tui; ``probes.py`` is a file name (a planted one in the security
    notes), not a module."""
    return {name for name in DOTTED.findall(text) if not name.endswith(".py")}


def _module_file(parts: list[str], root: Path) -> Path | None:
    """The source of the module ``parts`` names: ``a/b.py`` or the package ``a/b/__init__.py``."""
    base = root.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _defined(body: list[ast.stmt]) -> set[str]:
    """Names a module or class body defines: functions, classes, assignments and imports."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            names |= _defined(node.body)
    return names


def module_problem(dotted: str, root: Path = ROOT) -> str | None:
    """Why ``dotted`` does not name a module (and a name in it), or None when it does."""
    parts = dotted.split(".")
    # The longest prefix that is a module; what follows it is a name in it (and one in that class).
    for end in range(len(parts), 1, -1):
        source = _module_file(parts[:end], root)
        if source is not None:
            break
    else:
        return f"{dotted}: no such module"
    rest = parts[end:]
    if not rest:
        return None
    tree = ast.parse(source.read_text(encoding="utf-8"))
    if rest[0] not in _defined(tree.body):
        if source.name == "__init__.py":  # a package: what follows it names a module it lacks
            return f"{dotted}: no such module"
        return f"{dotted}: {'.'.join(parts[:end])} defines no {rest[0]}"
    if len(rest) > 1:
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == rest[0]]
        if classes and rest[1] not in _defined(classes[0].body):
            return f"{dotted}: {rest[0]} defines no {rest[1]}"
    return None


def path_problem(cited: str, root: Path = ROOT) -> str | None:
    path = root / cited
    if cited.endswith("/"):
        return None if path.is_dir() else f"{cited}: no such folder"
    return None if path.exists() else f"{cited}: no such file or folder"


def problems(text: str, root: Path = ROOT) -> list[str]:
    found = [path_problem(p, root) for p in sorted(cited_paths(text))]
    found += [module_problem(m, root) for m in sorted(cited_modules(text))]
    return [problem for problem in found if problem]


@pytest.mark.parametrize("doc", DOCS)
def test_every_module_a_doc_cites_exists(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert problems(text) == []


def test_the_architecture_cites_every_package_of_the_tree() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    cited = cited_paths(text) | {m.replace(".", "/") for m in cited_modules(text)}
    packages = {
        str(init.parent.relative_to(ROOT)) for package in PACKAGES for init in (ROOT / package).rglob("__init__.py")
    }
    uncited = sorted(p for p in packages if not any(c == p or c.startswith(f"{p}/") for c in cited))
    assert uncited == []


def test_the_architecture_cites_every_module_of_the_tree() -> None:
    """A reader looking for where something lives finds every module in ARCHITECTURE.md."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    cited = cited_paths(text) | {f"{m.replace('.', '/')}.py" for m in cited_modules(text)}
    modules = {
        str(source.relative_to(ROOT))
        for package in PACKAGES
        for source in (ROOT / package).rglob("*.py")
        if source.name != "__init__.py"
    }
    assert sorted(modules - cited) == []


def test_a_missing_module_file_or_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "probes" / "link").mkdir(parents=True)
    (tmp_path / "probes" / "__init__.py").write_text("")
    (tmp_path / "probes" / "link" / "__init__.py").write_text("")
    (tmp_path / "probes" / "link" / "client.py").write_text(
        "class WorkerClient:\n    def start(self): ...\n    silence_s: float = 1.0\n"
    )
    text = (
        "`probes/link/client.py`, `probes.link.client.WorkerClient.start`, "
        "`probes.link.client.WorkerClient.silence_s`, `probes/link/`: here. "
        "`probes/link/gone.py`, `probes.link.gone`, `probes.link.client.Gone`, "
        "`probes.link.client.WorkerClient.gone()`, `tui/widgets/*`: not."
    )
    assert problems(text, tmp_path) == [
        "probes/link/gone.py: no such file or folder",
        "tui/widgets/: no such folder",
        "probes.link.client.Gone: probes.link.client defines no Gone",
        "probes.link.client.WorkerClient.gone: WorkerClient defines no gone",
        "probes.link.gone: no such module",
    ]
