"""Which tensors a new tensor takes its size from (`torch.zeros(x.shape[0], n)` -> `x`)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devlint.analysis.torchapi import NUMBER_CONSTANTS
from devlint.names import dotted_name
from devlint.tree import descendants

Qualify = Callable[[cst.BaseExpression], "str | None"]


def size_sources(factory: cst.CSTNode, lengths: bool = True) -> list[str]:
    """Names whose `.shape`, `.size()` or (with `lengths`) `len()` the expression reads, in source order.

    A factory sized from `x` is meant to sit beside `x`: `device=x.device` is its fix where `x`
    is a tensor, which a length does not show (`torch.arange(len(captions))` of a list).
    """
    found: list[str] = []
    for node in descendants(factory):
        name = None
        if type(node) is cst.Attribute and node.attr.value in ("shape", "size"):
            name = dotted_name(node.value)
        elif lengths and type(node) is cst.Call and dotted_name(node.func) == "len" and node.args:
            name = dotted_name(node.args[0].value)
        if name is not None and name not in found:
            found.append(name)
    return found


_NUMBER_TYPES = frozenset({"int", "float", "bool", "complex"})
_NUMBER_LITERALS = (cst.Integer, cst.Float, cst.Imaginary)


def number_parameter(param: cst.Param) -> bool:
    """`scale: float`, `eps=1e-5`, `shift=-1`: a parameter declared or defaulted as a Python number."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if isinstance(annotation, cst.Name) and annotation.value in _NUMBER_TYPES:
        return True
    default = param.default
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    # `training=True`: a bool is a Python number too (`torch.tensor(training)` is 0-dim).
    return isinstance(default, _NUMBER_LITERALS) or isinstance(default, cst.Name) and default.value in ("True", "False")


def python_number(expr: cst.BaseExpression, func: cst.FunctionDef | None, qualify: Qualify | None = None) -> bool:
    """A number literal, a number constant of torch, math or numpy (`torch.pi`), or arithmetic
    on numbers and on `func`'s number parameters.

    `torch.tensor(1 - drop_prob)` holds one such number: a 0-dim tensor, which
    PyTorch lets meet tensors on any device.
    """
    if isinstance(expr, _NUMBER_LITERALS):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return python_number(expr.expression, func, qualify)
    if isinstance(expr, cst.BinaryOperation):
        return python_number(expr.left, func, qualify) and python_number(expr.right, func, qualify)
    if isinstance(expr, cst.Attribute) and qualify is not None:
        return qualify(expr) in NUMBER_CONSTANTS
    if isinstance(expr, cst.Name) and func is not None:
        params = func.params
        return any(p.name.value == expr.value and number_parameter(p) for p in (*params.posonly_params, *params.params, *params.kwonly_params))
    return False


# Reductions over every element: called with the tensor alone, they return a 0-dim tensor.
_FULL_REDUCTIONS = frozenset({"sum", "prod", "mean", "max", "min", "amax", "amin", "norm", "median", "std", "var", "all", "any"})


def full_reduction(call: cst.Call) -> bool:
    """`torch.prod(t)`, `t.sum()`: no dimension given, so one number comes back (as a 0-dim tensor)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _FULL_REDUCTIONS:
        return False
    if any(arg.keyword is not None or arg.star for arg in call.args):
        return False
    torch_function = dotted_name(func.value) == "torch"
    return len(call.args) == (1 if torch_function else 0)


def holds_nothing(call: cst.Call) -> bool:
    """`torch.Tensor()`, `torch.rand(0)`, `torch.tensor([])`: a placeholder with no elements."""
    args = call.args
    first = args[0].value if args and args[0].keyword is None and not args[0].star else None
    if first is None:
        return not args and dotted_name(call.func) == "torch.Tensor"
    if isinstance(first, cst.Integer):
        return first.value == "0" and (dotted_name(call.func) or "").startswith("torch.")
    return isinstance(first, cst.List) and not first.elements and dotted_name(call.func) in ("torch.tensor", "torch.as_tensor")
