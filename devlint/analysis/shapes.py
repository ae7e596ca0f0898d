"""Which tensors a new tensor takes its size from (`torch.zeros(x.shape[0], n)` -> `x`)."""

from __future__ import annotations

import libcst as cst

from devlint.names import dotted_name
from devlint.tree import descendants


def size_sources(factory: cst.CSTNode) -> list[str]:
    """Names whose `.shape`, `.size()` or `len()` the expression reads, in source order.

    A factory sized from `x` is meant to sit beside `x`: `device=x.device` is its fix.
    """
    found: list[str] = []
    for node in descendants(factory):
        name = None
        if type(node) is cst.Attribute and node.attr.value in ("shape", "size"):
            name = dotted_name(node.value)
        elif type(node) is cst.Call and dotted_name(node.func) == "len" and node.args:
            name = dotted_name(node.args[0].value)
        if name is not None and name not in found:
            found.append(name)
    return found
