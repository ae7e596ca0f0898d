"""Local functions that never run.

A function defined inside another function, or inside the file's
`if __name__ == "__main__":` block, exists only in that scope: no other file
can import it. Where no code of the file reads its name, nothing calls it, and
what it would do on a machine without an accelerator never happens. A
decorated one may be registered by its decorator, and a file that reads its
frame by name (`locals()`, `eval`) may call anything: both count as called.
"""

from __future__ import annotations

import ast

_FRAME_READERS = frozenset({"locals", "vars", "globals", "eval", "exec"})


def never_called(tree: ast.Module) -> tuple[tuple[int, int], ...]:
    """The first and last lines of each local function nothing in the file calls."""
    reads = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)}
    if reads & _FRAME_READERS:
        return ()
    spans: list[tuple[int, int]] = []
    _walk(tree.body, False, reads, spans)
    return tuple(spans)


def _walk(body: list[ast.stmt], local: bool, reads: set[str], spans: list[tuple[int, int]]) -> None:
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if local and not statement.decorator_list and statement.name not in reads:
                spans.append((statement.lineno, statement.end_lineno or statement.lineno))
            else:
                _walk(statement.body, True, reads, spans)
        elif isinstance(statement, ast.ClassDef):
            _walk(statement.body, False, reads, spans)  # methods are reached through the class
        elif isinstance(statement, ast.If) and not local and _is_main_check(statement.test):
            _walk(statement.body, True, reads, spans)
            _walk(statement.orelse, False, reads, spans)
        else:
            for field in ("body", "orelse", "finalbody"):
                _walk(getattr(statement, field, []), local, reads, spans)
            for handler in getattr(statement, "handlers", []):
                _walk(handler.body, local, reads, spans)
            for case in getattr(statement, "cases", []):
                _walk(case.body, local, reads, spans)


def _is_main_check(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = {side.id for side in sides if isinstance(side, ast.Name)}
    texts = {side.value for side in sides if isinstance(side, ast.Constant)}
    return names == {"__name__"} and texts == {"__main__"}
