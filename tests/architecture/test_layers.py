"""The package's layers: folders are layers, imports only point down, no import cycles.

Every import is counted, the ones inside functions and under ``TYPE_CHECKING`` included
(docs/architecture.md). ``training`` and ``serving`` sit side by side and never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[2] / "gpuplan"

#: Bottom to top. A module may import its own layer and the layers before it.
LAYERS = ("core", "model", "hardware", "physics", "fabric", ("training", "serving"), "planning", "ci", "render", "cli")
RANK = {name: i for i, layer in enumerate(LAYERS) for name in ((layer,) if isinstance(layer, str) else layer)}
#: The root package (the public API) and ``python -m gpuplan`` sit above everything.
TOP = len(LAYERS)
#: Modules stay under this many lines (the brief: "Modules under 400 lines").
MAX_LINES = 400
MAX_TOP_LEVEL = 12


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else "<top>"


def _rank(module: str) -> int:
    return RANK.get(_layer(module), TOP)


def _imports(path: Path) -> set[str]:
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "gpuplan")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "gpuplan":
                continue
            for alias in node.names:  # ``from gpuplan.cli import app`` imports the submodule
                sub = f"{base}.{alias.name}"
                found.add(sub if (PACKAGE.parent / (sub.replace(".", "/") + ".py")).exists()
                          or (PACKAGE.parent / sub.replace(".", "/")).is_dir() else base)
    return found


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for path in sorted(PACKAGE.rglob("*.py")):
        graph.add_node(_module(path))
        for target in _imports(path):
            graph.add_edge(_module(path), target)
    return graph


def test_imports_point_down():
    wrong = []
    for src, dst in _graph().edges:
        if dst == "gpuplan" or dst.startswith("gpuplan.core.version"):
            bad = dst == "gpuplan" and _rank(src) != TOP
        else:
            bad = _rank(dst) > _rank(src) or (
                _rank(dst) == _rank(src) and _layer(src) != _layer(dst) and _rank(src) != TOP)
        if bad:
            wrong.append(f"{src} ({_layer(src)}) imports {dst} ({_layer(dst)})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles():
    graph = _graph()
    cycles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    # A package's __init__ re-exporting its own modules is not a cycle of the design.
    cycles = [c for c in cycles if not all(m.startswith(min(c, key=len) + ".") or m == min(c, key=len) for m in c)]
    assert not cycles, cycles


def test_every_module_belongs_to_a_layer():
    top = {p.name for p in PACKAGE.iterdir() if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))
           and p.name != "__init__.py"}
    assert len(top) <= MAX_TOP_LEVEL, sorted(top)
    stray = sorted(n for n in top if n.removesuffix(".py") not in RANK and n not in ("__main__.py",))
    assert not stray, f"modules outside every layer: {stray}"


def test_modules_are_short():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_LINES}
    assert not long, long


def test_an_upward_import_inside_a_function_is_found(tmp_path, monkeypatch):
    """The rule can fail: a physics module importing a renderer inside a function is caught."""
    fake = tmp_path / "gpuplan"
    (fake / "physics").mkdir(parents=True)
    (fake / "render").mkdir()
    (fake / "render" / "text.py").write_text("x = 1\n")
    (fake / "physics" / "bad.py").write_text("def f():\n    from gpuplan.render.text import x\n    return x\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", fake)
    edges = list(_graph().edges)
    assert ("gpuplan.physics.bad", "gpuplan.render.text") in edges
    assert _rank("gpuplan.render.text") > _rank("gpuplan.physics.bad")
