"""Could this file ever put a tensor on an accelerator?

A script that only ever names the CPU (ok: `device = torch.device("cpu")`)
cannot hit a cross-device bug, so rules about portability stay silent on it.
Any accelerator word, a `device` parameter (the caller may pass a GPU), or a
tensor's `.device` makes the answer yes.
"""

from __future__ import annotations

import libcst as cst

from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.torchnames import ACCELERATOR_TYPES
from devlint.names import ImportTable

_WORDS = ("cuda", "gpu", "mps", "xpu", "accelerat", "local_rank", "hpu", "npu", "tpu", "xla")


def _is_cpu_device(expr: cst.BaseExpression, names: ImportTable) -> bool:
    value = string_value(expr)
    if value is not None:
        return device_type_of_string(value) == "cpu"
    if isinstance(expr, cst.Call) and names.qualify(expr.func) == "torch.device" and expr.args:
        return _is_cpu_device(expr.args[0].value, names)
    return False


class _Finder(cst.CSTVisitor):
    def __init__(self, names: ImportTable) -> None:
        super().__init__()
        self.names = names
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found:
            return False
        return super().on_visit(node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = string_value(node)
        if value is not None and any(word in value.lower() for word in ACCELERATOR_TYPES):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if any(word in node.value.lower() for word in _WORDS):
            self.found = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.names.qualify(node) == "torch.device":
            return
        if node.attr.value == "device" or any(word in node.attr.value.lower() for word in _WORDS):
            self.found = True

    def visit_Param(self, node: cst.Param) -> None:
        if "device" in node.name.value.lower():
            self.found = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and "device" in target.target.value.lower():
                if not _is_cpu_device(node.value, self.names):
                    self.found = True


def may_use_accelerator(module: cst.Module, names: ImportTable) -> bool:
    finder = _Finder(names)
    module.visit(finder)
    return finder.found
