"""What a project's own `torch.save` calls write: module state copied to the CPU, or not.

A checkpoint holds accelerator tensors only if they were saved as such. Many
projects write their weights through one helper that copies every tensor to
the CPU first: `torch.save(net.cpu().state_dict(), path)` (pix2pixHD, SPADE),
or a loop that replaces each entry of a state dict with `.cpu()` of itself
before saving it, alone or inside a dict of such (BasicSR's and KAIR's
`save_network`, and the many projects that vendor them). The weights such a
project publishes and reloads are CPU tensors. Only the idioms below count,
where the code shows every tensor of the payload copied; anything else
written is not known to be on the CPU.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from devlint.analysis.torchapi import DOWNLOAD_LOADS, LOAD_FUNCTIONS, SAVE_FUNCTIONS
from devlint.analysis.torchapi.frameworks import CPU_CHECKPOINT_ENTRIES
from devlint.names import dotted_name
from devlint.tree import descendants, own_nodes

Qualify = Callable[[cst.BaseExpression], "str | None"]
_LITERAL_LOAD = re.compile(r"""load\(\s*[rRuU]?['"]""")
_SAVE_LEAVES = frozenset(name.rsplit(".", 1)[1] for name in SAVE_FUNCTIONS)
_LOAD_LEAVES = frozenset(name.rsplit(".", 1)[1] for name in LOAD_FUNCTIONS | DOWNLOAD_LOADS)


def writes_cpu_state(module: cst.Module, qualify: Qualify, text: str) -> bool:
    """Does some `torch.save` of the file write module state whose every tensor it copied to the CPU?"""
    if not may_write_cpu_state(text):
        return False  # most files: no need to walk them
    if not any(_calls(node, _SAVE_LEAVES) and qualify(node.func) in SAVE_FUNCTIONS for node in descendants(module)):  # type: ignore[attr-defined]
        return False
    for scope in _scopes(module):
        nodes = list(own_nodes(scope))
        for node in nodes:
            if _calls(node, _SAVE_LEAVES) and node.args and qualify(node.func) in SAVE_FUNCTIONS:  # type: ignore[attr-defined]
                if _cpu_state(node.args[0].value, nodes, set()):  # type: ignore[attr-defined]
                    return True
    return False


def may_write_cpu_state(text: str) -> bool:
    """Cheap to tell from the text alone: it names both a save and `.cpu()`."""
    return "save" in text and ".cpu()" in text


def loads_state(module: cst.Module, qualify: Qualify, text: str) -> bool:
    """Does the file restore module state (`load_state_dict`) and load a checkpoint without
    `map_location`? Only such a file has a use for what the project writes."""
    if "load_state_dict" not in text:
        return False
    loads = LOAD_FUNCTIONS | DOWNLOAD_LOADS
    return any(_calls(node, _LOAD_LEAVES) and qualify(node.func) in loads for node in descendants(module))  # type: ignore[attr-defined]


def literal_loads(module: cst.Module, qualify: Qualify, text: str) -> tuple[str, ...]:
    """The literal paths the file's loads without `map_location` read (`torch.load("dirs/age.pt")`):
    files the project may hold, whose tensors' devices the project index reads (project/saved_tensors.py)."""
    if "load(" not in text or not _LITERAL_LOAD.search(text):
        return ()  # most files: no call of a load with a literal first argument
    found: set[str] = set()
    for node in descendants(module):
        if not _calls(node, _LOAD_LEAVES) or qualify(node.func) not in LOAD_FUNCTIONS:  # type: ignore[attr-defined]
            continue
        args = node.args  # type: ignore[attr-defined]
        if any(arg.star or arg.keyword is not None and arg.keyword.value == "map_location" for arg in args) or len(args) > 1 and args[1].keyword is None:
            continue
        first = args[0].value if args and args[0].keyword is None else None
        if type(first) is cst.SimpleString:
            value = first.evaluated_value  # type: ignore[attr-defined]
            if isinstance(value, str) and value:
                found.add(value)
    return tuple(sorted(found))


def _calls(node: cst.CSTNode, leaves: frozenset[str]) -> bool:
    """A call of a function or method by one of these last names (cheap: before qualifying it)."""
    if type(node) is not cst.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    leaf = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
    return leaf in leaves


def restores_module_state(load: cst.Call, scope: cst.CSTNode) -> bool:
    """Does what `load` reads reach `X.load_state_dict(...)` in its function: directly, through
    an entry (`ckpt["params"]`), a choice between such, or names bound to any of them?"""
    names: set[str] = set()
    nodes = list(own_nodes(scope))
    for _ in range(3):  # `ckpt = torch.load(p)`, `sd = ckpt["params"]`, `sd = sd[key]`
        for node in nodes:
            if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
                if _from_load(node.value, load, names):  # type: ignore[attr-defined]
                    names.add(node.targets[0].target.value)  # type: ignore[attr-defined]
    for node in nodes:
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "load_state_dict" and node.args:  # type: ignore[attr-defined]
            if _from_load(node.args[0].value, load, names):  # type: ignore[attr-defined]
                return True
    return False


def read_as_cpu_format(load: cst.Call, scope: cst.CSTNode) -> bool:
    """Is what `load` reads, bound to a name, looked up by an entry only a CPU writer's format has
    (`loadnet["params_ema"]`, `"params_ema" in loadnet`)? Such a file holds CPU tensors, whoever
    published it."""
    nodes = list(own_nodes(scope))
    if not any(type(node) is cst.SimpleString and node.evaluated_value in CPU_CHECKPOINT_ENTRIES for node in nodes):  # type: ignore[attr-defined]
        return False
    names = {
        node.targets[0].target.value  # type: ignore[attr-defined]
        for node in nodes
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name and node.value is load  # type: ignore[attr-defined]
    }
    for node in nodes:
        if type(node) is cst.Subscript:
            value = node.value  # type: ignore[attr-defined]
            if value is load or type(value) is cst.Name and value.value in names:  # type: ignore[attr-defined]
                return True  # `torch.load(p)["params_ema"]`, `loadnet[keyname]`
    return False


def _from_load(expr: cst.BaseExpression, load: cst.Call, names: set[str]) -> bool:
    if expr is load:
        return True
    if type(expr) is cst.Name:
        return expr.value in names  # type: ignore[attr-defined]
    if type(expr) is cst.Subscript:
        return _from_load(expr.value, load, names)  # type: ignore[attr-defined]
    if type(expr) is cst.IfExp:  # `ckpt["params"] if "params" in ckpt else ckpt` (SwinIR's tests)
        return _from_load(expr.body, load, names) and _from_load(expr.orelse, load, names)  # type: ignore[attr-defined]
    return False


def _cpu_state(expr: cst.BaseExpression, scope: list[cst.CSTNode], seen: set[str]) -> bool:
    """Is every tensor of `expr` a CPU copy of module state, by one of the idioms above?"""
    if type(expr) is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value == "state_dict":
            return _is_cpu_call(func.value)  # `net.cpu().state_dict()`
        if dotted_name(func) == "dict" and expr.args:  # type: ignore[attr-defined]
            return all(arg.keyword is not None and _cpu_state(arg.value, scope, seen) for arg in expr.args)  # type: ignore[attr-defined]
        return False
    if type(expr) is cst.DictComp:
        return _is_cpu_call(expr.value)  # type: ignore[attr-defined]  # `{k: v.cpu() for k, v in sd.items()}`
    if type(expr) is cst.Dict:
        return bool(expr.elements) and all(
            isinstance(e, cst.DictElement) and _cpu_state(e.value, scope, seen) for e in expr.elements  # type: ignore[attr-defined]
        )
    if type(expr) is cst.Name and expr.value not in seen:  # type: ignore[attr-defined]
        seen.add(expr.value)  # type: ignore[attr-defined]
        return _converted(expr.value, scope) or _built(expr.value, scope, seen)  # type: ignore[attr-defined]
    return False


def _is_cpu_call(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "cpu"  # type: ignore[attr-defined]


def _converted(name: str, scope: list[cst.CSTNode]) -> bool:
    """`for k, v in name.items(): ... name[k] = v.cpu()`: every entry replaced by its CPU copy (a
    key the loop adds instead would change the dict's size while it is iterated, an error)."""
    for node in scope:
        if type(node) is not cst.For or type(node.target) is not cst.Tuple or len(node.target.elements) != 2:  # type: ignore[attr-defined]
            continue
        value = node.target.elements[1].value  # type: ignore[attr-defined]
        walked = node.iter  # type: ignore[attr-defined]
        if type(value) is not cst.Name or type(walked) is not cst.Call or dotted_name(walked.func) != f"{name}.items":  # type: ignore[attr-defined]
            continue
        for inner in descendants(node.body):  # type: ignore[attr-defined]
            if type(inner) is cst.Assign and len(inner.targets) == 1:  # type: ignore[attr-defined]
                target, assigned = inner.targets[0].target, inner.value  # type: ignore[attr-defined]
                if type(target) is cst.Subscript and dotted_name(target.value) == name and _is_cpu_call(assigned):
                    if dotted_name(assigned.func.value) == value.value:  # type: ignore[attr-defined]
                        return True
    return False


def _built(name: str, scope: list[cst.CSTNode], seen: set[str]) -> bool:
    """A dict the function starts empty and fills only with CPU module state (`save_dict[key] = state_dict`)."""
    bound = filled = False
    for node in scope:
        if type(node) in (cst.AugAssign, cst.AnnAssign) and dotted_name(node.target) == name:  # type: ignore[attr-defined]
            return False
        if type(node) is not cst.Assign:
            continue
        for target in node.targets:  # type: ignore[attr-defined]
            if type(target.target) is cst.Name and target.target.value == name:
                value = node.value  # type: ignore[attr-defined]
                empty = (type(value) is cst.Dict and not value.elements) or (type(value) is cst.Call and dotted_name(value.func) == "dict" and not value.args)
                if not empty:
                    return False
                bound = True
            elif type(target.target) is cst.Subscript and dotted_name(target.target.value) == name:
                if not _cpu_state(node.value, scope, seen):  # type: ignore[attr-defined]
                    return False
                filled = True
    return bound and filled


def _scopes(module: cst.Module) -> list[cst.CSTNode]:
    return [module, *(node for node in descendants(module) if type(node) is cst.FunctionDef)]
