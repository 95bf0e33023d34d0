"""The import boundaries the design relies on: the UI side (the app, the chain language, the link
to the worker, the headless client) never imports the torch engine or torch, so it starts in a
fraction of torch's import time; ``probes`` never imports the UI; and no module imports itself
through others (a circle makes a module's meaning depend on which one was imported first)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
UI_SIDE = ("tui", "probes.chain", "probes.link", "probes.cli")


def modules_of(package: str) -> list[str]:
    """Every module of a package (or the one module), from its files: no import needed."""
    path = ROOT.joinpath(*package.split("."))
    if not path.is_dir():
        return [package]
    found = []
    for file in sorted(path.rglob("*.py")):
        parts = file.relative_to(ROOT).with_suffix("").parts
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_the_import_contracts_in_pyproject_hold(capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    status = lint_imports(no_cache=True, no_logo=True)
    assert status == 0, capsys.readouterr().out


def test_importing_any_module_of_the_ui_side_loads_neither_torch_nor_the_engine() -> None:
    """At run time, not only in the static graph: a module-level import behind ``try`` or a
    package ``__init__`` counts, as it would in the app."""
    probe = """
import importlib, json, sys
leaks = {}
for name in sys.argv[1:]:
    importlib.import_module(name)
    loaded = sorted(m for m in ("torch", "probes.engine") if m in sys.modules)
    if loaded:
        leaks[name] = loaded
        break
print(json.dumps(leaks))
"""
    names = [name for package in UI_SIDE for name in modules_of(package)]
    done = subprocess.run(
        [sys.executable, "-c", probe, *names], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == {}, "the first module that loads them"


def test_no_module_of_the_project_imports_itself_through_others() -> None:
    # A screen names the app it lives in for its types only (``if TYPE_CHECKING``): no import at run time.
    graph = grimp.build_graph("probes", "tui", cache_dir=None, exclude_type_checking_imports=True)
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_node(module)
        imports.add_edges_from((module, imported) for imported in graph.find_modules_directly_imported_by(module))
    circles = sorted(sorted(group) for group in nx.strongly_connected_components(imports) if len(group) > 1)
    assert circles == [], "modules that import each other, directly or through others"
