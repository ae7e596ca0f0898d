"""DL402: submodules held in a plain list, tuple or dict."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.module_state import (
    CONTAINERS,
    EMPTY_DICT,
    EMPTY_LIST,
    MODULES_DICT,
    Assignment,
    AttrState,
    file_index,
)
from devlint.finding import Fix
from devlint.fixes import outer_span, replace_node, wrap_in_call
from devlint.rule import Rule

_UNSAFE_TITLE = "changes state_dict keys and what the optimizer trains"


class PlainContainer(Rule):
    """Modules registered in a plain `list`, `tuple` or `dict` attribute are
    invisible to `nn.Module`: `model.to(device)`, `model.parameters()`,
    `state_dict()` and `model.eval()` all skip them. They stay on the CPU
    while the rest of the model moves, and the optimizer never trains them.

    Reported for literals, comprehensions and lists filled with
    `.append(nn.Conv2d(...))` in `__init__`, and for lists of loss modules that
    own a weight buffer. Lists of modules that are also registered elsewhere
    (`[self.conv1, self.conv2]`, `nn.Sequential(*layers)`) are fine.
    """

    code = "DL402"
    name = "unregistered-submodules"
    summary = "submodules held in a plain `list` / `dict` / `tuple` instead of `nn.ModuleList` / `nn.ModuleDict`"
    fix = "unsafe"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        index = file_index(self.ctx)
        if not index.moved_by_to(node):
            return
        state = index.class_state(node)
        for attr, attr_state in state.attrs.items():
            if attr_state.registered or attr_state.used_to_register:
                continue
            for assignment in attr_state.assignments:
                if assignment.kind in CONTAINERS or (assignment.kind in (EMPTY_LIST, EMPTY_DICT) and attr_state.filled):
                    self._report(attr, attr_state, assignment)

    def _report(self, attr: str, attr_state: AttrState, assignment: Assignment) -> None:
        is_dict = assignment.kind in (MODULES_DICT, EMPTY_DICT)
        value = assignment.value
        shape = "dict" if is_dict else "tuple" if isinstance(value, cst.Tuple) else "list"
        container = "nn.ModuleDict" if is_dict else "nn.ModuleList"
        message = (
            f"`self.{attr}` holds submodules in a plain {shape}: `model.to(device)`, `parameters()` and "
            f"`state_dict()` do not see them, so they stay on the CPU and are not trained; use `{container}`"
        )
        self.report(assignment.node, message, self._fix(attr_state, assignment, is_dict))

    def _fix(self, attr_state: AttrState, assignment: Assignment, is_dict: bool) -> Fix | None:
        """`[...]` -> `nn.ModuleList([...])`, `{...}` -> `nn.ModuleDict({...})`.

        Unsafe: parameters gain new state_dict keys (old checkpoints no longer
        load strictly) and the optimizer starts training them.
        """
        prefix = _nn_prefix(self.ctx.names.bindings)
        if prefix is None:
            return None
        value = assignment.value
        title = f"Use {prefix}.{'ModuleDict' if is_dict else 'ModuleList'} ({_UNSAFE_TITLE})"
        if is_dict:
            callee = f"{prefix}.ModuleDict"
            if isinstance(value, cst.Dict) and not value.elements:
                if not all(_string_key(key) for key in attr_state.fill_keys) or not attr_state.fill_keys:
                    return None
                return replace_node(self.ctx, value, f"{callee}()", safe=False, title=title)
            keys: list[cst.BaseExpression | None]
            if isinstance(value, cst.Dict):
                keys = [getattr(element, "key", None) for element in value.elements]
            elif isinstance(value, cst.DictComp):
                keys = [value.key]
            else:
                return None
            if not all(key is not None and _string_key(key) for key in keys):
                return None
            return wrap_in_call(self.ctx, value, callee, safe=False, title=title)
        callee = f"{prefix}.ModuleList"
        if isinstance(value, cst.List) and not value.elements:
            return replace_node(self.ctx, value, f"{callee}()", safe=False, title=title)
        if isinstance(value, cst.Tuple):
            start, _ = outer_span(self.ctx, value.elements[0].value)
            _, end = outer_span(self.ctx, value.elements[-1].value)
            return replace_node(self.ctx, value, f"{callee}([{self.ctx.text[start:end]}])", safe=False, title=title)
        if isinstance(value, cst.Set):
            return None  # a set has no order: ModuleList would have to pick one
        return wrap_in_call(self.ctx, value, callee, safe=False, title=title)


def _nn_prefix(bindings: dict[str, str]) -> str | None:
    """How this file spells torch.nn (`nn`, `torch.nn`), without adding imports."""
    for local, target in sorted(bindings.items()):
        if target == "torch.nn":
            return local
    for local, target in sorted(bindings.items()):
        if target == "torch":
            return f"{local}.nn"
    return None


def _string_key(key: cst.BaseExpression) -> bool:
    """ModuleDict keys must be strings without dots."""
    if isinstance(key, (cst.SimpleString, cst.ConcatenatedString)):
        value = key.evaluated_value
        return isinstance(value, str) and bool(value) and "." not in value
    if isinstance(key, cst.FormattedString):
        return all("." not in part.value for part in key.parts if isinstance(part, cst.FormattedStringText))
    return isinstance(key, cst.Call) and isinstance(key.func, cst.Name) and key.func.value == "str"

