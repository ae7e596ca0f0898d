"""Which functions of a file start an NCCL process group on every run that returns?

A project's setup helper can start NCCL for its scripts: dinov2's eval and training
scripts call `setup_and_build_model(args)` -> `setup(args)` -> `default_setup(args)` ->
`distributed.enable()`, whose body calls `init_process_group(backend="nccl")`;
Depth-Anything-V2's `train.py` calls `setup_distributed(port=...)`, whose `backend`
parameter defaults to "nccl". A file that calls such a helper is GPU-only just as one that
calls `init_process_group("nccl")` itself (analysis/gpu_only.py).

A function starts NCCL when a statement of its own body (not one under an `if`, a loop or a
`try`, and with no `return` before it) starts it, or calls a function that does without
passing that function's backend parameter. The calls to other files' functions are kept in
the file's summary by qualified name; the project index follows them (project/index.py).
Read from CPython's tree, which every summarised file has.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from devlint.names import ast_dotted_name

_PROCESS_GROUP = "torch.distributed.init_process_group"
LOCAL = "."  # a call of a function of the same file: `.default_setup`
_NOT_PROJECT = frozenset({"torch", "builtins", *sys.stdlib_module_names})  # names no project file defines
NO_PARAMETER = ("", -1)


@dataclass(frozen=True)
class Call:
    """An unconditional call: what it names, how many positional arguments and which keywords it passes."""

    name: str
    positional: int
    keywords: tuple[str, ...]
    starred: bool

    def passes(self, parameter: tuple[str, int]) -> bool:
        name, index = parameter
        return bool(name) and (self.starred or name in self.keywords or 0 <= index < self.positional)


def nccl_facts(tree: ast.Module | None, bindings: dict[str, str]) -> tuple[dict[str, tuple[str, int]], dict[str, tuple[Call, ...]]]:
    """(functions that start NCCL, with the backend parameter a caller may override or
    NO_PARAMETER; each other top-level function's unconditional calls of imported names)."""
    if tree is None:
        return {}, {}
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    starts: dict[str, tuple[str, int]] = {}
    calls: dict[str, tuple[Call, ...]] = {}
    local_calls: dict[str, list[Call]] = {}
    for name, function in functions.items():
        own = list(_unconditional_calls(function))
        started = _starts_itself(function, bindings)
        if started is not None:
            starts[name] = started
            continue
        local_calls[name] = [call for call in own if call.name in functions]
        kept = tuple(filter(None, (_kept(call, functions, bindings) for call in own)))
        if kept:
            calls[name] = kept
    changed = True
    while changed:  # a function of the file calling one that starts NCCL starts it too
        changed = False
        for name, own_calls in local_calls.items():
            if name not in starts and any(call.name in starts and not call.passes(starts[call.name]) for call in own_calls):
                starts[name] = NO_PARAMETER
                calls.pop(name, None)
                changed = True
    return starts, calls


def _kept(call: Call, functions: Collection[str], bindings: dict[str, str]) -> Call | None:
    """The call as the summary keeps it: a function of the file, or an imported name that may
    be the project's (not torch's, not the standard library's)."""
    if call.name in functions:
        return Call(LOCAL + call.name, call.positional, call.keywords, call.starred)
    qualified = _qualified(call.name, bindings)
    if qualified is None or qualified.split(".", 1)[0] in _NOT_PROJECT:
        return None
    return Call(qualified, call.positional, call.keywords, call.starred)


def _unconditional_calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Call]:
    """The calls of the statements run on every path, up to the first that may return."""
    for statement in function.body:
        if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)):
            value = statement.value
            if isinstance(value, ast.Await):
                value = value.value
            if isinstance(value, ast.Call):
                name = ast_dotted_name(value.func)
                if name is not None:
                    yield Call(
                        name,
                        sum(1 for arg in value.args if not isinstance(arg, ast.Starred)),
                        tuple(keyword.arg for keyword in value.keywords if keyword.arg is not None),
                        any(isinstance(arg, ast.Starred) for arg in value.args) or any(keyword.arg is None for keyword in value.keywords),
                    )
        if isinstance(statement, (ast.Return, ast.Raise)) or _may_return(statement):
            return


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _may_return(statement: ast.stmt) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    # A `return` is a statement: only the blocks of compound statements can hold one, never
    # their expressions, which are most of the nodes.
    blocks: list[ast.AST] = [statement]
    while blocks:
        for child in ast.iter_child_nodes(blocks.pop()):
            if isinstance(child, ast.Return):
                return True
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)) and not isinstance(child, _SCOPES):
                blocks.append(child)
    return False


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield child
        yield from _own_nodes(child)


def _starts_itself(function: ast.FunctionDef | ast.AsyncFunctionDef, bindings: dict[str, str]) -> tuple[str, int] | None:
    """`init_process_group("nccl")` among the unconditional statements, or with a backend
    parameter of the function that defaults to "nccl" and that the body never rebinds."""
    for statement in function.body:
        value = getattr(statement, "value", None) if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call) and _qualified(ast_dotted_name(value.func) or "", bindings) == _PROCESS_GROUP:
            backend = _backend(value)
            if isinstance(backend, ast.Constant) and backend.value == "nccl":
                return NO_PARAMETER
            if isinstance(backend, ast.Name):
                return _nccl_parameter(function, backend.id)
        if isinstance(statement, (ast.Return, ast.Raise)) or _may_return(statement):
            return None
    return None


def _backend(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "backend":
            return keyword.value
    return call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None


def _nccl_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[str, int] | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    default = defaults.get(name)
    if not (isinstance(default, ast.Constant) and default.value == "nccl"):
        return None
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return None  # rebound in the body
    index = next((i for i, a in enumerate(positional) if a.arg == name), -1)
    return name, index


def _qualified(dotted: str, bindings: dict[str, str]) -> str | None:
    root, _, rest = dotted.partition(".")
    target = bindings.get(root)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target
