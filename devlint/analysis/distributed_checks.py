"""Functions that ask `torch.distributed` whether this is a multi-process job, and answer with
nothing but its answer: `is_dist_avail_and_initialized()`, `get_world_size()` helpers.

Read from CPython's tree of a file, for the project summary: a file that imports such a helper
tests `if dist_utils.is_dist_avail_and_initialized():` as the helper's own file does
(analysis/guards.py reads the same shape in the file itself).
"""

from __future__ import annotations

import ast

from devlint.names import ast_qualified_name

INITIALIZED = "torch.distributed.is_initialized"
WORLD_SIZE = "torch.distributed.get_world_size"


def asks_distributed(text: str) -> bool:
    """Whether a file's text may ask either question: most files ask neither, and need no look
    at their functions."""
    return "is_initialized" in text or "get_world_size" in text


def names_a_launcher_rank(text: str) -> bool:
    """Whether a file's text may read the rank a launcher gives each process (`LOCAL_RANK`,
    `--local_rank`): most files do not."""
    return "RANK" in text or "local_rank" in text or "local-rank" in text


def distributed_checks(tree: ast.Module | None, bindings: dict[str, str]) -> dict[str, str]:
    """Top-level functions asking `torch.distributed.is_initialized()` (or `get_world_size()`)
    whose every return is that call's answer, a constant or None: the question, by name."""
    if tree is None:
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        asked = {ast_qualified_name(n.func, bindings) for n in ast.walk(node) if isinstance(n, ast.Call)}
        returns = [n.value for n in ast.walk(node) if isinstance(n, ast.Return)]
        for question in (INITIALIZED, WORLD_SIZE):
            if question in asked and all(_answers(value, question, bindings) for value in returns):
                found[node.name] = question
    return found


def _answers(value: ast.expr | None, question: str, bindings: dict[str, str]) -> bool:
    if value is None or isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, (bool, int))):
        return True
    return isinstance(value, ast.Call) and ast_qualified_name(value.func, bindings) == question
