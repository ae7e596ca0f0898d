"""What a function's own code shows its parameters to be.

A parameter annotated `torch.Tensor`, one the body uses through a member
that only tensors have (`x.unsqueeze(0)`, `x.device`, `x.detach()`), or one
it passes where torch takes nothing but a tensor (`torch.index_select(x, ...)`,
`F.conv2d(x, w)`, both read from torch's operator schemas) is a tensor: neither an `nn.Module`, a numpy array, a pandas object, a PIL image
nor a builtin container has those members (the lists come from the
libraries themselves, tools/gen_torch_api.py). A member that a class of the
file defines proves nothing: the parameter may be one of those objects.
"""

from __future__ import annotations

import libcst as cst

from devlint.analysis.program import FunctionInfo, Program
from devlint.analysis.torchapi import TENSOR_ONLY_MEMBERS, tensor_arguments
from devlint.analysis.torchapi.frameworks import OTHER_TENSOR_LIBRARIES
from devlint.names import ImportTable, imports_any
from devlint.tree import descendants

_TENSOR_TYPES = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor"})
_OPTIONAL = "typing.Optional"


def own_members(program: Program) -> frozenset[str]:
    """Names the file's own classes define: methods, class attributes, `self.x` attributes."""
    if program.own_members is None:
        names: set[str] = set()
        for info in program.by_key.values():
            names.update(info.methods)
            for node in descendants(info.node.body):
                if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":  # type: ignore[attr-defined]
                    names.add(node.attr.value)  # type: ignore[attr-defined]
                elif type(node) is cst.AssignTarget and type(node.target) is cst.Name:  # type: ignore[attr-defined]
                    names.add(node.target.value)  # type: ignore[attr-defined]
        program.own_members = frozenset(names)
    return program.own_members


def imports_other_tensors(names: ImportTable) -> bool:
    """The file imports a library whose tensors have torch's members too (TensorFlow)."""
    return imports_any(names.bindings.values(), OTHER_TENSOR_LIBRARIES)


def tensor_parameters(func: FunctionInfo, program: Program, names: ImportTable) -> frozenset[str]:
    """The parameters the function's annotations or its body show to be tensors (in a file that
    imports TensorFlow, the members they use show nothing: its tensors have them too)."""
    if func.tensor_params is None:
        params = {p.name.value for p in func.params}
        found = {p.name.value for p in func.params if p.annotation is not None and _tensor_annotation(p.annotation.annotation, names)}
        excluded = TENSOR_ONLY_MEMBERS if imports_other_tensors(names) else own_members(program)
        for node in descendants(func.node.body, enter=lambda n: type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if type(node) is cst.Attribute and type(node.value) is cst.Name:  # type: ignore[attr-defined]
                name = node.value.value  # type: ignore[attr-defined]
                member = node.attr.value  # type: ignore[attr-defined]
                if name in params and member in TENSOR_ONLY_MEMBERS and member not in excluded:
                    found.add(name)
            elif type(node) is cst.Call:
                found.update(_passed_as_tensors(node, params, names, excluded))  # type: ignore[arg-type]
        func.tensor_params = frozenset(found)
    return func.tensor_params


def _passed_as_tensors(call: cst.Call, params: set[str], names: ImportTable, excluded: frozenset[str]) -> set[str]:
    """Parameters passed where torch takes nothing but a tensor: `torch.index_select(x, 1, i)`,
    `F.conv2d(x, w)`, `t.gather(1, index)` (a tensor-only method, so `t` is a tensor too)."""
    if not any(type(arg.value) is cst.Name and arg.value.value in params for arg in call.args):  # type: ignore[attr-defined]
        return set()  # most calls pass no parameter as it came: no need to ask what they are
    qualified = names.qualify(call.func)
    if qualified is not None:
        positions, keywords = tensor_arguments(qualified)
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value in TENSOR_ONLY_MEMBERS and call.func.attr.value not in excluded:
        positions, keywords = tensor_arguments(call.func.attr.value)
    else:
        return set()
    found = set()
    index = 0
    for arg in call.args:
        if arg.star:
            continue
        at = arg.keyword.value in keywords if arg.keyword is not None else index in positions
        if arg.keyword is None:
            index += 1
        if at and isinstance(arg.value, cst.Name) and arg.value.value in params:
            found.add(arg.value.value)
    return found


def _tensor_annotation(annotation: cst.BaseExpression, names: ImportTable) -> bool:
    """`torch.Tensor`, `Tensor`, `Optional[Tensor]`, `Tensor | None`, `"torch.Tensor"`."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.value.strip("'\"")
        root = text.split(".", 1)[0]
        target = names.bindings.get(root)
        return (f"{target}{text[len(root):]}" if target else text) in _TENSOR_TYPES
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return _tensor_annotation(annotation.left, names) or _tensor_annotation(annotation.right, names)
    if isinstance(annotation, cst.Subscript) and names.qualify(annotation.value) == _OPTIONAL:
        inner = annotation.slice[0].slice if len(annotation.slice) == 1 else None
        return isinstance(inner, cst.Index) and _tensor_annotation(inner.value, names)
    return names.qualify(annotation) in _TENSOR_TYPES
