"""The calls a file makes of its own functions, by the name called, and what each passes.

Where the file holds every call of a function (a private one, or any function of a script),
what those calls pass decides what the function's defaults and switches can be.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from devlint.names import dotted_name
from devlint.tree import descendants


def calls_by_name(module: cst.Module) -> dict[str, list[cst.Call]]:
    """Every call in the module, by the last name of what it calls (`f(...)`, `obj.f(...)`)."""
    found: dict[str, list[cst.Call]] = {}
    for node in descendants(module):
        if type(node) is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
            if name is not None:
                found.setdefault(name, []).append(node)  # type: ignore[arg-type]
    return found


def calls_of_file(ctx: Any) -> dict[str, list[cst.Call]]:  # noqa: ANN401 - a FileContext, built once through `ctx.shared`
    """`calls_by_name` of the file a context holds, for `ctx.shared(calls_of_file)`."""
    return calls_by_name(ctx.module)


def is_script(module: cst.Module) -> bool:
    """The file has a top-level `if __name__ == "__main__":` block."""
    for stmt in module.body:
        test = stmt.test if isinstance(stmt, cst.If) else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal):
            sides = {dotted_name(test.left) or _literal(test.left), dotted_name(test.comparisons[0].comparator) or _literal(test.comparisons[0].comparator)}
            if sides == {"__name__", "__main__"}:
                return True
    return False


def holds_every_call(module: cst.Module, func: cst.FunctionDef) -> bool:
    """The file's calls are all the calls only for a private function (`_encode`) or one of a
    script; the public functions of a module are also for other files and users to call."""
    return func.name.value.startswith("_") or is_script(module)


def passed(call: cst.Call, func: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    """What `call` passes for parameter `name` of `func` (by keyword or position); None where
    it passes nothing for it or may pass it unseen (`*args`, `**kwargs`)."""
    params = func.params
    positional = [*params.posonly_params, *params.params]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    if any(arg.star for arg in call.args):
        return None
    index = next((i for i, p in enumerate(positional) if p.name.value == name), None)
    if index is None:
        return None
    bound = bool(positional) and positional[0].name.value in ("self", "cls") and isinstance(call.func, cst.Attribute)
    given = [arg.value for arg in call.args if arg.keyword is None]
    index -= 1 if bound else 0
    return given[index] if 0 <= index < len(given) else None


def _literal(node: cst.BaseExpression) -> str | None:
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else None
