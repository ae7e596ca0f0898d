"""Words for device facts, shared by the rules' messages."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devlint.analysis.events import Operand
from devlint.analysis.facts import Kind, Place, PlaceKind
from devlint.snippet import snippet

LineOf = Callable[[cst.CSTNode], int]


def code(module: cst.Module, node: cst.CSTNode, limit: int = 40) -> str:
    return snippet(module.code_for_node(node), limit)


def where(operand: Operand, line_of: LineOf) -> str:
    """`on the CPU (created by torch.zeros without device=, line 9)`."""
    value = operand.value
    text = f"on {value.place.describe()}"
    if value.kind is Kind.SEQ:
        text = f"holds tensors on {value.place.describe()}"
    origin = value.origin
    if origin is not None:
        text += f" ({origin.what}, line {line_of(origin.node)})"
    return text


def cited(*operands: Operand) -> list[tuple[cst.CSTNode, str]]:
    """The origins `where` names by line, as a finding's related locations."""
    return [(op.value.origin.node, op.value.origin.what) for op in operands if op.value.origin is not None]


def device_expression(place: Place) -> str:
    """The expression to move a value to, for the suggested fix."""
    if place.kind is PlaceKind.DEVICE and place.name and not place.name.startswith("<"):
        return place.name
    if place.kind is PlaceKind.ACCEL and place.name:
        return f'"{place.name}"'
    return "device"
