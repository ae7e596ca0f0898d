"""Facts about module classes read from their code once: state, buffers, construction-time methods.

`model.to(device)` moves what a module owns; a module that owns nothing (an
activation, an unweighted loss, a class of the file keeping only numbers)
has no device of its own, and a module is built where its constructor runs
until something moves it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from types import MappingProxyType
from typing import TypeVar

import libcst as cst

from devlint.analysis.guards import string_value
from devlint.analysis.program import ClassInfo, FunctionInfo
from devlint.analysis.shapes import number_parameter
from devlint.analysis.torchapi import TENSOR as ONE_TENSOR
from devlint.analysis.torchapi import TENSOR_METHODS
from devlint.analysis.torchapi import (
    PARAMETER_CLASSES,
    SHAPE_ONLY_METHODS,
    REGISTERED_STATE_CLASSES,
    factory_placement,
    function_results,
    owns_no_state_by_default,
    state_arguments,
)
from devlint.names import dotted_name, is_none
from devlint.tree import descendants

T = TypeVar("T")

_TENSOR_REGISTRATIONS = frozenset({"register_buffer", "register_parameter"})
# Calls that give a module state without a plain `self.x = ...`.
REGISTERING_CALLS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module", "setattr", "__setattr__"})


def nn_owns_no_state(leaf: str, call: cst.Call) -> bool:
    """`torch.nn.<leaf>(...)` builds a module with no parameters and no buffers: an activation,
    pooling, dropout; a loss unless given class weights; a norm unless `affine=True`."""
    if not owns_no_state_by_default(leaf) or any(arg.star for arg in call.args):
        return False
    given = state_arguments(leaf)
    positional = [arg for arg in call.args if arg.keyword is None]
    for arg in call.args:
        name = arg.keyword.value if arg.keyword is not None else None
        if name is None:
            index = positional.index(arg)
            name = next((n for n, position in given.items() if position == index), None)
        if name in given and not _off(arg.value):
            return False
    return True


def _off(value: cst.BaseExpression) -> bool:
    """`weight=None`, `affine=False`: the state is not asked for."""
    return is_none(value) or isinstance(value, cst.Name) and value.value == "False"


_PLACING_MOVES = frozenset({"cuda", "to", "xpu"})


def places_itself(cls: ClassInfo) -> bool:
    """A Module whose constructor moves itself or its own state (`self.model.cuda()`, as the
    MocoLoss and IDLoss of pSp, e4e and restyle-encoder do; `self.to(device)`): an instance is
    where that put it, not on the CPU where it was built."""
    if cls.placed is None:
        cls.placed = _places_itself(cls)
    return cls.placed


def _places_itself(cls: ClassInfo) -> bool:
    init = cls.methods.get("__init__")
    if init is None or init.self_param is None:
        return False
    me = init.self_param
    for node in descendants(init.node.body):
        if type(node) is not cst.Call or type(node.func) is not cst.Attribute or node.func.attr.value not in _PLACING_MOVES:  # type: ignore[attr-defined]
            continue
        receiver = dotted_name(node.func.value)  # type: ignore[attr-defined]
        if receiver is not None and (receiver == me or receiver.count(".") == 1 and receiver.startswith(me + ".")):
            if node.func.attr.value != "to" or node.args:  # type: ignore[attr-defined]
                return True
    return False


def owns_no_state(cls: ClassInfo, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    """A Module subclass of this file whose `__init__` keeps only numbers, strings and stateless layers.

    Read from the code, once per class: no fact of another function's run is needed.
    """
    if cls.stateless is None:
        cls.stateless = cls.bases == ["torch.nn.Module"] and _keeps_no_state(cls, qualify)
    return cls.stateless


def _keeps_no_state(cls: ClassInfo, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    init = cls.methods.get("__init__")
    numbers = {p.name.value for p in init.params if number_parameter(p)} if init is not None else set()
    kept_data: set[int] = set()
    if init is not None:
        # A local made by a torch function that returns one tensor (`pos = torch.zeros(91, 256)`):
        # kept as a plain attribute, it is no state `model.to()` would move (DL401's concern).
        for node in descendants(init.node.body):
            if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
                if _makes_a_tensor(node.value, qualify):  # type: ignore[attr-defined]
                    numbers.add(node.targets[0].target.value)  # type: ignore[attr-defined]
    if init is not None and init.self_param is not None:
        # A parameter kept as data (`self.n_min = n_min`, then `loss[self.n_min]`): no object the class
        # calls or asks anything of (`self.backbone(x)`, `self.backbone.eval()`), so no module.
        me = init.self_param
        used_as_object = {
            dotted_name(node.func) for node in descendants(cls.node.body) if type(node) is cst.Call  # type: ignore[attr-defined]
        } | {
            dotted_name(node.value) for node in descendants(cls.node.body) if type(node) is cst.Attribute  # type: ignore[attr-defined]
        }
        # Under its own name or another (`self.threshold = overlap_thresh`, ssd.pytorch's MultiBoxLoss).
        stored: dict[str, set[str | None]] = {}  # parameter -> the attributes it is kept as
        for node in descendants(init.node.body):
            if type(node) is cst.Assign and type(node.value) is cst.Name:  # type: ignore[attr-defined]
                attributes = stored.setdefault(node.value.value, set())  # type: ignore[attr-defined]
                attributes.update(dotted_name(t.target) for t in node.targets if type(t.target) is cst.Attribute and dotted_name(t.target.value) == me)  # type: ignore[attr-defined]
        numbers |= {p.name.value for p in init.params[1:] if p.star == "" and stored.get(p.name.value) and not stored[p.name.value] & used_as_object}
        kept_data = _kept_module_data(init, used_as_object, qualify)
    for node in descendants(cls.node.body):
        kind = type(node)
        if kind is cst.Call and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in REGISTERING_CALLS:  # type: ignore[attr-defined]
            return False
        if kind is cst.Assign and id(node) in kept_data:
            continue
        if init is not None and kind in (cst.Assign, cst.AnnAssign) and node.value is not None:  # type: ignore[attr-defined]
            targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
            if any(type(t) is cst.Attribute and dotted_name(t.value) == init.self_param for t in targets):
                if not _stateless_value(node.value, numbers, qualify):  # type: ignore[attr-defined]
                    return False
    return True


def _kept_module_data(init: FunctionInfo, used_as_object: set[str | None], qualify: Callable[[cst.BaseExpression], str | None]) -> set[int]:
    """`__init__`'s `self.x = cfg['variance']`: an entry of a module-level table (imported or global),
    read without a call and kept as an attribute the class never calls or asks anything of.
    `nn.Module.__setattr__` registers only parameters, modules and buffers; what the class only passes
    on or indexes is data to it (ssd.pytorch's MultiBoxLoss). Not an attribute read (`shared.weight`
    may be a layer's parameter, which the module would then register)."""
    me = init.self_param
    local = {p.name.value for p in init.params} | {
        target.target.value  # type: ignore[attr-defined]
        for node in descendants(init.node.body)
        if type(node) is cst.Assign
        for target in node.targets  # type: ignore[attr-defined]
        if type(target.target) is cst.Name
    }
    kept = set()
    for node in descendants(init.node.body):
        if type(node) is not cst.Assign or type(node.value) is not cst.Subscript:  # type: ignore[attr-defined]
            continue
        targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
        if not all(type(t) is cst.Attribute and dotted_name(t.value) == me and dotted_name(t) not in used_as_object for t in targets):
            continue
        root = node.value  # type: ignore[attr-defined]
        while type(root) in (cst.Subscript, cst.Attribute):
            root = root.value  # type: ignore[attr-defined]
        if type(root) is not cst.Name or root.value in local or any(type(part) is cst.Call for part in descendants(node.value)):  # type: ignore[attr-defined]
            continue
        if (qualify(root) or "").split(".", 1)[0] != "torch":
            kept.add(id(node))
    return kept


def _makes_a_tensor(value: cst.BaseExpression, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    """A torch factory or function of one tensor, however its result is then moved, converted or
    negated (`-torch.log(torch.tensor(t)).cuda()`, `torch.tensor(w).float().to(device)`): a plain
    tensor, which no `model.to()` moves and no parameter holds."""
    while True:
        if isinstance(value, cst.UnaryOperation):
            value = value.expression
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_METHODS and isinstance(value.func.value, (cst.Call, cst.UnaryOperation)):
            value = value.func.value
        else:
            break
    if not isinstance(value, cst.Call):
        return False
    qualified = qualify(value.func) or ""
    return factory_placement(qualified) is not None or function_results(qualified) == {ONE_TENSOR}


def _stateless_value(value: cst.BaseExpression, numbers: set[str], qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    """A literal, a number parameter, a plain tensor, or a torch.nn layer that owns nothing."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or is_none(value):
        return True
    if isinstance(value, cst.Name):
        return value.value in numbers or value.value in ("True", "False")
    if isinstance(value, cst.Attribute) and value.attr.value in ("shape", "ndim", "dtype"):
        return True  # a tensor's sizes or dtype (TSM's `self.shape = input_tensor.size()`): the same on every device
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in SHAPE_ONLY_METHODS:
        return True
    if isinstance(value, (cst.List, cst.Tuple)):
        # `self.variance = [0.1, 0.2]` (FaceBoxes' MultiBoxLoss): `Module.__setattr__` registers
        # no list, and one of plain data holds nothing `model.to()` would move.
        return all(isinstance(e, cst.Element) and _stateless_value(e.value, numbers, qualify) for e in value.elements)
    if isinstance(value, (cst.Call, cst.UnaryOperation)):
        if _makes_a_tensor(value, qualify):
            return True
        if not isinstance(value, cst.Call):
            return False
        root = value
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and isinstance(root.func.value, cst.Call):
            root = root.func.value  # `np.eye(n).reshape(...)`
        if isinstance(root, cst.Call) and (qualify(root.func) or "").startswith("numpy."):
            return True  # an array: data, no state (RIFE's `self.w = np.eye(...)`, made a tensor later)
        qualified = qualify(value.func) or ""
        return qualified.startswith("torch.nn.") and nn_owns_no_state(qualified.rsplit(".", 1)[-1], value)
    return False


def registered_tensor_names(cls: ClassInfo) -> frozenset[str]:
    """Names the class registers with `self.register_buffer("name", ...)` or `register_parameter`."""
    if cls.buffers is None:
        cls.buffers = _remembered(cls, "buffers", None, lambda: _registered_tensor_names(cls.node))
    return cls.buffers


def _registered_tensor_names(node: cst.ClassDef) -> frozenset[str]:
    names = set()
    for inner in descendants(node.body):
        if type(inner) is cst.Call and type(inner.func) is cst.Attribute and inner.func.attr.value in _TENSOR_REGISTRATIONS and inner.args:  # type: ignore[attr-defined]
            name = string_value(inner.args[0].value)  # type: ignore[attr-defined]
            if name is not None:
                names.add(name)
    return frozenset(names)


def _remembered(cls: ClassInfo, what: str, context: Hashable, compute: Callable[[], T]) -> T:
    """A fact read from the class's code alone (and `context`): computed once per version of the class."""
    return cls.facts.remember(cls.node, what, context, compute) if cls.facts is not None else compute()


def building_methods(cls: ClassInfo) -> frozenset[str]:
    """`__init__`, and the methods only `__init__` calls (kornia's `init_kron`): they run
    before the module can be moved."""
    if cls.building_methods is None:
        cls.building_methods = called_by_init(cls) - _called_elsewhere(cls) | {"__init__"}
    return cls.building_methods


def called_by_init(cls: ClassInfo) -> frozenset[str]:
    """`__init__` and the methods it calls on `self`."""
    init = cls.methods.get("__init__")
    return frozenset({"__init__", *(_self_calls(init) if init is not None else ())})


def _called_elsewhere(cls: ClassInfo) -> frozenset[str]:
    """Methods called on `self` by a method other than `__init__`."""
    return frozenset(name for key, method in cls.methods.items() if key != "__init__" for name in _self_calls(method))


def _self_calls(method: FunctionInfo) -> Iterator[str]:
    if method.self_param is None:
        return
    for node in descendants(method.node.body):
        if type(node) is cst.Call and type(node.func) is cst.Attribute and dotted_name(node.func.value) == method.self_param:  # type: ignore[attr-defined]
            yield node.func.attr.value  # type: ignore[attr-defined]


def parameter_attributes(cls: ClassInfo) -> frozenset[str]:
    """Attributes a method sets to an `nn.Parameter` (`self.w = nn.Parameter(...)`): assigning a
    plain tensor to one raises TypeError, so a move or conversion of it cannot be assigned back."""
    return frozenset(attr for attr, callee, _ in _built_attributes(cls) if callee in PARAMETER_CLASSES)


def _built_attributes(cls: ClassInfo) -> Iterator[tuple[str, str, cst.Call]]:
    """(attribute, qualified callee, call) for each `self.attr = callee(...)` in a method. Each
    method's calls are read in its own scope: a local name hides an import there."""
    for method in cls.methods.values():
        own = method.self_param
        if own is None:
            continue
        for node in descendants(method.node.body):
            if type(node) is not cst.Assign or type(node.value) is not cst.Call:  # type: ignore[attr-defined]
                continue
            callee = (cls.names.qualify(node.value.func, method.shadowed) if cls.names is not None else None) or ""  # type: ignore[attr-defined]
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target.target) is cst.Attribute and dotted_name(target.target.value) == own:
                    yield target.target.attr.value, callee, node.value  # type: ignore[attr-defined]


def registered_attributes(cls: ClassInfo) -> Mapping[str, bool]:
    """Attributes any method gives the module as registered state, whatever method sets them
    (`self.w = nn.Parameter(...)`, `self.fc = nn.Linear(...)` in a `_build()`): True for a tensor
    (parameter or buffer), False for a submodule. They move with the module."""
    if cls.registered is None:
        names = cls.names
        cls.registered = _remembered(cls, "registered", names.fingerprint if names is not None else None, lambda: _registered_attributes(cls))
    return cls.registered


def _registered_attributes(cls: ClassInfo) -> Mapping[str, bool]:
    found: dict[str, bool] = {name: True for name in registered_tensor_names(cls)}
    for attr, callee, call in _built_attributes(cls):
        leaf = callee.rsplit(".", 1)[-1]
        if callee in REGISTERED_STATE_CLASSES:
            found.setdefault(attr, True)
        elif callee.startswith("torch.nn.") and leaf[:1].isupper() and not nn_owns_no_state(leaf, call):
            found.setdefault(attr, False)
    return MappingProxyType(found)


def wrapped_parameters(cls: ClassInfo) -> tuple[int, ...]:
    """Positions (after `self`) of the `__init__` parameters a module that builds no state of its own
    keeps (`self.x = param`) and uses as an object (`self.x(...)`, `self.x.eval()`): a model it wraps
    (`Wrapper(model)`), whose tensors stay wherever they are. Empty for a class that creates anything
    in a method (`self.head = nn.Linear(...)`) or registers a tensor: that state is where it was built."""
    if cls.wrapped is None:
        cls.wrapped = ()
        init = cls.methods.get("__init__")
        own = init.self_param if init is not None else None
        if init is None or own is None or registered_tensor_names(cls):
            return cls.wrapped
        params = [p.name.value for p in init.params[1:]]
        kept: dict[str, int] = {}
        for method in cls.methods.values():
            for node in descendants(method.node.body):
                if type(node) is not cst.Assign:
                    continue
                for target in node.targets:  # type: ignore[attr-defined]
                    if type(target.target) is cst.Attribute and dotted_name(target.target.value) == method.self_param:
                        value = node.value  # type: ignore[attr-defined]
                        if type(value) is cst.Call:
                            return cls.wrapped  # it may build state of its own
                        if method is init and type(value) is cst.Name and value.value in params:
                            kept[target.target.attr.value] = params.index(value.value)
        used: set[int] = set()
        for method in cls.methods.values() if kept else ():
            for node in descendants(method.node.body):
                kind = type(node)
                held = node.func if kind is cst.Call else node.value if kind is cst.Attribute else None  # type: ignore[attr-defined]
                if type(held) is cst.Attribute and held.attr.value in kept and dotted_name(held.value) == method.self_param:
                    used.add(kept[held.attr.value])
        cls.wrapped = tuple(sorted(used))
    return cls.wrapped
