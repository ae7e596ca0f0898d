"""The package's import graph: no circles, counting every import (lazy ones inside functions and
those under `if TYPE_CHECKING:` too), and rules named for their codes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from devlint.codes import known_codes
from devlint.rules import all_infos, all_rules

PACKAGE = Path(__file__).resolve().parent.parent / "devlint"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """`a -> b` where a imports b. `from pkg import sub` is an edge to the submodule only: the
    package itself is already being imported when its own submodule runs."""
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
                targets = submodules if len(submodules) == len(node.names) else [base, *submodules]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges[name].add(target)
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circles() -> None:
    assert _circles(_edges(_modules())) == []


def test_the_check_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(edges) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", ["devlint.context", "devlint.config", "devlint.codes", "devlint.analysis.guards"])
def test_lower_layers_do_not_reach_the_rules(module: str) -> None:
    edges = _edges(_modules())
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(edges[current])
    assert not any(name == "devlint.rules" or name.startswith("devlint.rules.") for name in seen)


def test_each_rule_lives_in_a_file_named_for_its_code() -> None:
    # Configuration checks selectors against codes read from these names, without importing rules.
    for rule in all_rules():
        assert Path(rule.__module__.replace(".", "/")).name.split("_", 1)[0].upper() == rule.code
    assert known_codes() == tuple(info.code for info in all_infos())
