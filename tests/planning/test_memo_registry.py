"""Every process-wide memo is made with ``gpuplan.core.memo.memo``, so ``clear_memos`` reaches it
without a list kept by hand: a module- or class-level dict that its module empties with
``.clear()`` is a memo, and must be registered where it is made."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "gpuplan"


def _bare_dicts(tree: ast.Module) -> set[str]:
    """Names bound to ``{}`` at module level or in a class body."""
    found: set[str] = set()
    bodies = [tree.body] + [node.body for node in tree.body if isinstance(node, ast.ClassDef)]
    for body in bodies:
        for node in body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict) and not node.value.keys:
                found.add(ast.unparse(node.target))
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and not node.value.keys:
                found.update(ast.unparse(t) for t in node.targets)
    return found


def test_every_emptied_module_dict_is_a_registered_memo():
    unregistered = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for name in _bare_dicts(ast.parse(text)):
            if f"{name}.clear()" in text:
                unregistered.append(f"{path.relative_to(PACKAGE.parent)}: {name}")
    assert unregistered == []


def test_clear_memos_empties_a_memo_of_each_layer(catalog):
    from gpuplan.core.memo import memo
    from gpuplan.planning.memo import clear_memos
    from gpuplan.physics import queueing

    mine = memo()
    mine["key"] = 1
    queueing.tail_decay_rate(1.0, 0.5)
    clear_memos()
    assert mine == {} and queueing._tail_decay_rate.cache_info().currsize == 0
