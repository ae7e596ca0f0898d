"""What an `nn.Module` subclass keeps on `self` while it is constructed.

`model.to(device)` moves parameters, buffers and registered submodules, and
nothing else. This analysis walks each module class's `__init__` (and the
helper methods it calls on `self`, inlined where they are called) in order,
and records for each attribute what kind of value it holds: a plain tensor, a
Parameter, a registered submodule, or a plain list/tuple/dict of submodules.

Kinds are decided only from what the code shows (torch factories, torch ops,
tensor methods, local classes and functions whose results are known); anything
else is unknown, and unknown is never a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from devlint.analysis.class_facts import REGISTERING_CALLS, nn_owns_no_state
from devlint.analysis.torchapi import TENSOR as ONE_TENSOR
from devlint.analysis.torchapi import (
    BUFFER_CLASSES,
    PARAMETER_CLASSES,
    TENSOR_WRAPPERS,
    TENSOR_VALUED_ATTRIBUTES,
    factory_placement,
    function_results,
    is_torch_module_class,
    method_results,
)
from devlint.analysis.torchapi.frameworks import MODULE_BASES
from devlint.analysis.program import plain_base as _plain_base
from devlint.analysis.program import shows_module_members
from devlint.analysis.shapes import full_reduction, number_parameter, python_number
from devlint.names import dotted_name, is_none
from devlint.tree import descendants

if TYPE_CHECKING:
    from devlint.context import FileContext

# -- kinds of values ---------------------------------------------------------------
TENSOR = "tensor"  # a plain tensor: not registered when assigned to a module
PARAMETER = "parameter"  # nn.Parameter: registered by Module.__setattr__
BUFFER = "buffer"  # nn.Buffer or an attribute named in register_buffer
MODULE = "module"  # a submodule that owns parameters or buffers
STATELESS = "stateless"  # a submodule with no state (nn.ReLU(), nn.MSELoss())
MODULES_LIST = "modules[]"  # a plain list/tuple holding stateful submodules
MODULES_DICT = "modules{}"  # a plain dict holding stateful submodules
EMPTY_LIST = "empty[]"  # `[]`: may be filled later
EMPTY_DICT = "empty{}"  # `{}`: may be filled later
INSTANCE = "instance:"  # prefix: an instance of a class defined in this file

TENSORISH = frozenset({TENSOR, PARAMETER, BUFFER})
CONTAINERS = frozenset({MODULES_LIST, MODULES_DICT})

_NOT_MODULES = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})

# `.to()` & co. on a Parameter return a new plain tensor whenever they convert anything.
PARAMETER_CONVERSIONS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16"})
_CONTAINER_FILLS = frozenset({"append", "extend", "insert", "update", "setdefault"})
_REGISTERING_METHODS = frozenset({"add_module", "register_module", "register_parameter"})


def _function_body(func: cst.FunctionDef) -> tuple[cst.BaseStatement, ...]:
    return tuple(func.body.body) if isinstance(func.body, cst.IndentedBlock) else ()


def _self_name(func: cst.FunctionDef) -> str | None:
    for decorator in func.decorators:
        if isinstance(decorator.decorator, cst.Name) and decorator.decorator.value in {"staticmethod", "classmethod"}:
            return None
    params = (*func.params.posonly_params, *func.params.params)
    return params[0].name.value if params else None


def statements(body: tuple[cst.BaseStatement, ...] | list[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """Statements in source order, compound bodies included, nested scopes not entered."""
    for statement in body:
        yield statement
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, cst.BaseCompoundStatement):
            for block in _blocks(statement):
                yield from statements(block)


def _blocks(node: cst.BaseCompoundStatement) -> Iterator[list[cst.BaseStatement]]:
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock):
        yield list(body.body)
    for handler in getattr(node, "handlers", ()):
        if isinstance(handler.body, cst.IndentedBlock):
            yield list(handler.body.body)
    orelse = getattr(node, "orelse", None)
    if isinstance(orelse, cst.If):
        yield [orelse]
    elif orelse is not None and isinstance(getattr(orelse, "body", None), cst.IndentedBlock):
        yield list(orelse.body.body)
    final = getattr(node, "finalbody", None)
    if final is not None and isinstance(final.body, cst.IndentedBlock):
        yield list(final.body.body)
    for case in getattr(node, "cases", ()):
        if isinstance(case.body, cst.IndentedBlock):
            yield list(case.body.body)


# Calls inside these belong to another scope or to a nested body.
_NOT_ENTERED = frozenset({cst.Lambda, cst.IndentedBlock, cst.FunctionDef, cst.ClassDef})


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Calls inside one statement's own expressions (not in nested scopes or bodies), in source order."""
    if type(node) in _NOT_ENTERED:
        return []
    return [n for n in descendants(node, enter=lambda n: type(n) not in _NOT_ENTERED) if type(n) is cst.Call]  # type: ignore[misc]


# -- per-function evaluation -------------------------------------------------------
class Scope:
    """The kinds of a function's local names, learnt statement by statement."""

    def __init__(self, index: "FileIndex", func: cst.FunctionDef, owner: str | None, self_attrs: dict[str, str]) -> None:
        self.index = index
        self.func = func
        self.owner = owner
        self.self_name = _self_name(func) if owner else None
        self.self_attrs = self_attrs
        self.shadowed = index.ctx.local_bindings(func)
        self.locals: dict[str, str | None] = {}
        # Locals whose modules are registered some other way: passed to a registering
        # call (nn.Sequential(*layers), add_module, setattr) or assigned to self.
        self.registered_by_call: set[str] = set()
        self.assigned_to_self: set[str] = set()
        for param in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params):
            annotation = param.annotation
            if annotation is not None and self.qualify(annotation.annotation) in {"torch.Tensor", "torch.FloatTensor"}:
                self.locals[param.name.value] = TENSOR

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        return self.index.ctx.names.qualify(expr, self.shadowed)

    def is_self(self, expr: cst.BaseExpression) -> bool:
        return self.self_name is not None and isinstance(expr, cst.Name) and expr.value == self.self_name

    def self_attribute(self, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Attribute) and self.is_self(expr.value):
            return expr.attr.value
        return None

    def bind(self, name: str, kind: str | None) -> None:
        if name in self.locals and self.locals[name] != kind:
            kind = None  # two different kinds: unknown from here on
        self.locals[name] = kind

    def poison(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.locals[target.value] = None
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.poison(element.value)
        elif isinstance(target, cst.StarredElement):
            self.poison(target.value)

    # -- the kind of an expression --------------------------------------------------
    def kind(self, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Name):
            return self.locals.get(expr.value)
        if isinstance(expr, cst.Attribute):
            attr = self.self_attribute(expr)
            if attr is not None:
                return self.self_attrs.get(attr)
            if expr.attr.value in TENSOR_VALUED_ATTRIBUTES and self.kind(expr.value) in TENSORISH:
                return TENSOR
            return None
        if isinstance(expr, cst.Subscript):
            return TENSOR if self.kind(expr.value) in TENSORISH else None
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.kind(expr.left), self.kind(expr.right)
            if left in TENSORISH or right in TENSORISH:
                return TENSOR
            if isinstance(expr.operator, (cst.Add, cst.Multiply)) and MODULES_LIST in (left, right):
                return MODULES_LIST
            return None
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)) and self.kind(expr.expression) in TENSORISH:
                return TENSOR
            return None
        if isinstance(expr, cst.IfExp):
            kinds = {self.kind(branch) for branch in (expr.body, expr.orelse) if not is_none(branch)}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(expr, cst.Call):
            return self._call_kind(expr)
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            if not expr.elements:
                return EMPTY_LIST if isinstance(expr, cst.List) else None
            for element in expr.elements:
                if isinstance(element, cst.StarredElement):
                    if self.kind(element.value) == MODULES_LIST:
                        return MODULES_LIST
                elif self.holds_state(element.value):
                    return MODULES_LIST
            return None
        if isinstance(expr, cst.Dict):
            if not expr.elements:
                return EMPTY_DICT
            for element in expr.elements:
                if isinstance(element, cst.DictElement) and self.holds_state(element.value):
                    return MODULES_DICT
            return None
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return MODULES_LIST if self.holds_state(expr.elt) else None
        if isinstance(expr, cst.DictComp):
            return MODULES_DICT if self.holds_state(expr.value) else None
        return None

    def holds_state(self, element: cst.BaseExpression) -> bool:
        """An element of a plain container that `.to()` would miss: a fresh stateful module
        (not `self.conv1`, and not a local registered some other way)."""
        if isinstance(element, cst.Attribute) and self.self_attribute(element) is not None:
            return False
        if isinstance(element, cst.Name) and element.value in (self.registered_by_call | self.assigned_to_self):
            return False
        kind = self.kind(element)
        return self.index.is_stateful(kind) or kind in CONTAINERS

    def _call_kind(self, call: cst.Call) -> str | None:
        func = call.func
        qualified = self.qualify(func)
        if qualified is not None:
            return self._torch_call_kind(qualified, call)
        if isinstance(func, cst.Name):
            name = func.value
            if name in {"list", "tuple"} and len(call.args) == 1:
                inner = self.kind(call.args[0].value)
                return MODULES_LIST if inner == MODULES_LIST else None
            if name in self.shadowed:
                return None
            if name in self.index.classes:
                return INSTANCE + name
            function = self.index.functions.get(name)
            return self.index.return_kind(function, None) if function is not None else None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if self.is_self(func.value) and self.owner is not None:
            found = self.index.method(self.owner, method)
            return self.index.return_kind(found, self.owner) if found is not None else None
        receiver = self.kind(func.value)
        if receiver is None:
            return None
        if receiver.startswith(INSTANCE):
            owner = receiver[len(INSTANCE) :]
            found = self.index.method(owner, method)
            return self.index.return_kind(found, owner) if found is not None else None
        if receiver == PARAMETER:
            if method in PARAMETER_CONVERSIONS:
                return PARAMETER if isinstance(func.value, cst.Call) and keeps_float32(call, func.value) else TENSOR
            if method.endswith("_") and not method.startswith("__"):
                return PARAMETER  # in-place initialisers return the Parameter itself
        if receiver in TENSORISH:
            # A method that may return anything but one tensor (`size`, `split`, `max(dim)`) is left unknown.
            return None if method_results(method) - {ONE_TENSOR} or full_reduction(call) else TENSOR
        return None

    def _torch_call_kind(self, qualified: str, call: cst.Call) -> str | None:
        if qualified in PARAMETER_CLASSES:
            return PARAMETER
        if qualified in TENSOR_WRAPPERS:
            first = call.args[0] if call.args else None
            return self.kind(first.value) if first is not None and first.keyword is None and not first.star else None
        if qualified in BUFFER_CLASSES:
            return BUFFER
        parts = qualified.split(".")
        if parts[0] != "torch":
            return None
        if qualified in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor") and _holds_one_number(call, self.func, self.qualify) or full_reduction(call):
            return None  # 0-dim: PyTorch lets it meet tensors on any device, wherever it stays
        if factory_placement(qualified) is not None or function_results(qualified) == {ONE_TENSOR}:
            return TENSOR
        if len(parts) == 2 and parts[1].endswith("_like"):
            return TENSOR
        if qualified.startswith(("torch.nn.functional.", "torch.fft.", "torch.special.")) and parts[-1][:1].islower():
            return TENSOR
        is_nn_class = len(parts) == 3 and parts[1] == "nn" or qualified.startswith("torch.nn.modules.")
        name = parts[-1]
        if is_nn_class and name[:1].isupper() and name not in _NOT_MODULES:
            return _nn_module_kind(name, call)
        return None


def _holds_one_number(call: cst.Call, func: cst.FunctionDef, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    first = call.args[0] if call.args else None
    return first is not None and first.keyword is None and not first.star and python_number(first.value, func, qualify)


_FLOAT32 = frozenset({"torch.float32", "torch.float"})
# Factories whose tensor is float32 unless told otherwise (`torch.tensor([1, 2])` and `arange` are not).
_FLOAT_FACTORIES = frozenset(f"torch.{name}" for name in ("ones", "zeros", "empty", "randn", "rand", "eye", "linspace", "Tensor", "FloatTensor"))


def keeps_float32(conversion: cst.Call, parameter: cst.Call) -> bool:
    """`nn.Parameter(torch.ones(n)).float()` (gpt-neox's Mamba): converting float32 data
    to float32 returns the Parameter itself."""
    method = conversion.func.attr.value  # type: ignore[attr-defined]
    if method == "to":
        if len(conversion.args) != 1 or (conversion.args[0].keyword is not None and conversion.args[0].keyword.value != "dtype"):
            return False
        if dotted_name(conversion.args[0].value) not in _FLOAT32:
            return False
    elif method != "float":
        return False
    data = parameter.args[0].value if parameter.args else None
    if not isinstance(data, cst.Call) or dotted_name(data.func) not in _FLOAT_FACTORIES:
        return False
    dtypes = [arg.value for arg in data.args if arg.keyword is not None and arg.keyword.value == "dtype"]
    return all(dotted_name(dtype) in _FLOAT32 for dtype in dtypes)


def _nn_module_kind(name: str, call: cst.Call) -> str:
    return STATELESS if nn_owns_no_state(name, call) else MODULE


# -- the per-file index ----------------------------------------------------------------
class FileIndex:
    """Classes and functions of one file, and which of them are modules or return tensors."""

    def __init__(self, ctx: "FileContext") -> None:
        self.ctx = ctx
        self.classes: dict[str, cst.ClassDef] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        for statement in ctx.module.body:
            if isinstance(statement, cst.FunctionDef):
                self.functions.setdefault(statement.name.value, statement)
        self._collect_classes(ctx.module.body)
        self._module_memo: dict[str, bool] = {}
        self._return_memo: dict[cst.FunctionDef, str | None] = {}
        self._in_progress: set[cst.CSTNode] = set()
        self._class_memo: dict[cst.ClassDef, ClassState] = {}

    def release(self) -> None:
        """Drops the class states: their scopes point back here, a cycle holding the classes' trees."""
        self._class_memo.clear()

    def _collect_classes(self, body: tuple[cst.BaseStatement, ...] | list[cst.BaseStatement]) -> None:
        for statement in statements(body):
            if isinstance(statement, cst.ClassDef):
                self.classes.setdefault(statement.name.value, statement)
                self._collect_classes(list(statement.body.body) if isinstance(statement.body, cst.IndentedBlock) else [])
            elif isinstance(statement, cst.FunctionDef):
                self._collect_classes(_function_body(statement))

    def local_bases(self, name: str) -> list[str]:
        node = self.classes.get(name)
        if node is None:
            return []
        return [base.value.value for base in node.bases if isinstance(base.value, cst.Name) and base.value.value in self.classes]

    def is_module_class(self, node: cst.ClassDef) -> bool:
        name = node.name.value
        if self.classes.get(name) is not node:
            return self._bases_are_modules(node, set())
        return self.is_module(name)

    def moved_by_to(self, node: cst.ClassDef) -> bool:
        """An nn.Module whose attributes `model.to()` moves by the standard rules.

        A class that overrides `_apply` / `to` / `cuda` (YOLOv5's Detect moves its
        plain `stride` and `grid` tensors that way) handles its own state.
        """
        if not self.is_module_class(node):
            return False
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        names = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
        for base in node.bases:
            if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                names |= self.class_level_names(base.value.value)
        return not names & {"_apply", "to", "cuda"}

    def is_module(self, name: str) -> bool:
        if name not in self._module_memo:
            self._module_memo[name] = False  # cycles: not a module
            node = self.classes.get(name)
            self._module_memo[name] = node is not None and self._bases_are_modules(node, {name})
        return self._module_memo[name]

    def _bases_are_modules(self, node: cst.ClassDef, seen: set[str]) -> bool:
        foreign = False
        for base in node.bases:
            if base.keyword is not None:
                continue
            qualified = self.ctx.names.qualify(base.value)
            if qualified is not None:
                if qualified in MODULE_BASES or is_torch_module_class(qualified) or self.ctx.imported.is_module(qualified):
                    return True
                foreign = foreign or not _plain_base(qualified) and qualified not in self.ctx.imported.classes
            elif isinstance(base.value, cst.Name) and base.value.value in self.classes and base.value.value not in seen:
                if self.is_module(base.value.value):
                    return True
            else:
                foreign = foreign or not _plain_base(dotted_name(base.value) or "")
        # A base from elsewhere (the project's `BaseNetwork`): what the class does to `self` says.
        return foreign and shows_module_members(node, self.ctx.names)

    def is_stateful(self, kind: str | None) -> bool:
        if kind == MODULE:
            return True
        if kind is None or not kind.startswith(INSTANCE):
            return False
        name = kind[len(INSTANCE) :]
        if not self.is_module(name):
            return False
        # A local module owns state only where its own code registers some: no `__init__`
        # anywhere in its local bases, or one that keeps only numbers and plain tensors (an SSIM
        # loss's window), gives `model.to()` and `state_dict()` nothing to see.
        return self._owns_state(name, frozenset())

    def _owns_state(self, name: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return True  # a cycle of local bases: say nothing
        classes = (name, *self.local_bases(name))
        if not any(self.method(cls, "__init__") is not None for cls in classes):
            return False
        for cls in classes:
            node = self.classes.get(cls)
            if node is None:
                continue
            if any(self.ctx.qualify(base.value) not in (None, "torch.nn.Module") and dotted_name(base.value) not in self.classes for base in node.bases):
                return True  # a base from elsewhere may build anything
            for item in descendants(node.body):
                if type(item) is cst.Call and (dotted_name(item.func) or "").rsplit(".", 1)[-1] in REGISTERING_CALLS:  # type: ignore[attr-defined]
                    return True
            # What this class's own construction keeps on `self` (a later method's plain tensor
            # registers nothing; a base's `__init__` is its own turn of the loop).
            init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
            if init is None:
                continue
            numbers = {p.name.value for p in init.params.params if number_parameter(p)}
            for item in descendants(init.body):
                if type(item) is cst.Assign and any((dotted_name(t.target) or "").startswith("self.") for t in item.targets):  # type: ignore[attr-defined]
                    if self._may_hold_state(item.value, numbers, seen | {name}):  # type: ignore[attr-defined]
                        return True
        return False

    def _may_hold_state(self, value: cst.BaseExpression, numbers: set[str], seen: frozenset[str]) -> bool:
        """Could `self.x = value` register a parameter, buffer or stateful submodule?"""
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)) or is_none(value):
            return False
        if isinstance(value, cst.Name):
            return value.value not in numbers and value.value not in ("True", "False")
        if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
            parts = [value.left, value.right] if isinstance(value, cst.BinaryOperation) else [value.expression]
            return any(self._may_hold_state(part, numbers, seen) for part in parts)
        if isinstance(value, cst.Call):
            qualified = self.ctx.qualify(value.func) or ""
            if qualified.startswith("torch.nn."):
                return not nn_owns_no_state(qualified.rsplit(".", 1)[-1], value)
            if qualified.startswith("torch."):
                return False  # a torch function's tensor: plain, no state `model.to()` would move
            local = dotted_name(value.func)
            if local in self.classes:
                return self.is_module(local) and self._owns_state(local, seen)
            if local in self.functions:
                return self.return_kind(self.functions[local], None) != TENSOR  # `create_window(n)`: a plain tensor
            return True
        return True

    def method(self, class_name: str, name: str, seen: frozenset[str] = frozenset()) -> cst.FunctionDef | None:
        node = self.classes.get(class_name)
        if node is None or class_name in seen or not isinstance(node.body, cst.IndentedBlock):
            return None
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return statement
        for base in self.local_bases(class_name):
            found = self.method(base, name, seen | {class_name})
            if found is not None:
                return found
        return None

    def class_level_names(self, class_name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """Names a class body defines (methods, class attributes), local bases included."""
        node = self.classes.get(class_name)
        names: set[str] = set()
        if node is None or class_name in seen or not isinstance(node.body, cst.IndentedBlock):
            return names
        for statement in node.body.body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                names.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                names.add(target.target.value)
                    elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                        names.add(small.target.value)
        for base in self.local_bases(class_name):
            names |= self.class_level_names(base, seen | {class_name})
        return names

    def return_kind(self, func: cst.FunctionDef, owner: str | None) -> str | None:
        """The kind every `return` of a local function gives, if they agree."""
        if func in self._return_memo:
            return self._return_memo[func]
        if func in self._in_progress:
            return None
        self._in_progress.add(func)
        scope = Scope(self, func, owner, {})
        kinds: set[str | None] = set()
        for statement in statements(_function_body(func)):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Return):
                        kinds.add(scope.kind(small.value) if small.value is not None else None)
                    else:
                        learn_locals(scope, small)
            elif isinstance(statement, (cst.For, cst.With)):
                bind_header(scope, statement)
        self._in_progress.discard(func)
        result = kinds.pop() if len(kinds) == 1 else None
        self._return_memo[func] = result
        return result

    def class_state(self, node: cst.ClassDef) -> "ClassState":
        state = self._class_memo.get(node)
        if state is None:
            state = self._class_memo[node] = ClassState.of(self, node)
        return state


def learn_locals(scope: Scope, small: cst.BaseSmallStatement) -> None:
    """What one small statement teaches about local names."""
    if isinstance(small, cst.Assign):
        kind = scope.kind(small.value)
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                scope.bind(target.target.value, kind)
            elif isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                fill(scope, target.target.value.value, small.value, many=False)
            else:
                scope.poison(target.target)
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        if isinstance(small.target, cst.Name):
            scope.bind(small.target.value, scope.kind(small.value))
    elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
        name = small.target.value
        if scope.locals.get(name) in (EMPTY_LIST, MODULES_LIST):
            fill(scope, name, small.value, many=True)
        elif scope.locals.get(name) not in TENSORISH:
            scope.locals[name] = None
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _CONTAINER_FILLS:
            values = [arg.value for arg in call.args if arg.keyword is None]
            if values:
                fill(scope, func.value.value, values[-1], many=func.attr.value in {"extend", "update"})


def bind_header(scope: Scope, statement: cst.BaseCompoundStatement) -> None:
    if isinstance(statement, cst.For):
        scope.poison(statement.target)
    elif isinstance(statement, cst.With):
        for item in statement.items:
            if item.asname is not None:
                scope.poison(item.asname.name)


def fill(scope: Scope, name: str, value: cst.BaseExpression, *, many: bool) -> None:
    """`name.append(value)` and kin: an empty local container may turn out to hold modules."""
    current = scope.locals.get(name)
    if current not in (EMPTY_LIST, EMPTY_DICT, MODULES_LIST, MODULES_DICT):
        return
    holds = scope.kind(value) in CONTAINERS if many else scope.holds_state(value)
    if holds:
        scope.locals[name] = MODULES_DICT if current in (EMPTY_DICT, MODULES_DICT) else MODULES_LIST


# -- what a class's constructor does to `self` --------------------------------------
@dataclass
class Assignment:
    """`self.<attr> = value` (or `setattr(self, name, value)`) on the constructor path."""

    node: cst.CSTNode  # the Assign / AnnAssign, or the setattr Call
    statement: cst.BaseSmallStatement  # the small statement holding it
    attr: str | None  # None: a computed name (setattr)
    name_expr: cst.BaseExpression | None  # setattr's name argument
    value: cst.BaseExpression
    kind: str | None
    scope: Scope
    before_super: bool


@dataclass
class AttrState:
    assignments: list[Assignment] = field(default_factory=list)
    registered: bool = False  # a buffer, a Parameter or a registered submodule at some point
    filled: bool = False  # an empty container that received stateful modules
    fill_keys: list[cst.BaseExpression] = field(default_factory=list)
    used_to_register: bool = False  # passed to nn.Sequential(*self.x), add_module, ...
    parameter_elsewhere: bool = False  # named in register_parameter somewhere on the constructor path


@dataclass
class ClassState:
    name: str
    attrs: dict[str, AttrState] = field(default_factory=dict)
    dynamic: list[Assignment] = field(default_factory=list)  # setattr with a computed name
    constructor_methods: set[cst.FunctionDef] = field(default_factory=set)
    self_attrs: dict[str, str | None] = field(default_factory=dict)  # kinds when __init__ returns

    @classmethod
    def of(cls, index: FileIndex, node: cst.ClassDef) -> "ClassState":
        state = cls(node.name.value)
        init = None
        if isinstance(node.body, cst.IndentedBlock):
            init = next(
                (s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None
            )
        if init is not None:
            _ConstructorWalk(index, node, state).run(init)
        return state

    def attr(self, name: str) -> AttrState:
        return self.attrs.setdefault(name, AttrState())


class _ConstructorWalk:
    def __init__(self, index: FileIndex, node: cst.ClassDef, state: ClassState) -> None:
        self.index = index
        self.node = node
        self.owner = node.name.value
        self.state = state
        self.self_attrs = state.self_attrs
        self.super_seen = False
        self._own_methods = {
            s.name.value: s for s in (node.body.body if isinstance(node.body, cst.IndentedBlock) else ()) if isinstance(s, cst.FunctionDef)
        }

    def run(self, init: cst.FunctionDef) -> None:
        self._walk(init)

    def _walk(self, func: cst.FunctionDef) -> None:
        if func in self.state.constructor_methods:
            return
        self.state.constructor_methods.add(func)
        scope = Scope(self.index, func, self.owner, self.self_attrs)
        if scope.self_name is None:
            return
        scope.registered_by_call, scope.assigned_to_self = _registered_names(scope, func)
        for statement in statements(_function_body(func)):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self._small(scope, small)
            elif isinstance(statement, cst.BaseCompoundStatement):
                header = _header(statement)
                self._inline_helpers(scope, calls_in(header) if header is not None else [])
                bind_header(scope, statement)
                if isinstance(statement, cst.For):
                    self._registering_loop(scope, statement)

    def _inline_helpers(self, scope: Scope, calls: list[cst.Call]) -> None:
        for call in calls:
            func = call.func
            if not isinstance(func, cst.Attribute):
                continue
            if scope.is_self(func.value) and func.attr.value in self._own_methods and func.attr.value != "__init__":
                self._walk(self._own_methods[func.attr.value])
            elif func.attr.value == "__init__" and (
                (isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and func.value.func.value == "super")
                or any(isinstance(arg.value, cst.Name) and scope.is_self(arg.value) for arg in call.args[:1])
            ):
                self.super_seen = True

    def _small(self, scope: Scope, small: cst.BaseSmallStatement) -> None:
        calls = calls_in(small)
        self._inline_helpers(scope, calls)
        self._note_registrations(scope, calls)
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            kind = scope.kind(small.value)
            for target in targets:
                attr = scope.self_attribute(target)
                if attr is not None:
                    self._assign(scope, small, small, attr, None, small.value, kind)
                elif isinstance(target, cst.Subscript) and scope.self_attribute(target.value) is not None:
                    self._fill(scope, scope.self_attribute(target.value), small.value, many=False, key=_subscript_key(target))
            learn_locals(scope, small)
            return
        if isinstance(small, cst.AugAssign):
            attr = scope.self_attribute(small.target)
            if attr is not None and isinstance(small.operator, cst.AddAssign):
                self._fill(scope, attr, small.value, many=True)
            learn_locals(scope, small)
            return
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            func = call.func
            if isinstance(func, cst.Name) and func.value == "setattr" and len(call.args) >= 3 and scope.is_self(call.args[0].value):
                name_expr, value = call.args[1].value, call.args[2].value
                literal = name_expr.evaluated_value if isinstance(name_expr, cst.SimpleString) else None
                attr = literal if isinstance(literal, str) else None
                self._assign(scope, small, call, attr, name_expr, value, scope.kind(value))
                return
            if isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_FILLS:
                attr = scope.self_attribute(func.value)
                values = [arg.value for arg in call.args if arg.keyword is None]
                if attr is not None and values:
                    key = values[0] if func.attr.value == "setdefault" else None
                    self._fill(scope, attr, values[-1], many=func.attr.value in {"extend", "update"}, key=key)
                    return
        learn_locals(scope, small)

    def _assign(
        self,
        scope: Scope,
        statement: cst.BaseSmallStatement,
        node: cst.CSTNode,
        attr: str | None,
        name_expr: cst.BaseExpression | None,
        value: cst.BaseExpression,
        kind: str | None,
    ) -> None:
        record = Assignment(node, statement, attr, name_expr, value, kind, scope, not self.super_seen)
        if attr is None:
            self.state.dynamic.append(record)
            return
        state = self.state.attr(attr)
        state.assignments.append(record)
        if kind in (PARAMETER, BUFFER) or kind == STATELESS or self.index.is_stateful(kind) or (
            kind is not None and kind.startswith(INSTANCE) and self.index.is_module(kind[len(INSTANCE) :])
        ):
            state.registered = True
        elif kind is None and isinstance(value, cst.Call) and _registers(scope, value):
            state.registered = True  # a local module class's instance, say
        elif isinstance(value, cst.Name) and value.value in scope.registered_by_call:
            kind = record.kind = None  # the list also went into nn.Sequential(*layers): registered there
        if kind in (EMPTY_LIST, EMPTY_DICT):
            state.filled = False
            state.fill_keys = []
        self.self_attrs[attr] = kind

    def _fill(self, scope: Scope, attr: str | None, value: cst.BaseExpression, *, many: bool, key: cst.BaseExpression | None = None) -> None:
        if attr is None or attr not in self.state.attrs:
            return
        state = self.state.attrs[attr]
        current = self.self_attrs.get(attr)
        if current not in (EMPTY_LIST, EMPTY_DICT, MODULES_LIST, MODULES_DICT):
            return
        holds = scope.kind(value) in CONTAINERS if many else scope.holds_state(value)
        if holds:
            state.filled = True
            if key is not None:
                state.fill_keys.append(key)
            self.self_attrs[attr] = MODULES_DICT if current in (EMPTY_DICT, MODULES_DICT) else MODULES_LIST

    def _note_registrations(self, scope: Scope, calls: list[cst.Call]) -> None:
        """`self.register_buffer("x", ...)` registers x; `nn.Sequential(*self.layers)` registers
        the modules in self.layers (`calls`: those of one statement)."""
        for call in calls:
            func = call.func
            if isinstance(func, cst.Attribute) and scope.is_self(func.value) and func.attr.value == "register_buffer":
                if call.args and isinstance(call.args[0].value, cst.SimpleString):
                    name = call.args[0].value.evaluated_value
                    if isinstance(name, str):
                        self.state.attr(name).registered = True
                        self.self_attrs[name] = BUFFER
                continue
            if isinstance(func, cst.Attribute) and scope.is_self(func.value) and func.attr.value == "register_parameter":
                # Usually `register_parameter("bias", None)` in the other branch of an `if`:
                # the name is a parameter's there, so a buffer of that name cannot be added.
                if call.args and isinstance(call.args[0].value, cst.SimpleString):
                    name = call.args[0].value.evaluated_value
                    if isinstance(name, str):
                        self.state.attr(name).parameter_elsewhere = True
                continue
            if _registers(scope, call):
                for arg in call.args:
                    # `self.add_module(name, self.heads[-1])` registers what the list holds.
                    value = _held_container(arg.value)
                    attr = scope.self_attribute(value)
                    if attr is not None and attr in self.state.attrs:
                        self.state.attrs[attr].used_to_register = True

    def _registering_loop(self, scope: Scope, loop: cst.For) -> None:
        """`for i, m in enumerate(self.layers): self.add_module(str(i), m)` registers them."""
        if not any(_registers(scope, call) for statement in statements(list(loop.body.body)) for call in calls_in(statement)):
            return
        for call in calls_in(loop.iter):
            for arg in call.args:
                attr = scope.self_attribute(arg.value)
                if attr is not None and attr in self.state.attrs:
                    self.state.attrs[attr].used_to_register = True
        attr = scope.self_attribute(loop.iter)
        if attr is not None and attr in self.state.attrs:
            self.state.attrs[attr].used_to_register = True


def _header(statement: cst.BaseCompoundStatement) -> cst.CSTNode | None:
    if isinstance(statement, cst.For):
        return statement.iter
    if isinstance(statement, (cst.If, cst.While)):
        return statement.test
    if isinstance(statement, cst.With):
        return cst.Tuple([cst.Element(item.item) for item in statement.items])
    return None


def _held_container(value: cst.BaseExpression) -> cst.BaseExpression:
    """The container whose modules an argument passes: `self.heads[-1]`, monodepth2's
    `nn.ModuleList(list(self.convs.values()))`, `nn.Sequential(*self.blocks.values())`."""
    while True:
        if isinstance(value, cst.Subscript):
            value = value.value
        elif isinstance(value, cst.Call) and len(value.args) == 1 and not value.args[0].keyword and dotted_name(value.func) in ("list", "tuple"):
            value = value.args[0].value
        elif isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) and value.func.attr.value == "values":
            value = value.func.value
        else:
            return value


def _subscript_key(target: cst.Subscript) -> cst.BaseExpression | None:
    if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
        return target.slice[0].slice.value
    return None


def _registers(scope: Scope, call: cst.Call) -> bool:
    """A call that registers the modules passed to it: torch.nn containers and modules,
    local module classes, `self.add_module(...)`, `setattr(self, ...)`."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "setattr":
        return bool(call.args) and scope.is_self(call.args[0].value)
    if isinstance(func, cst.Attribute) and scope.is_self(func.value) and func.attr.value in _REGISTERING_METHODS:
        return True
    qualified = scope.qualify(func)
    if qualified is not None:
        return qualified.startswith("torch.nn.")
    if isinstance(func, cst.Name) and func.value in scope.index.classes:
        return scope.index.is_module(func.value)
    return False


def _registered_names(scope: Scope, func: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """Locals passed to a registering call, and locals assigned to `self.x`."""
    names: set[str] = set()
    assigned: set[str] = set()
    for statement in statements(_function_body(func)):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            for call in calls_in(small):
                if _registers(scope, call):
                    for arg in call.args:
                        if isinstance(arg.value, cst.Name):
                            names.add(arg.value.value)
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name):
                if any(scope.self_attribute(t.target) is not None for t in small.targets):
                    assigned.add(small.value.value)
    return names, assigned


def file_index(ctx: "FileContext") -> FileIndex:
    """One index per checked file, shared by the module-state rules."""
    return ctx.shared(FileIndex)
