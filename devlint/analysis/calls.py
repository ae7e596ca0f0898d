"""Calls: dispatch to torch's meaning (torch_calls.py), to the file's own functions and
classes (followed through summaries), to builtins, or to code the analysis cannot see."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis import torch_calls
from devlint.analysis.class_facts import owns_no_state, places_itself, wrapped_parameters
from devlint.analysis.call_arguments import arguments, flat, maybe_moved_module, only_arguments, wraps_what_it_is_given
from devlint.analysis.evaluation import Arguments, Evaluation
from devlint.analysis.events import Operand
from devlint.analysis.expressions import batch_value, iterate
from devlint.analysis.facts import CPU, INPUT_DEVICE, MODULE_DEVICE, Kind, PlaceKind, Value
from devlint.analysis.opaque import escape
from devlint.analysis.placement import combine
from devlint.analysis.program import ClassInfo, FunctionInfo
from devlint.analysis.torchapi import SCATTERING_WRAPPERS, scattering_base
from devlint.names import dotted_name, is_none

_BUILTINS = frozenset(
    {"iter", "enumerate", "tqdm", "list", "tuple", "sorted", "reversed", "next", "zip", "len", "range", "int", "float",
     "bool", "str", "print", "isinstance", "sum", "max", "min", "abs", "round"}
)  # fmt: skip


def eval_call(run: Evaluation, node: cst.Call) -> Value:
    func = node.func
    qualified = run.qualify(func)
    if qualified is not None:
        return torch_calls.call_qualified(run, node, qualified)
    if isinstance(func, cst.Attribute):
        return call_method(run, node, func)
    if isinstance(func, cst.Name):
        return call_name(run, node, func)
    return call_value(run, node, run.eval(func), func)


# -- the file's own code ------------------------------------------------------------------------
def call_name(run: Evaluation, node: cst.Call, func: cst.Name) -> Value:
    name = func.value
    known = run.lookup(name)
    program = run.solver.program
    if known is None or known.kind is Kind.UNKNOWN and known.place.kind is PlaceKind.UNKNOWN:
        if name in program.classes and (run.func is None or name not in run.func.shadowed):
            return construct_local(run, node, program.classes[name])
        target = _local_function(run, name)
        if target is not None:
            return call_local(run, node, target, arguments(run, node))
        if name in _BUILTINS:
            return call_builtin(run, node, name)
        if name == "getattr":
            found = _module_member(run, node)
            if found is not None:
                return found
        if name in run.solver.settings.move_helpers:
            return torch_calls.move_helper(run, node)
        if name in run.solver.settings.loaders:
            arguments(run, node)
            return Value(Kind.LOADER, elem=batch_value(run, name, node))
    if known is not None:
        return call_value(run, node, known, func)
    escape(run, node, arguments(run, node))
    return F.UNKNOWN


def _local_function(run: Evaluation, name: str) -> FunctionInfo | None:
    if run.func is not None and name in run.func.shadowed:
        for candidate in run.solver.program.functions:
            if candidate.parent is run.func and candidate.name == name:
                return candidate
        return None
    return run.solver.program.top_level.get(name)


def call_builtin(run: Evaluation, node: cst.Call, name: str) -> Value:
    args = arguments(run, node)
    first = args[0][1] if args else F.UNKNOWN
    if name in ("iter", "tqdm", "list", "tuple", "sorted", "reversed"):
        if first.kind is Kind.LOADER or first.batch is not None:
            return first
        if name in ("list", "tuple", "sorted", "reversed") and first.kind is Kind.SEQ:
            return Value(Kind.SEQ, elem=F.UNKNOWN) if first.mapping else first  # a mapping's keys
        if name in ("list", "tuple") and first.kind is Kind.TENSOR:
            return Value(Kind.SEQ, elem=first.at(first.place))
        return F.UNKNOWN
    if name == "enumerate":
        return Value(Kind.SEQ, elem=F.tuple_of([F.SCALAR, iterate(run, first, node)]))
    if name == "zip":
        return Value(Kind.SEQ, elem=F.tuple_of([iterate(run, value, expr) for expr, value in args]))  # type: ignore[arg-type]
    if name == "next":
        if first.kind is Kind.LOADER and first.elem is not None:
            return iterate(run, first, args[0][0])  # type: ignore[arg-type]
        return iterate(run, first, node) if first.kind is Kind.SEQ else F.UNKNOWN
    if name in ("sum", "max", "min", "abs", "round"):
        if first.kind is Kind.SEQ and (elem := F.iterated(first)) is not None and elem.kind is Kind.TENSOR:
            return elem
        return F.UNKNOWN if name != "round" else F.SCALAR
    return F.SCALAR if name in ("len", "int", "float", "bool") else F.UNKNOWN


def _module_member(run: Evaluation, node: cst.Call) -> Value | None:
    """`getattr(torch, "hann_window")`: the factory itself, named by a string the analysis knows
    (a constant, or a parameter's default that no call in the file overrides)."""
    if len(node.args) != 2 or any(arg.keyword is not None or arg.star for arg in node.args):
        return None
    module = run.qualify(node.args[0].value)
    if module is None:
        return None
    args = arguments(run, node)
    member = args[1][1].text
    qualified = f"{module}.{member}"
    if not member or torch_calls.factory_placement(qualified) is None:
        escape(run, node, args)
        return F.UNKNOWN
    return Value(function=qualified)


def construct_local(run: Evaluation, node: cst.Call, cls: ClassInfo) -> Value:
    args = arguments(run, node)
    init = cls.methods.get("__init__")
    if init is not None:
        _note_args(run, init, node, args, skip_self=True)
    scatterer = scattering_base(cls.bases)
    wrapped = [value for _, value in args if value.kind is Kind.MODULE]
    if scatterer and wrapped:
        return replace(wrapped[0], cls=scatterer)  # a DataParallel subclass: where the wrapped model is, as torch's
    if cls.is_module:
        if torch_calls.may_pass_device(run, node, args):
            return Value(Kind.MODULE, cls=cls.name)  # its `__init__` may build its layers there
        if any(maybe_moved_module(value) for _, value in args) or wraps_what_it_is_given(wrapped_parameters(cls), node, args):
            return Value(Kind.MODULE, cls=cls.name)  # it wraps a module that may already be moved
        if owns_no_state(cls, run.qualify):
            return Value(Kind.MODULE, F.NOWHERE, cls=cls.name, stateless=True)
        if places_itself(cls):
            return Value(Kind.MODULE, cls=cls.name)  # where its constructor moved it
        if run.default_place != CPU:
            return Value(Kind.MODULE, run.default_place, run.origin(node, f"built by `{cls.name}(...)`"), cls=cls.name)
        return Value(Kind.MODULE, CPU, run.origin(node, f"built by `{cls.name}(...)` on the CPU"), cls=cls.name)
    tensors = [value for _, value in args if value.kind is Kind.TENSOR or value.place.kind is PlaceKind.FOLLOWS]
    return Value(Kind.INSTANCE, cls=cls.name, elem=tensors[0] if len(tensors) == 1 else None)


def _note_args(run: Evaluation, target: FunctionInfo, node: cst.Call, args: Arguments, skip_self: bool) -> None:
    if target is run.func and not any(_placed(value) for _, value in args):
        # A function calling itself on pieces of its inputs the analysis cannot place (skorch's
        # `to_numpy(val)` for each value of a dict, Open3D-ML's `_convert_to_numpy(ary.numpy())`)
        # hands on what its callers passed: where that lives is theirs to say. Pieces it placed
        # itself (taming's collate recursing on `[torch.as_tensor(b) for b in batch]`) are a call.
        return
    facts = bound_arguments(target, node, args, skip_self)
    params = target.params[1:] if skip_self else target.params
    for param in params:
        facts.setdefault(param.name.value, _default_value(run, param))
    run.solver.note_call(target.key, facts)


def bound_arguments(target: FunctionInfo, node: cst.Call, args: Arguments, skip_self: bool) -> dict[str, Value]:
    """What one call hands each parameter, bound as Python binds it. Arguments written before a
    `*xs` fill the first positional parameters, explicit keywords their own; `**kw` can give only
    what nothing explicit gave (a second value is a TypeError), so an unpacking leaves those
    known and makes unknown only what it may fill. Parameters the call leaves to their defaults
    are absent."""
    signature = target.node.params
    positional = [p.name.value for p in (*signature.posonly_params, *signature.params)][1 if skip_self else 0 :]
    keywords = {p.name.value for p in (*signature.params, *signature.kwonly_params)}  # not positional-only ones
    star, kwargs = target.star_params
    facts: dict[str, Value] = {}
    extra: list[Value] = []
    filled = 0
    spread = unpacked = False  # a `*xs` (positions after it unknown), any unpacking
    for (_, value), arg in zip(args, node.args):
        if arg.star:
            spread = spread or arg.star == "*"
            unpacked = True
        elif arg.keyword is not None:
            name = arg.keyword.value
            if name in keywords or kwargs is None:
                facts[name] = value
            else:
                facts[kwargs] = F.join(facts[kwargs], value) if kwargs in facts else value
        elif not spread:
            if filled < len(positional):
                facts[positional[filled]] = value
            else:
                extra.append(value)
            filled += 1
    if star is not None and extra:
        joined = extra[0]
        for value in extra[1:]:
            joined = F.join(joined, value)
        facts[star] = joined
    if unpacked:
        for param in target.params[1 if skip_self else 0 :]:
            facts.setdefault(param.name.value, F.UNKNOWN)
        for name in (star, kwargs):
            if name is not None:
                facts[name] = F.UNKNOWN
    return facts


def _placed(value: Value) -> bool:
    """A value, or an element of it, whose place the analysis knows."""
    if value.place.kind not in (PlaceKind.UNKNOWN, PlaceKind.NOWHERE):
        return True
    return (value.elem is not None and _placed(value.elem)) or any(_placed(item) for item in value.items or ())


def _default_value(run: Evaluation, param: cst.Param) -> Value:
    if param.default is None:
        return F.UNKNOWN
    if is_none(param.default):
        return F.NONE
    with run.silent():
        return run.eval(param.default)


def call_local(
    run: Evaluation, node: cst.Call, target: FunctionInfo, args: Arguments, skip_self: bool = False, receiver: Value | None = None
) -> Value:
    _note_args(run, target, node, args, skip_self)
    result = run.solver.read("summaries", target.key, F.UNKNOWN)
    closure = target.parent is not None and target.parent is run.func
    return _substitute(result, target, node, args, skip_self, receiver, closure)


def _substitute(
    result: Value, target: FunctionInfo, node: cst.Call, args: Arguments, skip_self: bool, receiver: Value | None, closure: bool
) -> Value:
    """Map a summary's parameter-relative places onto this call's arguments."""
    params = [p.name.value for p in (target.params[1:] if skip_self else target.params)]
    if result.place.kind is PlaceKind.FOLLOWS and result.place.name in params:
        positional = [value for (_, value), arg in zip(args, node.args) if arg.keyword is None and not arg.star]
        bound = dict(zip(params, positional))
        bound.update({arg.keyword.value: value for (_, value), arg in zip(args, node.args) if arg.keyword is not None})
        actual = bound.get(result.place.name)
        if actual is not None and (actual.place.known or actual.place.kind is PlaceKind.FOLLOWS):
            return result.at(actual.place, batch=actual.batch)
        return replace(result, place=F.UNKNOWN_PLACE)
    if result.place.kind is PlaceKind.FOLLOWS and not closure:
        # An input of the callee's own, not one of this call's; a nested function's reads its
        # enclosing function's, which is the caller.
        return replace(result, place=F.UNKNOWN_PLACE)
    if result.place == MODULE_DEVICE:
        if receiver is not None and receiver.place.known:
            return result.at(receiver.place)
        return replace(result, place=F.UNKNOWN_PLACE) if receiver is not None else result
    return _defaulted_devices(result, target, node, params)


def _defaulted_devices(result: Value, target: FunctionInfo, node: cst.Call, params: list[str]) -> Value:
    """`make(n)` for `def make(n, device=None)`: what it creates "on `device`" is on the default device here."""
    if result.items is not None:
        items = tuple(_defaulted_devices(item, target, node, params) for item in result.items)
        return result if items == result.items else replace(result, items=items)
    name = result.place.name
    if result.place.kind is not PlaceKind.DEVICE or name not in params:
        return result
    position = params.index(name)
    for index, arg in enumerate(node.args):
        if arg.star or (arg.keyword.value == name if arg.keyword is not None else index == position):
            if not is_none(arg.value):
                return result
    param = next(p for p in target.params if p.name.value == name)
    if not is_none(param.default):
        return result
    return replace(result, place=F.UNKNOWN_PLACE)


def call_method(run: Evaluation, node: cst.Call, func: cst.Attribute) -> Value:
    method = func.attr.value
    attribute = dotted_name(func)
    held = run.lookup(attribute) if attribute is not None else None
    if held is not None and (held.function or held.kind in (Kind.MODULE, Kind.UNKNOWN) and (held.place.kind is not PlaceKind.UNKNOWN or held.stateless)):
        return call_value(run, node, held, func)  # self.model(x)
    static = _static_method(run, func)
    if static is not None:
        # `Model.post_process(boxes)`: a static method of the file's own class, called by name.
        return call_local(run, node, static, arguments(run, node))
    receiver = run.eval(func.value)
    own_self = dotted_name(func.value) == (run.func.self_param if run.func else None)
    # self.helper(...) and obj.method(...) for classes of this file.
    if receiver.kind is Kind.INSTANCE and receiver.cls in run.solver.program.classes:
        target = run.solver.program.classes[receiver.cls].methods.get(method)
        if target is not None:
            return call_local(run, node, target, arguments(run, node), skip_self=not target.is_static, receiver=None if own_self else receiver)
        if own_self:
            info = run.solver.program.classes[receiver.cls]
            if info.is_module and held is None:
                found = torch_calls.module_tensors(method, MODULE_DEVICE, None)
                if found.kind is not Kind.UNKNOWN:
                    return found  # `self.parameters()`: on the module's device
            # Not a method of the class: a callable it keeps (`self.network(x)`), a module most often.
            return call_value(run, node, held or F.UNKNOWN, func)
    if receiver.kind is Kind.MODULE and receiver.cls in run.solver.program.classes:
        target = run.solver.program.classes[receiver.cls].methods.get(method)
        if target is not None and method not in ("to", "cuda", "cpu"):
            result = call_local(run, node, target, arguments(run, node), skip_self=True, receiver=receiver)
            if method == "forward":
                return call_value(run, node, receiver, func.value)
            return result
    if receiver.kind is Kind.MODULE and method == "forward":
        return call_value(run, node, receiver, func.value)
    return torch_calls.call_on(run, node, func, receiver)


def _static_method(run: Evaluation, func: cst.Attribute) -> FunctionInfo | None:
    if type(func.value) is not cst.Name:
        return None
    name = func.value.value
    if name not in run.solver.program.classes or run.lookup(name) is not None:
        return None
    if run.func is not None and name in run.func.shadowed:
        return None
    target = run.solver.program.classes[name].methods.get(func.attr.value)
    return target if target is not None and target.is_static else None


def call_value(run: Evaluation, node: cst.Call, callee: Value, func: cst.BaseExpression) -> Value:
    """Calling a module (or anything we hold a value for)."""
    if callee.function:
        return torch_calls.call_qualified(run, node, callee.function)  # `win(n)` after `win = torch.hann_window`
    forward = _forward_of(run, callee)
    if forward is not None and not callee.place.known:
        # `self(x)` inside a module, or a module of this file whose placement is unknown.
        own_self = dotted_name(func) == (run.func.self_param if run.func else None)
        given = arguments(run, node)
        result = call_local(run, node, forward, given, skip_self=True, receiver=None if own_self else callee)
        if not own_self and callee.stateless and result.place == INPUT_DEVICE:
            # A module holding no state computes where its inputs are: "the device of the
            # module's inputs" is, at this call, the device of these inputs (LLMs-from-scratch's
            # `GELU()(torch.linspace(...))` is on the CPU).
            places = {value.place for _, value in flat(given) if value.kind is Kind.TENSOR}
            return replace(result, place=places.pop() if len(places) == 1 else F.UNKNOWN_PLACE, in_module="")
        return result
    args = arguments(run, node)
    if callee.kind is Kind.TENSOR_TYPE:
        return torch_calls.typed_tensor(run, node, callee.place)
    if callee.kind in (Kind.MODULE, Kind.UNKNOWN) and _scatters(run, callee):
        # `nn.DataParallel(model)(x)`: it copies its tensor arguments onto its devices itself, CPU
        # ones included, and gathers the outputs on the first (torch's DataParallel.forward).
        return Value(Kind.TENSOR, callee.place, callee.origin) if callee.place.known and not callee.stateless else F.UNKNOWN
    if callee.kind is Kind.MODULE or callee.kind is Kind.UNKNOWN and callee.place.known:
        module = Operand(func, callee, "module") if callee.place.known else None
        if callee.checked is not None:
            args = only_arguments(args, node, callee.checked)  # `nn.CTCLoss()(log_probs, targets, cpu_lengths, ...)`
        result = combine(run, node, flat(args), module=module)
        if callee.place.known:
            return Value(Kind.TENSOR, callee.place, callee.origin) if result.kind is not Kind.UNKNOWN or result.place.kind is PlaceKind.UNKNOWN else result
        if result.kind is Kind.TENSOR and result.place.known:
            return result
        return F.UNKNOWN
    if callee.kind in (Kind.UNKNOWN, Kind.INSTANCE):
        tensors = [v for _, v in args if v.kind in (Kind.TENSOR, Kind.UNKNOWN) and v.place.on_accelerator]
        if tensors and all(not (v.place == CPU and not v.scalar) for _, v in args):
            # An opaque callable fed device tensors returns device tensors when the code works.
            return Value(Kind.TENSOR, tensors[0].place, tensors[0].origin, weak=True)
    escape(run, node, args)
    return F.UNKNOWN


def _scatters(run: Evaluation, callee: Value) -> bool:
    """A DataParallel-like wrapper, or a class of the file deriving from one (PyTorch-Encoding's
    `DataParallelModel`, `DataParallelCriterion`)."""
    if callee.cls in SCATTERING_WRAPPERS:
        return True
    info = run.solver.program.classes.get(callee.cls)
    return info is not None and bool(scattering_base(info.bases))


def _forward_of(run: Evaluation, callee: Value) -> FunctionInfo | None:
    """What calling an object of the file's own classes runs: a Module's `forward`, any other
    object's `__call__` (Python calls `type(obj).__call__`)."""
    info = run.solver.program.classes.get(callee.cls) if callee.kind in (Kind.INSTANCE, Kind.MODULE) else None
    if info is None:
        return None
    return info.methods.get("forward" if info.is_module else "__call__")
