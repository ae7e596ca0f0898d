"""Where a function reads the value a caller passed for one of its parameters.

A parameter's value (or its default) reaches only the code that reads the name
before the function binds it anew: `device = camera.origin.device` as a
statement of the body itself replaces it on every path, and nothing after it
sees the default. Names that only spell a member (`self.device`) or a keyword
(`f(device=self.device)`) read nothing of the parameter.
"""

from __future__ import annotations

import libcst as cst

from devlint.tree import child_nodes

# Builtins that read a frame's locals by name: a parameter may be read through them unseen.
_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec"})


class _Unseen(Exception):
    """The function may read its locals in a way the walk does not see."""


def parameter_reads(func: cst.FunctionDef, name: str) -> list[cst.Name] | None:
    """The reads of parameter `name` that may see the caller's value, in source order: those
    before the first statement of the body that binds the name anew (the reads in that
    statement's own value included). None where the function may read it unseen (`locals()`)."""
    found: list[cst.Name] = []
    body = func.body
    statements: list[cst.CSTNode] = []
    for statement in body.body:
        statements.extend(statement.body if isinstance(statement, cst.SimpleStatementLine) else (statement,))
    try:
        for statement in statements:
            targets = _rebinding_targets(statement, name)
            if targets is None:
                _loads(statement, name, found)
                continue
            assert isinstance(statement, (cst.Assign, cst.AnnAssign)) and statement.value is not None
            _loads(statement.value, name, found)  # `device = device or "cpu"` reads it first
            for target in targets:
                _target_loads(target, name, found)
            break
    except _Unseen:
        return None
    return found


def _rebinding_targets(statement: cst.CSTNode, name: str) -> list[cst.BaseExpression] | None:
    """The targets of an assignment that binds `name` itself (`name = ...`, `a, name = ...`)."""
    if isinstance(statement, cst.Assign):
        targets = [target.target for target in statement.targets]
    elif isinstance(statement, cst.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return None
    return targets if any(_binds(target, name) for target in targets) else None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(element.value, name) for element in target.elements)
    return False


def _target_loads(target: cst.CSTNode, name: str, found: list[cst.Name]) -> None:
    """What a binding target reads: nothing of a bare name, the object and index of `a.b`, `a[i]`."""
    if isinstance(target, cst.Name):
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _target_loads(element.value, name, found)
        return
    if isinstance(target, cst.StarredElement):
        _target_loads(target.value, name, found)
        return
    _loads(target, name, found)


def _loads(node: cst.CSTNode, name: str, found: list[cst.Name]) -> None:
    kind = type(node)
    if kind is cst.Name:
        if node.value == name:  # type: ignore[attr-defined]
            found.append(node)  # type: ignore[arg-type]
        return
    if kind is cst.Attribute or kind is cst.Arg:
        # `self.device` names a member, `f(device=...)` a parameter of `f`: only the value is read.
        _loads(node.value, name, found)  # type: ignore[attr-defined]
        return
    if kind is cst.Call and type(node.func) is cst.Name and node.func.value in _FRAME_READERS:  # type: ignore[attr-defined]
        raise _Unseen
    if kind is cst.AssignTarget:
        _target_loads(node.target, name, found)  # type: ignore[attr-defined]
        return
    if kind in (cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName):
        for child in child_nodes(node):
            if child is getattr(node, "target", None) or child is getattr(node, "name", None):
                _target_loads(child, name, found)
            else:
                _loads(child, name, found)
        return
    if kind in (cst.FunctionDef, cst.ClassDef, cst.Param):
        for child in child_nodes(node):
            if child is not node.name:  # type: ignore[attr-defined]
                _loads(child, name, found)
        return
    if kind in (cst.ImportAlias, cst.NameItem):
        return
    for child in child_nodes(node):
        _loads(child, name, found)
