"""Where the value a `torch.load` reads goes, within the function that reads it.

A CPU-only machine fails on a checkpoint saved from GPU tensors, and the loading
code cannot see how the file was written. What it does with the value says what
the file is. Module or optimizer state (`model.load_state_dict(ckpt["model"])`),
a pickled model that is called, a value handed to the project's own code or
returned: a training run's output, saved wherever it trained. A value only read
here as data (indexed, iterated, passed to numpy, to `torch.save` again, to
builtins) is a file of numbers: logs, statistics, predictions, a converter's
input, written by scripts that keep them on the CPU. In devlint's precision
reviews such loads were 4 true and 27 false; loads that restore state or hand
the value on, 38 true and 10 false.

Only the uses below count as data; any other use, or one the walk cannot follow
(a name a nested function reads), hands the value on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from devlint.analysis.torchapi import SAVE_FUNCTIONS, TENSOR_METHODS
from devlint.tree import descendants, own_nodes, parent_table

Qualify = Callable[[cst.BaseExpression], "str | None"]

# Reading a dict, a list or a string key: the result is still the file's data.
_CONTAINER_METHODS = frozenset({"items", "keys", "values", "get", "copy", "pop", "setdefault", "index", "count"})
_STRING_METHODS = frozenset(
    {
        "replace", "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "join", "lower", "upper",
        "format", "find", "partition", "rpartition", "removeprefix", "removesuffix", "encode", "decode",
    }
)
# Builtins that make numbers or text of what they read: the data ends there.
_VALUE_BUILTINS = frozenset(
    {"print", "len", "float", "int", "str", "bool", "sum", "any", "all", "abs", "round", "repr", "format", "type", "isinstance", "hasattr"}
)
# Builtins whose result holds what they read (the same items, one of them).
_CONTAINER_BUILTINS = frozenset({"list", "dict", "tuple", "set", "sorted", "reversed", "zip", "enumerate", "iter", "next", "map", "filter", "getattr", "min", "max"})
# Libraries that take numbers and give numbers (or write them out): never the project's own code.
_DATA_LIBRARIES = frozenset({"numpy", "math", "json", "pickle", "matplotlib", "pandas", "scipy", "random", "statistics", "copy", "logging"})
# torch's functions read tensors as data too, and give tensors on; restoring state goes through
# `load_state_dict` methods.
_TORCH = "torch"
_STATE_METHODS = frozenset({"load_state_dict"})


def read_only_as_data(load: cst.Call, scope: cst.CSTNode, qualify: Qualify) -> bool:
    """Is every use of what `load` reads, in `scope` (its function, or the module), a read of data?"""
    parents = parent_table(scope)
    own = {id(node) for node in own_nodes(scope)}
    names_elsewhere = {node.value for node in descendants(scope) if type(node) is cst.Name and id(node) not in own}  # type: ignore[attr-defined]
    uses: dict[str, list[cst.Name]] = {}
    for node in own_nodes(scope):
        if type(node) is cst.Name and _is_read(node, parents):  # type: ignore[arg-type]
            uses.setdefault(node.value, []).append(node)  # type: ignore[attr-defined, arg-type]
    if type(parents.get(load)) is cst.Expr:
        return False  # read and dropped: nothing says what it is
    pending: list[cst.CSTNode] = [load]
    bound: set[str] = set()
    read = False
    while pending:
        names = _data_use(pending.pop(), parents, qualify)
        if names is None:
            return False
        for name in names - bound:
            if name in names_elsewhere:
                return False  # a global a function of the module reads: not followed
            bound.add(name)
            pending.extend(uses.get(name, []))
        read = read or not names
    # A value bound and never read says nothing either.
    return read or any(uses.get(name) for name in bound)


def _data_use(expr: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode], qualify: Qualify) -> set[str] | None:
    """Follows `expr` up through data reads: the names it ends bound to (an empty set where it
    ends read), or None where it is handed on."""
    node = expr
    while True:
        parent = parents.get(node)
        kind = type(parent)
        if parent is None:
            return None
        if kind is cst.Subscript:
            if parent.value is not node:  # type: ignore[attr-defined]
                return set()  # used as a key
            node = parent
        elif kind in (cst.Index, cst.SubscriptElement, cst.Slice):
            return set()  # a key or a bound
        elif kind is cst.Attribute:
            call = parents.get(parent)
            if type(call) is cst.Call and call.func is parent:  # type: ignore[attr-defined]
                method = parent.attr.value  # type: ignore[attr-defined]
                if method not in _CONTAINER_METHODS and method not in _STRING_METHODS and method not in TENSOR_METHODS:
                    return None  # `net.eval()`, `optimizer.load_state_dict(...)`: an object of the project's
                node = call
            else:
                node = parent  # `x.shape`
        elif kind is cst.Arg:
            call = parents.get(parent)
            if type(call) is not cst.Call:
                return None
            reads = _reads(call, qualify)  # type: ignore[arg-type]
            if reads is None:
                return None
            if not reads:
                return set()  # made numbers, or written out again
            node = call
        elif kind in (cst.BinaryOperation, cst.UnaryOperation, cst.Element, cst.List, cst.Tuple, cst.Set, cst.DictElement,
                      cst.Dict, cst.StarredElement, cst.CompFor, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp):
            if kind is cst.CompFor:
                return _targets(parent.target)  # type: ignore[attr-defined]
            node = parent
        elif kind in (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.FormattedStringExpression, cst.Expr,
                      cst.If, cst.While, cst.AugAssign):
            return set()  # compared, tested, formatted, or left unused
        elif kind is cst.Assign:
            if parent.value is not node:  # type: ignore[attr-defined]
                return None
            return _all_targets(target.target for target in parent.targets)  # type: ignore[attr-defined]
        elif kind is cst.AssignTarget:
            if type(node) is not cst.Subscript:
                return None
            return set()  # an entry written into it: what it holds is followed where it is read
        elif kind is cst.For:
            return _targets(parent.target) if parent.iter is node else None  # type: ignore[attr-defined]
        else:
            return None  # returned, yielded, stored on an object, a `with` item ...


def _targets(target: cst.BaseExpression) -> set[str] | None:
    """`v`, `k, v`, `new[k]` (the container now holds data): names; `self.x` hands it on."""
    if type(target) is cst.Name:
        return {target.value}  # type: ignore[attr-defined]
    if type(target) in (cst.Tuple, cst.List):
        return _all_targets(element.value for element in target.elements)  # type: ignore[attr-defined]
    if type(target) is cst.Subscript and type(target.value) is cst.Name:  # type: ignore[attr-defined]
        return {target.value.value}  # type: ignore[attr-defined]
    return None


def _all_targets(targets: Iterable[cst.BaseExpression]) -> set[str] | None:
    found: set[str] = set()
    for target in targets:
        names = _targets(target)
        if names is None:
            return None
        found |= names
    return found


def _reads(call: cst.Call, qualify: Qualify) -> bool | None:
    """How a call reads its argument: as data it hands on in its result (True), as data it ends
    in (False), or unknown (None: the project's code, an object's method, `load_state_dict`)."""
    func = call.func
    if type(func) is cst.Name and qualify(func) is None:
        name = func.value  # type: ignore[attr-defined]
        return False if name in _VALUE_BUILTINS else True if name in _CONTAINER_BUILTINS else None
    qualified = qualify(func)
    if qualified is None or type(func) is cst.Attribute and func.attr.value in _STATE_METHODS:  # type: ignore[attr-defined]
        return None
    if qualified in SAVE_FUNCTIONS:
        return False
    root = qualified.split(".", 1)[0]
    return True if root == _TORCH else False if root in _DATA_LIBRARIES else None


def _is_read(name: cst.Name, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    """A name read as a value: not an attribute's name, a keyword, a parameter or a target."""
    parent = parents.get(name)
    kind = type(parent)
    if kind is cst.Attribute:
        return parent.value is name  # type: ignore[attr-defined]
    if kind is cst.Arg:
        return parent.value is name  # type: ignore[attr-defined]
    if kind in (cst.Param, cst.FunctionDef, cst.ClassDef, cst.AssignTarget, cst.ImportAlias, cst.AsName, cst.Global, cst.NameItem):
        return False
    if kind in (cst.For, cst.CompFor):
        return parent.target is not name  # type: ignore[attr-defined]
    if kind in (cst.Tuple, cst.List, cst.Element):
        return not _in_target(name, parents)
    return True


def _in_target(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    while True:
        parent = parents.get(node)
        if parent is None:
            return False
        if type(parent) is cst.AssignTarget:
            return True
        if type(parent) in (cst.For, cst.CompFor):
            return parent.target is node  # type: ignore[attr-defined]
        if type(parent) not in (cst.Tuple, cst.List, cst.Element, cst.StarredElement):
            return False
        node = parent
