"""Could this file ever put a tensor on an accelerator?

A script that only ever names the CPU (ok: `device = torch.device("cpu")`)
cannot hit a cross-device bug, so rules about portability stay silent on it.
Any accelerator word, a `device` parameter (the caller may pass a GPU), or a
tensor's `.device` makes the answer yes.
"""

from __future__ import annotations

import re

import libcst as cst

from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.torchapi import ACCELERATOR_TYPES
from devlint.names import ImportTable
from devlint.tree import descendants

_WORDS = frozenset({"cuda", "gpu", "gpus", "mps", "xpu", "accelerator", "accel", "hpu", "npu", "tpu", "xla", "nccl", "rank"})
_PARTS = re.compile(r"[a-z]+")


def names_accelerator(identifier: str) -> bool:
    """Whole words only: `use_cuda`, `ngpu`... but not `input` (npu) or `output` (tpu)."""
    lowered = identifier.lower()
    return any(part in _WORDS or part in ("ngpu", "cudnn") for part in _PARTS.findall(lowered.replace("_", " ")))


def string_names_accelerator(value: str) -> bool:
    return device_type_of_string(value) in ACCELERATOR_TYPES or any(
        part in ACCELERATOR_TYPES for part in re.split(r"[^a-z]+", value.lower()) if part
    ) and len(value) < 40


def is_cpu_device(expr: cst.BaseExpression, names: ImportTable) -> bool:
    """`"cpu"`, `"cpu:0"` or `torch.device("cpu")` written out."""
    value = string_value(expr)
    if value is not None:
        return device_type_of_string(value) == "cpu"
    if isinstance(expr, cst.Call) and names.qualify(expr.func) == "torch.device" and expr.args:
        return is_cpu_device(expr.args[0].value, names)
    return False


class _Finder:
    def __init__(self, names: ImportTable) -> None:
        self.names = names
        self.found = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = string_value(node)
        if value is not None and string_names_accelerator(value):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if names_accelerator(node.value):
            self.found = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.names.qualify(node) == "torch.device":
            return
        if node.attr.value == "device" or names_accelerator(node.attr.value):
            self.found = True

    def visit_Param(self, node: cst.Param) -> None:
        if "device" in node.name.value.lower():
            self.found = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and "device" in target.target.value.lower():
                if not is_cpu_device(node.value, self.names):
                    self.found = True


def may_use_accelerator(module: cst.Module, names: ImportTable) -> bool:
    finder = _Finder(names)
    for node in descendants(module):
        method = getattr(finder, f"visit_{type(node).__name__}", None)
        if method is not None:
            method(node)
            if finder.found:
                return True
    return False
