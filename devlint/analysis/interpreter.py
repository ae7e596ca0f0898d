"""The interpretation of one function body, statement by statement (see dataflow.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from dataclasses import replace

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.environment import Env, join_envs
from devlint.analysis.events import Conflict, DiscardedMove, NumpyOnDevice, Operand, SplitReturn
from devlint.analysis.facts import CPU, INPUT_DEVICE, MODULE_DEVICE, Kind, Origin, Place, PlaceKind, Value
from devlint.analysis.accelerator_use import is_cpu_device
from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.module_state import owns_no_state
from devlint.analysis.program import ClassInfo, FunctionInfo
from devlint.analysis.shapes import holds_nothing, number_parameter, size_sources
from devlint.analysis.naming import CONFIG_NAMES, MOVE_HELPER_WORDS, is_device_name, is_loader_name
from devlint.analysis.torchnames import (
    ACCELERATOR_TYPES,
    CPU_ARGUMENTS,
    CROSS_DEVICE_METHODS,
    DTYPES,
    FACTORIES,
    INPUT_FOLLOWING,
    LOADER_CLASSES,
    MEMORY_FORMATS,
    MODULE_WRAPPERS,
    NON_TENSOR_METHODS,
    NUMPY_CONVERTERS,
    PARAMETER_FREE_MODULES,
    REGISTERED_STATE_CLASSES,
    SCATTERING_WRAPPERS,
    SHAPE_ONLY_METHODS,
    TENSOR_ATTRIBUTES,
)
from devlint.names import dotted_name, is_none
from devlint.tree import child_nodes, descendants

if TYPE_CHECKING:
    from devlint.analysis.dataflow import Solver

_MAX_LOOP_DEPTH = 2  # deeper loops run once: keeps the cost linear


def function_body(node: cst.FunctionDef) -> list[cst.CSTNode]:
    return list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else [node.body]


_LEAVING = frozenset({cst.Raise, cst.Continue, cst.Break})
_NEW_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    return descendants(node, enter=lambda n: type(n) not in _NEW_SCOPES)


# eval_<Type> per node type, looked up once (None: no rule of its own, evaluate the parts).
_EVALUATORS: dict[type, object] = {}
_UNSET = object()


# Imported functions that only read a module they are given: it stays where it was.
_READ_ONLY_MODULES = ("logging.", "pprint.", "json.", "pickle.", "warnings.")
_READ_ONLY_CALLS = frozenset({"copy.copy", "copy.deepcopy", "builtins.print", "builtins.repr", "builtins.str"})

# Libraries whose batches have a `.to()` that moves them in place and returns them.
_IN_PLACE_BATCH_LIBRARIES = ("torch_geometric", "transformers")
_TENSOR_FIELDS = frozenset(
    {
        "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "names", "is_sparse", "is_leaf",
        "grad_fn", "itemsize", "nbytes", "is_quantized", "is_meta", "is_cpu",
    }
)


# unittest's context managers that expect the block to raise.
_RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def _bound_names(target: cst.BaseExpression) -> set[str]:
    """The names a loop target binds: `batch`, `(i, (x, y))`."""
    return {n.value for n in descendants(target) if type(n) is cst.Name}  # type: ignore[attr-defined]


class FunctionRun:
    """The interpretation of one function body (or of module top level)."""

    def __init__(self, solver: "Solver", func: FunctionInfo | None) -> None:
        self.solver = solver
        self.func = func
        self.env: Env = Env()
        self._with_attributes: set[str] = set()  # roots of dotted keys in env (`self`, `args`)
        self.returns: list[tuple[cst.CSTNode, Value]] = []
        self.default_place: Place = solver.read("default_place", "", CPU)
        self.loop_depth = 0
        self.cpu_places: frozenset[Place] = frozenset()  # devices a branch test has shown to be the CPU
        self.cls: ClassInfo | None = self._owning_class()
        self.key = func.key if func is not None else ""

    # -- set-up --------------------------------------------------------------
    def _owning_class(self) -> ClassInfo | None:
        func = self.func
        while func is not None and func.cls is None:
            func = func.parent
        return func.cls if func is not None else None

    @property
    def in_module_method(self) -> bool:
        return self.cls is not None and self.cls.is_module

    @property
    def _constructing(self) -> bool:
        """In `__init__`, or a method only `__init__` calls (kornia's `init_kron`)."""
        func, cls = self.func, self.cls
        if func is None or cls is None or not cls.is_module:
            return False
        if cls.building_methods is None:
            cls.building_methods = _called_by_init(cls) - _called_elsewhere(cls) | {"__init__"}
        return func.name in cls.building_methods

    def start(self) -> None:
        func = self.func
        assert func is not None
        # A function without parameters reads nothing from its callers.
        facts = self.solver.read("param_facts", func.key, {}) if func.params else {}
        called = "<calls>" in facts
        for index, param in enumerate(func.params):
            name = param.name.value
            if index == 0 and func.self_param == name:
                self.env[name] = Value(Kind.INSTANCE, cls=func.cls.name if func.cls else "")
                continue
            default = self._param_default(func, param)
            # forward()'s inputs are on the module's device wherever it is called from: a
            # caller's own mix is checked at the call, against the module's placement.
            is_forward = default.place == INPUT_DEVICE
            fact = facts.get(name) if called and not is_forward else None
            if fact is not None and fact.place == CPU and self._inputs_on_the_cpu(func, facts):
                # A caller that runs the model on the CPU hands it a CPU mask too: beside
                # inputs taken to be on the module's device, that would be a mix of our making.
                fact = None
            if fact is not None and (fact.kind is not Kind.UNKNOWN or default.kind is Kind.UNKNOWN):
                self.env[name] = fact
            else:
                self.env[name] = default
        if func.cls is not None and func.self_param is not None and func.name != "__init__":
            for attr, value in self.solver.read("self_attrs", func.cls.key, {}).items():
                self.env.setdefault(f"{func.self_param}.{attr}", value)

    def _inputs_on_the_cpu(self, func: FunctionInfo, facts: dict[str, Value]) -> bool:
        """forward()'s callers pass its first input on the CPU."""
        if not (self.in_module_method and func.name == "forward"):
            return False
        params = func.params[1:] if func.self_param is not None else func.params
        first = facts.get(params[0].name.value) if params else None
        return first is not None and first.place == CPU

    def _param_default(self, func: FunctionInfo, param: cst.Param) -> Value:
        name = param.name.value
        if is_none(param.default):
            return F.NONE
        if is_device_name(name, self.solver.settings):
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, name))
        if number_parameter(param):
            return F.SCALAR
        if is_loader_name(name, self.solver.settings):
            return Value(Kind.LOADER, elem=self._batch_value(name, param))
        cls = func.cls
        if cls is not None and cls.is_module and func.name == "forward":
            # Working code calls a module with inputs on the module's device.
            return Value(Kind.TENSOR, INPUT_DEVICE, in_module=cls.name)
        return Value(Kind.UNKNOWN, Place(PlaceKind.FOLLOWS, name))

    def finish(self) -> None:
        func = self.func
        assert func is not None
        value: Value | None = None
        for _, returned in self.returns:
            value = returned if value is None else F.join(value, returned)
        self.solver.note_return(func.key, value if value is not None else F.NONE)
        self.solver.note_env(func.key, self.env)
        if func.name == "__init__" and func.cls is not None and func.self_param is not None:
            prefix = f"{func.self_param}."
            attrs = {k[len(prefix):]: v for k, v in self.env.items() if k.startswith(prefix) and "." not in k[len(prefix):]}
            self.solver.note_attrs(func.cls.key, attrs)
        self._check_split_returns()

    def _check_split_returns(self) -> None:
        """A fresh CPU tensor sized from a parameter on one path, that parameter's device on another."""
        fresh = [(n, v) for n, v in ((n, _unwrap(v)) for n, v in self.returns) if v.place == CPU and v.origin and v.origin.factory]
        follows = [(n, v) for n, v in ((n, _unwrap(v)) for n, v in self.returns) if v.place.kind is PlaceKind.FOLLOWS]
        for node, cpu_value in fresh:
            for other_node, other in follows:
                param = other.place.name
                assert cpu_value.origin is not None
                if param in size_sources(cpu_value.origin.node):
                    self.solver.record(
                        self.key,
                        cpu_value.origin.node,
                        SplitReturn(Operand(cpu_value.origin.node, cpu_value), Operand(other_node, other), self.key),
                    )

    # -- environment ----------------------------------------------------------
    def lookup(self, name: str) -> Value | None:
        if name in self.env:
            return self.env[name]
        func = self.func
        while func is not None and func.parent is not None:
            outer = self.solver.read("final_envs", func.parent.key, {})
            if name in outer:
                return outer[name]
            func = func.parent
        if self.func is not None and name.split(".")[0] not in self.func.shadowed:
            return self.solver.read("globals", name, None)
        return None

    def bind(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [el.value for el in target.elements]
            parts = self._unpack(value, len(elements))
            for element, part in zip(elements, parts):
                self.bind(element.value if isinstance(element, cst.StarredElement) else element, part)
            return
        if isinstance(target, cst.StarredElement):
            self.bind(target.value, Value(Kind.SEQ, elem=value))
            return
        name = dotted_name(target)
        if name is None:
            return
        if value.kind is Kind.DEVICE and value.place.kind is PlaceKind.DEVICE and (not value.place.name or is_device_name(name.rsplit(".", 1)[-1], self.solver.settings)):
            # "the device" is called what the code calls it here: `self.device`, `device`.
            value = value.at(Place(PlaceKind.DEVICE, name))
        self.env[name] = value
        root, dot, _ = name.partition(".")
        if dot:
            self._with_attributes.add(root)
        elif name in self._with_attributes:
            # Rebinding `x` forgets what was known about `x.attr` (a scan only for names that have any).
            prefix = name + "."
            for key in [k for k in self.env if k.startswith(prefix)]:
                del self.env[key]

    def _unpack(self, value: Value, count: int) -> list[Value]:
        if value.items is not None:
            return list(value.items) if len(value.items) == count else [F.UNKNOWN] * count
        if value.kind is Kind.TENSOR:
            return [value] * count  # torch.meshgrid(...), torch.max(x, 0): tuples of tensors
        if value.batch is not None or value.kind is Kind.SEQ and value.elem is not None:
            element = replace(value, part=True) if value.batch is not None else value.elem
            assert element is not None
            return [element] * count
        return [F.UNKNOWN] * count

    # -- statements ------------------------------------------------------------
    def exec_block(self, body: Iterable[cst.CSTNode]) -> bool:
        """Run statements; False when the block always leaves (return/raise/continue)."""
        for stmt in body:
            if not self.exec_stmt(stmt):
                return False
        return True

    def exec_stmt(self, stmt: cst.CSTNode) -> bool:
        kind = type(stmt)
        if kind is cst.SimpleStatementLine:
            for small in stmt.body:  # type: ignore[attr-defined]
                if not self.exec_small(small):
                    return False
            return True
        if kind is cst.If:
            return self.exec_if(stmt)  # type: ignore[arg-type]
        if kind is cst.For or kind is cst.While:
            return self.exec_loop(stmt)  # type: ignore[arg-type]
        if kind is cst.With:
            return self.exec_with(stmt)  # type: ignore[arg-type]
        if kind is cst.Try or kind is cst.TryStar:
            return self.exec_try(stmt)  # type: ignore[arg-type]
        if kind is cst.FunctionDef:
            self.env[stmt.name.value] = F.UNKNOWN  # type: ignore[attr-defined]
            return True
        if kind is cst.Match:
            return self._branches([case.body for case in stmt.cases], fallthrough=True)  # type: ignore[attr-defined]
        return True

    def exec_small(self, small: cst.BaseSmallStatement) -> bool:
        if type(small) is cst.Assign:
            value = self.eval(small.value)
            for target in small.targets:
                self._assign(target.target, value, small.value)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:
                self._assign(small.target, self.eval(small.value), small.value)
        elif type(small) is cst.AugAssign:
            left = self.eval(small.target)
            right = self.eval(small.value)
            result = self.combine(small, [(small.target, left), (small.value, right)])
            if left.kind is Kind.TENSOR and left.place.known:
                result = left  # in place: `total += x` leaves `total` where it was
            self._assign(small.target, result, small)
        elif type(small) is cst.Expr:
            self.exec_expr_statement(small.value)
        elif type(small) is cst.Return:
            value = self.eval(small.value) if small.value is not None else F.NONE
            self.returns.append((small.value or small, value))
            return False
        elif type(small) in _LEAVING:
            if type(small) is cst.Raise and small.exc is not None:
                self.eval(small.exc)
            return False
        elif type(small) is cst.Assert:
            self.eval(small.test)
        elif type(small) is cst.Del:
            return True
        return True

    def _assign(self, target: cst.BaseExpression, value: Value, source: cst.CSTNode | None, unpacked: bool = False) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and not any(isinstance(el, cst.StarredElement) for el in target.elements):
            # Each target gets what a single assignment would give it: `self.stem, info = make_stem()`
            # registers a submodule exactly as `self.stem = make_stem()` does.
            elements = [el.value for el in target.elements]
            sources: list[cst.CSTNode | None] = [None] * len(elements)
            if isinstance(source, (cst.Tuple, cst.List)) and len(source.elements) == len(elements):
                if not any(isinstance(el, cst.StarredElement) for el in source.elements):
                    sources = [el.value for el in source.elements]
            for element, part, element_source in zip(elements, self._unpack(value, len(elements)), sources):
                self._assign(element, part, element_source, unpacked=True)
            return
        if isinstance(target, cst.Subscript):
            # `t[i] = v` writes into t; `batch[k] = v.to(device)` makes the container partly moved.
            container = self.eval(target.value)
            self.eval_subscript_indices(target)
            name = dotted_name(target.value)
            if name is not None and container.batch is not None:
                self.env[name] = replace(container, batch=None, place=F.UNKNOWN_PLACE)
            return
        if isinstance(target, cst.Attribute) and isinstance(target.value, (cst.Name, cst.Attribute)):
            base = dotted_name(target.value)
            if base is not None and self.func is not None and base == self.func.self_param:
                # A tensor unpacked into `self.a, self.b` is not one DL401 reports, so it
                # keeps its own place; a submodule is registered either way.
                if self.in_module_method and (not unpacked or value.kind in (Kind.MODULE, Kind.INSTANCE)):
                    self._check_buffer_replaced(target, value)
                    value = self._module_attribute(value, source)
                elif self.cls is not None and self.cls.maybe_module and (value.kind is Kind.MODULE or self._registers_state(source)):
                    # A plain tensor attribute stays where it is made, module or not.
                    value = replace(value, place=F.UNKNOWN_PLACE, origin=None)
        self.bind(target, value)

    def _check_buffer_replaced(self, target: cst.Attribute, value: Value) -> None:
        """`self.drop_masks = self.drop(torch.ones(n, h))` outside construction (speechbrain's
        RNNs): the buffer, moved with the module, is replaced by a fresh CPU tensor."""
        func, cls = self.func, self.cls
        if func is None or cls is None or value.kind is not Kind.TENSOR or value.place != CPU or value.scalar or value.weak:
            return
        if value.origin is None or not value.origin.factory or self._constructing:
            return
        factory = value.origin.node
        if not isinstance(factory, cst.Call) or self.qualify(factory.func) in _DATA_FACTORIES or holds_nothing(factory):
            return  # built from data that may be on the device; an empty placeholder (`torch.rand(0)`)
        if target.attr.value in _buffers_of(cls) and func.name not in _called_by_init(cls):
            self.conflict(target, Operand(target, value), Operand(target, Value(Kind.TENSOR, MODULE_DEVICE)))

    def _registers_state(self, source: cst.CSTNode | None) -> bool:
        """`nn.Parameter(...)`, also under a condition (`nn.Parameter(t) if learn else None`)."""
        if source is None:
            return False
        return any(type(n) is cst.Call and self.qualify(n.func) in REGISTERED_STATE_CLASSES for n in descendants(source))  # type: ignore[attr-defined]

    def _module_attribute(self, value: Value, source: cst.CSTNode | None) -> Value:
        """What `self.x = value` means inside a Module: submodules and parameters follow the module."""
        if isinstance(source, cst.Call) and self.qualify(source.func) in REGISTERED_STATE_CLASSES:
            return Value(Kind.TENSOR, MODULE_DEVICE)
        if value.stateless:
            return value
        if value.kind is Kind.MODULE or value.kind is Kind.INSTANCE and value.cls in self.solver.program.classes and self.solver.program.classes[value.cls].is_module:
            return replace(value, kind=Kind.MODULE, place=MODULE_DEVICE, origin=None)
        # A plain tensor attribute, or modules in a plain list, are DL401's and DL402's
        # findings. Elsewhere they are taken as registered, as the fix will make them:
        # one root cause, one finding.
        if value.kind is Kind.TENSOR and value.place.kind is not PlaceKind.UNKNOWN:
            return Value(Kind.TENSOR, MODULE_DEVICE)
        if value.kind is Kind.SEQ:
            elem = value.elem
            if elem is not None and (elem.kind is Kind.MODULE or elem.kind is Kind.TENSOR and elem.place.known):
                return Value(Kind.SEQ, elem=replace(elem, place=MODULE_DEVICE, origin=None, parts=()))
            return F.UNKNOWN
        return value

    def exec_expr_statement(self, expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            receiver_expr = expr.func.value
            if method in ("to", "cuda", "cpu"):
                receiver = self.eval(receiver_expr)
                moved = self.eval(expr)
                name = dotted_name(receiver_expr)
                # What a loader yields may be a structure whose `.to()` moves it in place
                # (transformers' BatchEncoding, PyG's Batch); its tensors are not.
                whole = receiver.batch is not None and not receiver.part
                if receiver.kind is Kind.TENSOR or receiver.batch is not None and not (whole and name is not None and self._structured(name, expr)):
                    self.solver.record(self.key, expr, DiscardedMove(expr, receiver_expr, method))
                    if name is not None:
                        # One root cause, one finding: later uses are not reported again.
                        self.env[name] = replace(receiver, place=F.UNKNOWN_PLACE, batch=None)
                elif name is not None:
                    # Modules move in place; so may anything we cannot tell from a module.
                    self.env[name] = moved if receiver.kind is not Kind.UNKNOWN or moved.place.known else receiver
                    if self.func is not None and method != "cpu" and moved.place.on_accelerator and "." not in name:
                        if name not in self.func.shadowed:
                            self.solver.note_global_move(name, moved.place, expr, self.func.name)
                return
            if method in ("append", "extend", "add", "insert") and expr.args:
                name = dotted_name(receiver_expr)
                if name is not None:
                    container = self.lookup(name) or F.UNKNOWN
                    item = self.eval(expr.args[-1].value)
                    if method == "extend":
                        item = item.elem if item.kind is Kind.SEQ and item.elem is not None else F.UNKNOWN
                    if container.kind is Kind.SEQ:
                        elem = item if container.elem is None or container.elem.kind is Kind.NONE else F.join(container.elem, item)
                        parts = F.merge_parts(container.parts, item.parts if item.kind is Kind.SEQ else (item,))
                        self.env[name] = Value(Kind.SEQ, elem=elem, parts=parts)
                    return
            if method == "register_buffer" and self.func is not None and dotted_name(receiver_expr) == self.func.self_param:
                for arg in expr.args:
                    self.eval(arg.value)
                if expr.args and (attr := string_value(expr.args[0].value)) is not None:
                    self.env[f"{self.func.self_param}.{attr}"] = Value(Kind.TENSOR, MODULE_DEVICE)
                return
        if isinstance(expr, cst.Call) and self.qualify(expr.func) == "torch.set_default_device" and expr.args:
            place = self.device_place(expr.args[0].value)
            self.default_place = place
            if self.func is None:
                self.solver.note_default_place(place)
        self.eval(expr)

    def _structured(self, name: str, statement: cst.CSTNode) -> bool:
        """Is the batch `name` a structure rather than a tensor?

        So it is where the loop that draws it uses it as a mapping (`**batch`,
        `batch["labels"]`) or reads a field no tensor has (`batch.edge_index`), and in a
        file that works with PyG or transformers, whose batches move in place.
        """
        if any(q.startswith(_IN_PLACE_BATCH_LIBRARIES) for q in self.solver.names.bindings.values()):
            return True
        scope: cst.CSTNode = self.func.node if self.func is not None else self.solver.analysis.module
        for node in descendants(scope):
            # The innermost loop that binds the name and holds the statement (pre-order: the last found).
            if type(node) is cst.For and name in _bound_names(node.target) and any(n is statement for n in descendants(node.body)):  # type: ignore[attr-defined]
                scope = node
        called = set()
        for node in descendants(scope):
            kind = type(node)
            if kind is cst.Call:
                called.add(id(node.func))  # type: ignore[attr-defined]
            elif kind is cst.Arg and node.star == "**" and dotted_name(node.value) == name:  # type: ignore[attr-defined]
                return True
            elif kind is cst.Subscript and len(node.slice) == 1 and dotted_name(node.value) == name:  # type: ignore[attr-defined]
                index = node.slice[0].slice  # type: ignore[attr-defined]
                if isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.ConcatenatedString)):
                    return True
            elif kind is cst.Attribute and id(node) not in called and dotted_name(node.value) == name:  # type: ignore[attr-defined]
                if node.attr.value not in TENSOR_ATTRIBUTES and node.attr.value not in _TENSOR_FIELDS:  # type: ignore[attr-defined]
                    return True
        return False

    def exec_if(self, stmt: cst.If) -> bool:
        self.eval(stmt.test)
        orelse = stmt.orelse
        cpu_in_body, cpu_in_else = self._cpu_tested(stmt.test)
        if isinstance(orelse, cst.If) or cpu_in_body or cpu_in_else:
            before = self.env
            outcomes = [self._run_branch(stmt.body, before, cpu_in_body)]
            if isinstance(orelse, cst.If):
                outcomes.append(self._run_branch_stmt(orelse, before, cpu_in_else))
            elif orelse is not None:
                outcomes.append(self._run_branch(orelse.body, before, cpu_in_else))
            else:
                outcomes.append((before.fork(), True))
            return self._merge(outcomes, before)
        branches: list[cst.BaseSuite] = [stmt.body]
        if orelse is not None:
            branches.append(orelse.body)
        return self._branches(branches, fallthrough=orelse is None)

    def _cpu_tested(self, test: cst.BaseExpression) -> tuple[Place | None, Place | None]:
        """`if device.type == "cpu":` (or `device == CPU`, `str(device) != "cpu"`): the device
        that is the CPU in the body, or in the else branch."""
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return None, None
        operator = test.comparisons[0].operator
        equal = isinstance(operator, (cst.Equal, cst.Is))
        if not (equal or isinstance(operator, (cst.NotEqual, cst.IsNot))):
            return None, None
        sides = (test.left, test.comparisons[0].comparator)
        for side, other in (sides, sides[::-1]):
            if self._names_the_cpu(other) and (place := self._device_asked(side)) is not None:
                return (place, None) if equal else (None, place)
        return None, None

    def _names_the_cpu(self, expr: cst.BaseExpression) -> bool:
        """Written out (`"cpu"`, `torch.device("cpu")`) or held (`_CPU_DEVICE`)."""
        if is_cpu_device(expr, self.solver.names):
            return True
        known = self.lookup(dotted_name(expr) or "") if not isinstance(expr, cst.Call) else None
        return known is not None and known.kind is Kind.DEVICE and known.place == CPU

    def _device_asked(self, expr: cst.BaseExpression) -> Place | None:
        """The run-time device `device`, `device.type` or `str(device)` reads."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "type":
            expr = expr.value
        elif isinstance(expr, cst.Call) and dotted_name(expr.func) == "str" and len(expr.args) == 1:
            expr = expr.args[0].value
        name = dotted_name(expr)
        known = self.lookup(name) if name is not None else None
        if known is None or known.kind is not Kind.DEVICE or known.place.kind is not PlaceKind.DEVICE:
            return None
        return known.place

    def _run_branch(self, suite: cst.BaseSuite, start: "Env", cpu: Place | None = None) -> tuple["Env", bool]:
        self.env = start.fork()
        with self._on_the_cpu(cpu):
            falls = self.exec_block(_suite(suite))
        return self.env, falls

    def _run_branch_stmt(self, stmt: cst.CSTNode, start: "Env", cpu: Place | None = None) -> tuple["Env", bool]:
        self.env = start.fork()
        with self._on_the_cpu(cpu):
            falls = self.exec_stmt(stmt)
        return self.env, falls

    @contextmanager
    def _on_the_cpu(self, place: Place | None) -> Iterator[None]:
        """While a branch runs that only runs where `place` is the CPU."""
        saved = self.cpu_places
        if place is not None:
            self.cpu_places = saved | {place}
        try:
            yield
        finally:
            self.cpu_places = saved

    def _branches(self, suites: list[cst.BaseSuite], fallthrough: bool) -> bool:
        start = self.env
        outcomes = [self._run_branch(suite, start) for suite in suites]
        if fallthrough:
            outcomes.append((start.fork(), True))
        return self._merge(outcomes, start)

    def _merge(self, outcomes: list[tuple["Env", bool]], start: "Env") -> bool:
        live = [env for env, falls in outcomes if falls]
        if not live:
            self.env = outcomes[0][0] if outcomes else self.env
            start.written |= self.env.written
            self.env.written = start.written
            return False
        self.env = join_envs(live, start)
        return True

    def exec_loop(self, stmt: cst.For | cst.While) -> bool:
        if isinstance(stmt, cst.For):
            element = self.iterate(self.eval(stmt.iter), stmt.iter)
        else:
            self.eval(stmt.test)
            element = F.UNKNOWN
        self.loop_depth += 1
        entry = self.env
        self.env = entry.fork()
        recording = self.solver.recording
        if self.loop_depth <= _MAX_LOOP_DEPTH:
            # One silent pass to learn what the loop carries around, then the real one.
            self.solver.recording = False
            if isinstance(stmt, cst.For):
                self.bind(stmt.target, element)
            self.exec_block(_suite(stmt.body))
            self.env = join_envs([entry.fork(), self.env], entry)
            self.solver.recording = recording
        if isinstance(stmt, cst.For):
            self.bind(stmt.target, element)
        self.exec_block(_suite(stmt.body))
        self.env = join_envs([entry.fork(), self.env], entry)
        self.loop_depth -= 1
        if stmt.orelse is not None:
            self.exec_block(_suite(stmt.orelse.body))
        return True

    def exec_with(self, stmt: cst.With) -> bool:
        saved_default = self.default_place
        for item in stmt.items:
            value = self.eval(item.item)
            if isinstance(item.item, cst.Call) and self.qualify(item.item.func) == "torch.device":
                self.default_place = value.place
            if item.asname is not None:
                self.bind(item.asname.name, value)  # type: ignore[arg-type]
        # `with pytest.raises(RuntimeError): model(x_cpu)`: a test that the mix fails.
        recording = self.solver.recording
        if any(self._expects_failure(item.item) for item in stmt.items):
            self.solver.recording = False
        try:
            falls = self.exec_block(_suite(stmt.body))
        finally:
            self.solver.recording = recording
        self.default_place = saved_default
        return falls

    def _expects_failure(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call):
            return False
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _RAISES_METHODS:
            return True
        return self.qualify(expr.func) == "pytest.raises"

    def exec_try(self, stmt: cst.Try) -> bool:
        start = self.env
        body_env, body_falls = self._run_branch(stmt.body, start)
        if stmt.orelse is not None and body_falls:
            self.env = body_env
            body_falls = self.exec_block(_suite(stmt.orelse.body))
            body_env = self.env
        outcomes = [(body_env, body_falls)]
        for handler in stmt.handlers:
            outcomes.append(self._run_branch(handler.body, start))
        falls = self._merge(outcomes, start)
        if stmt.finalbody is not None:
            falls = self.exec_block(_suite(stmt.finalbody.body)) and falls
        return falls

    # -- expressions -------------------------------------------------------------
    def qualify(self, node: cst.BaseExpression) -> str | None:
        shadowed = self.func.shadowed if self.func is not None else ()
        return self.solver.names.qualify(node, shadowed)

    def origin(self, node: cst.CSTNode, what: str, factory: bool = False) -> Origin:
        return Origin(node, what, factory)

    def eval(self, expr: cst.BaseExpression | None) -> Value:
        if expr is None:
            return F.UNKNOWN
        kind = type(expr)
        method = _EVALUATORS.get(kind, _UNSET)
        if method is _UNSET:
            method = _EVALUATORS[kind] = getattr(FunctionRun, f"eval_{kind.__name__}", None)
        if method is None:
            for child in child_nodes(expr):
                if isinstance(child, cst.BaseExpression):
                    self.eval(child)
            return F.UNKNOWN
        return method(self, expr)  # type: ignore[operator]

    def eval_Name(self, node: cst.Name) -> Value:
        if node.value in ("None",):
            return F.NONE
        if node.value in ("True", "False"):
            return F.SCALAR
        known = self.lookup(node.value)
        if known is not None:
            return known
        if self.qualify(node) is not None:
            return F.UNKNOWN
        if is_device_name(node.value, self.solver.settings):
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, node.value))
        return F.UNKNOWN

    def eval_Integer(self, node: cst.BaseExpression) -> Value:
        return F.SCALAR

    eval_Float = eval_Integer
    eval_Imaginary = eval_Integer

    def eval_SimpleString(self, node: cst.SimpleString) -> Value:
        value = string_value(node)
        kind = device_type_of_string(value) if value is not None else None
        if kind == "cpu":
            return Value(Kind.DEVICE, CPU)
        if kind in ACCELERATOR_TYPES:
            return Value(Kind.DEVICE, Place(PlaceKind.ACCEL, value or ""))
        return F.UNKNOWN

    def eval_FormattedString(self, node: cst.FormattedString) -> Value:
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.eval(part.expression)
        text = "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText)).split(":", 1)[0]
        if text in ACCELERATOR_TYPES:
            return Value(Kind.DEVICE, Place(PlaceKind.ACCEL, text))
        return F.UNKNOWN

    def eval_Attribute(self, node: cst.Attribute) -> Value:
        name = dotted_name(node)
        if name is not None:
            known = self.lookup(name)
            if known is not None:
                return known
            qualified = self.qualify(node)
            if qualified is not None:
                return Value(Kind.SCALAR) if qualified in DTYPES or qualified in MEMORY_FORMATS else F.UNKNOWN
        base = self.eval(node.value)
        attr = node.attr.value
        if attr == "device":
            holder = base.place.kind is PlaceKind.FOLLOWS and base.kind is not Kind.TENSOR and base.place.name in CONFIG_NAMES
            if base.place.known or base.place.kind is PlaceKind.FOLLOWS and not holder:
                return Value(Kind.DEVICE, base.place)
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, name or "device"))
        if attr in ("shape", "ndim") and base.kind in (Kind.TENSOR, Kind.UNKNOWN):
            # Sizes: `x.shape[0]` and `x.ndim` are numbers, `x.shape` a tuple of them
            # (`torch.tensor(x.shape)` is a 1-D tensor, not a 0-dim one).
            return F.SCALAR if attr == "ndim" else Value(Kind.SEQ, elem=F.SCALAR)
        if base.batch is not None:
            return replace(base, part=True)  # batch.input_ids: still part of the unmoved batch
        if base.weak and base.place.on_accelerator and attr not in ("shape", "dtype", "ndim"):
            return Value(Kind.UNKNOWN, base.place, base.origin, weak=True)  # outputs.logits
        if base.kind is Kind.TENSOR:
            if attr in TENSOR_ATTRIBUTES:
                return base.at(base.place)
            return F.SCALAR if attr in ("shape", "ndim", "dtype", "is_cuda", "requires_grad") else F.UNKNOWN
        if base.kind in (Kind.MODULE, Kind.INSTANCE) and base.place.on_accelerator and base.kind is Kind.MODULE:
            # A parameter or submodule of a module lives where the module lives.
            return Value(Kind.UNKNOWN, base.place, base.origin)
        if base.kind is Kind.INSTANCE and base.cls:
            return self._instance_attribute(base, attr, node)
        if is_device_name(attr, self.solver.settings):
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, name or attr))
        if base.kind is not Kind.INSTANCE and (kept := self.solver.read("dataset_attrs", attr, None)) is not None:
            return kept
        return F.UNKNOWN

    def _instance_attribute(self, base: Value, attr: str, node: cst.Attribute) -> Value:
        info = self.solver.program.classes.get(base.cls)
        if info is not None and not info.is_module and not _PLACING_METHODS.isdisjoint(info.methods):
            return F.UNKNOWN  # diffusers' DDIMSolver: a class with its own `.to()` places what it holds
        attrs = self.solver.read("self_attrs", info.key, {}) if info is not None else {}
        if attr in attrs:
            value = attrs[attr]
            if value.place == MODULE_DEVICE:
                return value.at(base.place) if base.place.known else replace(value, place=F.UNKNOWN_PLACE)
            return value
        return F.UNKNOWN

    def eval_Subscript(self, node: cst.Subscript) -> Value:
        base = self.eval(node.value)
        indices = self.eval_subscript_indices(node)
        if base.batch is not None:
            return replace(base, part=True)  # batch[0], batch["input_ids"]
        if base.items is not None:
            index = node.slice[0].slice if len(node.slice) == 1 else None
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                position = int(index.value.value)
                if 0 <= position < len(base.items):
                    return base.items[position]
            return F.UNKNOWN
        if base.kind is Kind.SEQ:
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                return base  # `x.shape[1:]`, `outputs[:-1]`: still a sequence
            return base.elem or F.UNKNOWN
        if base.kind is Kind.SCALAR:
            # `x.size()[0]` is a number, `x.size()[1:]` a tuple of them.
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                return Value(Kind.SEQ, elem=F.SCALAR)
            return F.SCALAR
        if base.kind is Kind.TENSOR or base.kind is Kind.UNKNOWN and base.place.known:
            # A device tensor may be indexed with CPU indices; a CPU tensor not with device ones.
            if base.place == CPU:
                for index_expr, index in indices:
                    if index.kind is Kind.TENSOR and index.place.on_accelerator and not index.weak:
                        self.conflict(node, Operand(node.value, base), Operand(index_expr, index))
            return base.at(base.place, scalar=False)
        if base.kind is Kind.UNKNOWN and base.place.kind is PlaceKind.FOLLOWS:
            return base
        return F.UNKNOWN

    def eval_subscript_indices(self, node: cst.Subscript) -> list[tuple[cst.CSTNode, Value]]:
        out = []
        for element in node.slice:
            inner = element.slice
            if isinstance(inner, cst.Index):
                out.append((inner.value, self.eval(inner.value)))
            elif isinstance(inner, cst.Slice):
                for part in (inner.lower, inner.upper, inner.step):
                    if part is not None:
                        self.eval(part)
        return out

    def eval_BinaryOperation(self, node: cst.BinaryOperation) -> Value:
        left = self.eval(node.left)
        right = self.eval(node.right)
        if isinstance(node.operator, cst.Modulo) and isinstance(node.left, (cst.SimpleString, cst.FormattedString)):
            return F.UNKNOWN
        if left.kind is Kind.SEQ and right.kind is Kind.SEQ and isinstance(node.operator, cst.Add):
            elem = F.join(left.elem or F.NONE, right.elem or F.NONE)
            return Value(Kind.SEQ, elem=elem)
        return self.combine(node, [(node.left, left), (node.right, right)])

    def eval_UnaryOperation(self, node: cst.UnaryOperation) -> Value:
        value = self.eval(node.expression)
        if isinstance(node.operator, cst.Not):
            return F.SCALAR
        return value

    def eval_Comparison(self, node: cst.Comparison) -> Value:
        operands = [(node.left, self.eval(node.left))]
        tensor_compare = True
        for target in node.comparisons:
            operands.append((target.comparator, self.eval(target.comparator)))
            if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                tensor_compare = False
        if not tensor_compare or any(v.kind is Kind.DEVICE for _, v in operands):
            return F.SCALAR
        return self.combine(node, operands)

    def eval_BooleanOperation(self, node: cst.BooleanOperation) -> Value:
        left = self.eval(node.left)
        right = self.eval(node.right)
        if isinstance(node.operator, cst.Or) and left.kind is Kind.NONE:
            return right
        return F.join(left, right) if left.kind is right.kind else F.UNKNOWN

    def eval_IfExp(self, node: cst.IfExp) -> Value:
        self.eval(node.test)
        body = self.eval(node.body)
        orelse = self.eval(node.orelse)
        if body.kind is Kind.DEVICE and orelse.kind is Kind.DEVICE and body.place != orelse.place:
            # The device-selection idiom: "the device", named by what it is assigned to.
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE))
        return F.join(body, orelse)

    def eval_NamedExpr(self, node: cst.NamedExpr) -> Value:
        value = self.eval(node.value)
        self.bind(node.target, value)
        return value

    def eval_Await(self, node: cst.Await) -> Value:
        self.eval(node.expression)
        return F.UNKNOWN

    def eval_Lambda(self, node: cst.Lambda) -> Value:
        return F.UNKNOWN

    def _elements(self, elements: Iterable[cst.BaseElement]) -> list[tuple[cst.CSTNode, Value]]:
        out = []
        for element in elements:
            value = self.eval(element.value)
            if isinstance(element, cst.StarredElement):
                if value.kind is Kind.SEQ and value.parts:
                    value = replace(value.elem or F.UNKNOWN, parts=value.parts, kind=Kind.SEQ)
                else:
                    value = value.elem if value.kind is Kind.SEQ and value.elem is not None else F.UNKNOWN
            out.append((element.value, value))
        return out

    def eval_Tuple(self, node: cst.Tuple) -> Value:
        items = self._elements(node.elements)
        return F.tuple_of([v for _, v in items])

    def eval_List(self, node: cst.List | cst.Set) -> Value:
        items = self._elements(node.elements)
        elem: Value = F.NONE
        parts: list[Value] = []
        for expr, value in items:
            elem = F.join(elem, value) if elem.kind is not Kind.NONE else value
            parts.extend(value.parts if value.kind is Kind.SEQ else (value,))
        return Value(Kind.SEQ, elem=elem, parts=F.merge_parts(tuple(parts)))

    eval_Set = eval_List

    def eval_Dict(self, node: cst.Dict) -> Value:
        elem: Value = F.NONE
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self.eval(element.key)
                value = self.eval(element.value)
            else:
                value = self.eval(element.value)
                value = value.elem if value.kind is Kind.SEQ and value.elem is not None else F.UNKNOWN
            elem = F.join(elem, value) if elem.kind is not Kind.NONE else value
        return Value(Kind.SEQ, elem=elem)

    def _comprehension(self, node: cst.BaseComp | cst.DictComp, result: cst.BaseExpression) -> Value:
        saved = self.env
        self.env = saved.fork()
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            element = self.iterate(self.eval(comp.iter), comp.iter)
            self.bind(comp.target, element)
            for condition in comp.ifs:
                self.eval(condition.test)
            comp = comp.inner_for_in
        value = self.eval(result)
        self.env = saved
        return Value(Kind.SEQ, elem=value)

    def eval_ListComp(self, node: cst.ListComp) -> Value:
        return self._comprehension(node, node.elt)

    eval_SetComp = eval_ListComp
    eval_GeneratorExp = eval_ListComp

    def eval_DictComp(self, node: cst.DictComp) -> Value:
        return self._comprehension(node, node.value)

    # -- iteration ------------------------------------------------------------------
    def iterate(self, iterable: Value, expr: cst.BaseExpression) -> Value:
        """The value one iteration step yields."""
        if iterable.kind is Kind.LOADER and iterable.elem is not None:
            # Name the batch after the loader as the loop wrote it: `for x, y in train_loader`.
            return self._batch_value(_loader_name(self.solver.analysis.module, expr), expr)
        if iterable.items is not None:
            items = iterable.items
            joined = items[0] if items else F.UNKNOWN
            for item in items[1:]:
                joined = F.join(joined, item)
            return joined
        if iterable.kind is Kind.SEQ:
            return iterable.elem or F.UNKNOWN
        if iterable.batch is not None:
            return replace(iterable, part=True)
        if iterable.kind is Kind.TENSOR and iterable.place.known:
            return iterable.at(iterable.place)
        return F.UNKNOWN

    def _batch_value(self, loader_text: str, node: cst.CSTNode) -> Value:
        origin = self.origin(node, f"comes from `{loader_text}`")
        return Value(Kind.UNKNOWN, CPU, origin, batch=origin)

    # -- combining tensors -----------------------------------------------------------
    def conflict(self, node: cst.CSTNode, cpu: Operand, device: Operand) -> None:
        if cpu.value.place != CPU:
            cpu, device = device, cpu
        event = Conflict(node, cpu, device, self.key, self.in_module_method)
        origin = cpu.value.origin
        if origin is None:
            self.solver.record(self.key, node, event)
        elif cpu.value.batch is not None:
            # Each unmoved batch variable once: `x` and `y` are two fixes.
            self.solver.record(f"batch:{self.solver.analysis.module.code_for_node(cpu.expr)}", origin.node, event)
        else:
            # One CPU tensor meeting the device in five places is one bug, reported once.
            self.solver.record("origin", origin.node, event)

    def combine(self, node: cst.CSTNode, operands: list[tuple[cst.CSTNode, Value]], module: Operand | None = None) -> Value:
        """The place of an operation's result; records a conflict when CPU meets a device."""
        tensors = [Operand(expr, value) for expr, value in operands if _placed(value)]
        if module is not None and module.value.place.known:
            tensors.insert(0, module)
        cpu = [op for op in tensors if op.value.place == CPU and not op.value.scalar and not op.value.weak]
        device = [op for op in tensors if op.value.place.on_accelerator and not op.value.weak and op.value.place not in self.cpu_places]
        if cpu and device:
            if self._constructing and all(op.value.place == MODULE_DEVICE for op in device):
                # A module's own state sits where `__init__` built it until someone moves the
                # module: a dummy pass (`self.conv(torch.zeros(1, 3, 32, 32))`) runs on the CPU.
                return F.UNKNOWN
            batch = [op for op in cpu if op.value.batch is not None]
            self.conflict(node, (batch or cpu)[0], device[0])
            return F.UNKNOWN
        places = [op.value for op in tensors if not op.value.scalar] or [op.value for op in tensors]
        if not places:
            follows = [v for _, v in operands if v.place.kind is PlaceKind.FOLLOWS]
            if follows and all(v.kind in (Kind.UNKNOWN, Kind.SCALAR, Kind.TENSOR) for _, v in operands):
                kind = Kind.TENSOR if any(v.kind is Kind.TENSOR for v in follows) else Kind.UNKNOWN
                return Value(kind, follows[0].place)
            if any(v.kind is Kind.TENSOR for _, v in operands):
                return Value(Kind.TENSOR)
            if operands and all(v.kind is Kind.SCALAR for _, v in operands):
                return F.SCALAR
            return F.UNKNOWN
        result = places[0]
        for value in places[1:]:
            result = F.join(result, value)
        strong = [v for v in places if not v.weak]
        return Value(
            Kind.TENSOR,
            result.place,
            result.origin,
            weak=not strong,
            scalar=all(v.scalar for v in places),
            in_module=result.in_module,
        )

    # -- calls ------------------------------------------------------------------------
    def device_place(self, expr: cst.BaseExpression) -> Place:
        value = self.eval(expr)
        if value.kind is Kind.DEVICE:
            return value.place
        if value.kind is Kind.TENSOR and value.place.known:
            return value.place
        text = dotted_name(expr)
        if text is not None and is_device_name(text.rsplit(".", 1)[-1], self.solver.settings):
            return Place(PlaceKind.DEVICE, text)
        return F.UNKNOWN_PLACE

    def eval_Call(self, node: cst.Call) -> Value:
        func = node.func
        qualified = self.qualify(func)
        if qualified is not None:
            return self.call_qualified(node, qualified)
        if isinstance(func, cst.Attribute):
            return self.call_method(node, func)
        if isinstance(func, cst.Name):
            return self.call_name(node, func)
        callee = self.eval(func)
        return self.call_value(node, callee, func)

    def _args(self, node: cst.Call) -> list[tuple[cst.CSTNode, Value]]:
        out = []
        for arg in node.args:
            value = self.eval(arg.value)
            if arg.star == "*":
                value = value.elem if value.kind is Kind.SEQ and value.elem is not None else (value if value.batch else F.UNKNOWN)
            elif arg.star == "**":
                value = value.elem if value.kind is Kind.SEQ and value.elem is not None else (value if value.batch else F.UNKNOWN)
            out.append((arg.value, value))
        return out

    def _flat(self, args: list[tuple[cst.CSTNode, Value]]) -> list[tuple[cst.CSTNode, Value]]:
        """Tensors inside list/tuple arguments count as operands (`torch.cat([x, h])`)."""
        out = []
        for expr, value in args:
            if value.kind is Kind.SEQ and (value.elem is not None or value.items is not None):
                items = list(value.items) if value.items is not None else list(value.parts or (value.elem,))
                elements = getattr(expr, "elements", None)
                if elements is not None and len(elements) == len(items):
                    out.extend((el.value, item) for el, item in zip(elements, items))
                else:
                    out.extend((expr, item) for item in items)
            else:
                out.append((expr, value))
        return out

    @staticmethod
    def _keyword(node: cst.Call, name: str) -> cst.Arg | None:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    @classmethod
    def _device_keyword(cls, node: cst.Call) -> cst.Arg | None:
        """`device=X`; `device=None` asks for the default device, as leaving it out does."""
        arg = cls._keyword(node, "device")
        return None if arg is not None and is_none(arg.value) else arg

    @staticmethod
    def _keywords_unpacked(node: cst.Call) -> bool:
        """`f(..., **options)`: any keyword, `device=` included, may be in there."""
        return any(arg.star == "**" for arg in node.args)

    def _may_pass_device(self, node: cst.Call, args: list[tuple[cst.CSTNode, Value]]) -> bool:
        """A constructor given a device (`Net(cfg, device)`, `dev=...`) or keywords we cannot see (`**cfg`)."""
        if self._keywords_unpacked(node) or any(value.kind is Kind.DEVICE for _, value in args):
            return True
        settings = self.solver.settings
        return any(
            arg.keyword is not None
            and is_device_name(arg.keyword.value, settings)
            and not is_none(arg.value)
            for arg in node.args
        )

    def call_qualified(self, node: cst.Call, qualified: str) -> Value:
        settings = self.solver.settings
        if qualified == "torch.device":
            args = self._args(node)
            if not args:
                return F.UNKNOWN
            first = args[0][1]
            if len(args) >= 2 and first.kind is Kind.DEVICE:
                return Value(Kind.DEVICE, first.place if first.place.kind is PlaceKind.ACCEL else Place(PlaceKind.DEVICE))
            if first.kind is Kind.DEVICE:
                return first
            literal = string_value(args[0][0]) if isinstance(args[0][0], cst.BaseExpression) else None
            if literal is not None and device_type_of_string(literal) == "meta":
                # Shapes only: `with torch.device("meta"): model = Net()`, then loaded in place.
                return Value(Kind.DEVICE, F.UNKNOWN_PLACE)
            text = self.solver.analysis.module.code_for_node(args[0][0])
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, "" if "if" in text else text))
        if qualified in MODULE_WRAPPERS:
            args = self._args(node)
            if not args:
                return F.UNKNOWN
            leaf = qualified.rsplit(".", 1)[-1]
            # DataParallel and DDP scatter their inputs onto the devices themselves.
            return replace(args[0][1], cls=leaf) if leaf in SCATTERING_WRAPPERS else args[0][1]
        if qualified in LOADER_CLASSES or qualified.rsplit(".", 1)[-1] in settings.loaders:
            self._args(node)
            return Value(Kind.LOADER, elem=self._batch_value(self._loader_text(node), node))
        if qualified in FACTORIES:
            return self.factory(node, qualified)
        if qualified.endswith("_like") and qualified.startswith("torch."):
            args = self._args(node)
            device = self._device_keyword(node)  # `device=None`: the input's device
            if device is not None:
                return Value(Kind.TENSOR, self.device_place(device.value), self.origin(node, f"created by `{qualified}`"))
            if self._keywords_unpacked(node):
                return Value(Kind.TENSOR)
            return args[0][1].at(args[0][1].place, kind=Kind.TENSOR, batch=None) if args else F.UNKNOWN
        if qualified in NUMPY_CONVERTERS:
            args = self._args(node)
            self._numpy_check(node, args[:1], qualified.replace("numpy.", "np."))
            return F.SCALAR
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            args = self._args(node)
            return args[0][1].at(args[0][1].place, kind=Kind.TENSOR) if args else F.UNKNOWN
        if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.functional.") and qualified.rsplit(".", 1)[-1][:1].isupper():
            return self.construct_module(node, qualified)
        if qualified in ("tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm"):
            args = self._args(node)
            return args[0][1] if args else F.UNKNOWN
        if qualified.startswith("torch.") and not qualified.startswith(("torch.cuda.", "torch.backends.", "torch.distributed.", "torch.utils.")):
            args = self._args(node)
            if qualified in ("torch.load", "torch.save", "torch.manual_seed", "torch.is_tensor", "torch.numel", "torch.set_default_device"):
                return F.UNKNOWN
            if qualified.startswith("torch.nn.modules.utils."):
                return F.SCALAR  # `_pair(kernel_size)`: a tuple of ints
            if qualified in ("torch.onnx.operators.shape_as_tensor", "torch._shape_as_tensor"):
                return Value(Kind.TENSOR, CPU, scalar=True)  # a shape, always on the CPU, used as sizes
            if qualified in CPU_ARGUMENTS:
                # Arguments PyTorch wants on the CPU whatever the device (RNN lengths, CTC targets).
                keep = CPU_ARGUMENTS[qualified]
                args = [(expr, value) for index, ((expr, value), arg) in enumerate(zip(args, node.args)) if (arg.keyword.value if arg.keyword else index) in keep]
            result = self.combine(node, self._flat(args))
            if result.kind is Kind.UNKNOWN and result.place.kind is PlaceKind.FOLLOWS:
                return replace(result, kind=Kind.TENSOR)
            return result
        if self._is_move_helper(qualified.rsplit(".", 1)[-1]):
            return self.move_helper(node)
        args = self._args(node)
        if not qualified.startswith(_READ_ONLY_MODULES) and qualified not in _READ_ONLY_CALLS:
            self._forget_modules(args)
        if any(v.kind is Kind.LOADER for _, v in args) and any(self._is_device_argument(expr, v) for expr, v in args):
            # `pl.MpDeviceLoader(loader, device)`, a `DeviceDataLoader(dl, device)`: yields moved batches.
            return Value(Kind.SEQ, elem=F.UNKNOWN)
        return F.UNKNOWN

    def _is_device_argument(self, expr: cst.CSTNode, value: Value) -> bool:
        name = dotted_name(expr) if isinstance(expr, cst.BaseExpression) else None
        return value.kind is Kind.DEVICE or name is not None and is_device_name(name.rsplit(".", 1)[-1], self.solver.settings)

    def _loader_text(self, node: cst.Call) -> str:
        return self.solver.analysis.module.code_for_node(node.func)

    def _is_move_helper(self, name: str) -> bool:
        lowered = name.lower()
        return name in self.solver.settings.move_helpers or any(word in lowered for word in MOVE_HELPER_WORDS)

    def move_helper(self, node: cst.Call) -> Value:
        args = self._args(node)
        device_args = [value for _, value in args if value.kind is Kind.DEVICE]
        if device_args:
            return Value(Kind.UNKNOWN, device_args[0].place, self.origin(node, "moved"))
        return F.UNKNOWN

    def factory(self, node: cst.Call, qualified: str) -> Value:
        args = self._args(node)
        device = self._device_keyword(node)
        name = qualified.replace("torch.", "torch.", 1)
        if device is not None:
            return Value(Kind.TENSOR, self.device_place(device.value), self.origin(node, f"created by `{name}`"))
        if self._keywords_unpacked(node):
            return Value(Kind.TENSOR)
        if qualified in INPUT_FOLLOWING:
            tensors = [v for _, v in args if v.kind is Kind.TENSOR]
            if tensors:
                return tensors[0].at(tensors[0].place)
        if self.default_place != CPU:
            return Value(Kind.TENSOR, self.default_place, self.origin(node, f"created by `{name}`"))
        scalar = qualified in ("torch.tensor", "torch.as_tensor") and bool(args) and args[0][1].kind is Kind.SCALAR
        in_module = self.cls.name if self.in_module_method else ""
        return Value(
            Kind.TENSOR,
            CPU,
            self.origin(node, f"created by `{name}` without `device=`", factory=True),
            scalar=scalar,
            in_module=in_module,
        )

    def construct_module(self, node: cst.Call, qualified: str) -> Value:
        args = self._args(node)
        leaf = qualified.rsplit(".", 1)[-1]
        wrapped = [value for _, value in args if value.kind is Kind.MODULE]
        if leaf in _MODULE_CONTAINERS:
            children = [(value.elem or F.UNKNOWN) if value.kind is Kind.SEQ else value for _, value in args]  # `*layers` comes as its elements
            if children and all(child.stateless for child in children):
                return Value(Kind.MODULE, F.NOWHERE, cls=leaf, stateless=True)
            if not all(child.stateless or child.kind is Kind.MODULE and child.place == CPU for child in children):
                return Value(Kind.MODULE, cls=leaf)  # `nn.Sequential(*layers)`: where its layers are
        elif wrapped:
            # DistributedDataParallel(model), DataParallel(model): where the wrapped model is.
            return replace(wrapped[0], cls=leaf)
        tensors = [value for _, value in args if value.kind is Kind.TENSOR and value.place.known]
        if tensors:
            # A loss built with a CPU class-weight tensor keeps it on the CPU.
            place = tensors[0].place
            expr = next(expr for expr, value in args if value is tensors[0])
            text = " ".join(self.solver.analysis.module.code_for_node(expr).split())
            return Value(Kind.MODULE, place, self.origin(node, f"built with the tensor `{text}`"), cls=leaf)
        if leaf in PARAMETER_FREE_MODULES or leaf.endswith("Loss"):
            # An unweighted loss or an activation has nothing to move: it stays placeless
            # through `.to()` and registration. A loss with weights of unknown place is only unknown.
            if owns_no_state(leaf, node) and not any(arg.star for arg in node.args):
                return Value(Kind.MODULE, F.NOWHERE, cls=leaf, stateless=True)  # joins as the identity: `[Linear, ReLU]`
            return Value(Kind.MODULE, cls=leaf)
        # `nn.Linear(3, 4, device=device)`: the factory keywords every built-in layer takes.
        device = self._device_keyword(node)
        if device is not None:
            return Value(Kind.MODULE, self.device_place(device.value), self.origin(node, f"built by `{leaf}(...)`"), cls=leaf)
        if self._may_pass_device(node, args):
            return Value(Kind.MODULE, cls=leaf)
        if self.default_place != CPU:  # `with torch.device("cuda"):` builds its parameters there
            return Value(Kind.MODULE, self.default_place, self.origin(node, f"built by `{leaf}(...)`"), cls=leaf)
        return Value(Kind.MODULE, CPU, self.origin(node, f"built by `{leaf}(...)` on the CPU"), cls=leaf)

    def call_name(self, node: cst.Call, func: cst.Name) -> Value:
        name = func.value
        known = self.lookup(name)
        program = self.solver.program
        if known is None or known.kind is Kind.UNKNOWN and known.place.kind is PlaceKind.UNKNOWN:
            if name in program.classes and (self.func is None or name not in self.func.shadowed):
                return self.construct_local(node, program.classes[name])
            target = self._local_function(name)
            if target is not None:
                return self.call_local(node, target, self._args(node))
            if name in ("iter", "enumerate", "tqdm", "list", "tuple", "sorted", "reversed", "next", "zip", "len", "range", "int", "float", "bool", "str", "print", "isinstance", "sum", "max", "min", "abs", "round"):
                return self.call_builtin(node, name)
            if self._is_move_helper(name):
                return self.move_helper(node)
            if name in self.solver.settings.loaders:
                self._args(node)
                return Value(Kind.LOADER, elem=self._batch_value(name, node))
        if known is not None:
            return self.call_value(node, known, func)
        self._escape_args(node, self._args(node))
        return F.UNKNOWN

    def _local_function(self, name: str) -> FunctionInfo | None:
        if self.func is not None:
            if name in self.func.shadowed:
                for candidate in self.solver.program.functions:
                    if candidate.parent is self.func and candidate.name == name:
                        return candidate
                return None
        return self.solver.program.top_level.get(name)

    def call_builtin(self, node: cst.Call, name: str) -> Value:
        args = self._args(node)
        first = args[0][1] if args else F.UNKNOWN
        if name in ("iter", "tqdm", "list", "tuple", "sorted", "reversed"):
            if first.kind is Kind.LOADER or first.batch is not None:
                return first
            if name in ("list", "tuple", "sorted", "reversed") and first.kind is Kind.SEQ:
                return first
            if name in ("list", "tuple") and (first.kind is Kind.TENSOR):
                return Value(Kind.SEQ, elem=first.at(first.place))
            return F.UNKNOWN
        if name == "enumerate":
            inner = self.iterate(first, node)
            return Value(Kind.SEQ, elem=F.tuple_of([F.SCALAR, inner]))
        if name == "zip":
            return Value(Kind.SEQ, elem=F.tuple_of([self.iterate(value, expr) for expr, value in args]))
        if name == "next":
            if first.kind is Kind.LOADER and first.elem is not None:
                return self.iterate(first, args[0][0])
            return self.iterate(first, node) if first.kind is Kind.SEQ else F.UNKNOWN
        if name in ("sum", "max", "min", "abs", "round"):
            if first.kind is Kind.SEQ and first.elem is not None and first.elem.kind is Kind.TENSOR:
                return first.elem
            return F.UNKNOWN if name != "round" else F.SCALAR
        return F.SCALAR if name in ("len", "int", "float", "bool") else F.UNKNOWN

    def construct_local(self, node: cst.Call, cls: ClassInfo) -> Value:
        args = self._args(node)
        init = cls.methods.get("__init__")
        if init is not None:
            self._note_args(init, node, args, skip_self=True)
        if cls.is_module:
            if self._may_pass_device(node, args):
                return Value(Kind.MODULE, cls=cls.name)  # its `__init__` may build its layers there
            if any(_maybe_moved_module(value) for _, value in args):
                return Value(Kind.MODULE, cls=cls.name)  # it wraps a module that may already be moved
            if self._owns_no_state(cls):
                return Value(Kind.MODULE, F.NOWHERE, cls=cls.name, stateless=True)
            if self.default_place != CPU:
                return Value(Kind.MODULE, self.default_place, self.origin(node, f"built by `{cls.name}(...)`"), cls=cls.name)
            return Value(Kind.MODULE, CPU, self.origin(node, f"built by `{cls.name}(...)` on the CPU"), cls=cls.name)
        tensors = [value for _, value in args if value.kind is Kind.TENSOR or value.place.kind is PlaceKind.FOLLOWS]
        return Value(Kind.INSTANCE, cls=cls.name, elem=tensors[0] if len(tensors) == 1 else None)

    def _owns_no_state(self, cls: ClassInfo) -> bool:
        """A Module subclass of this file whose `__init__` keeps only numbers, strings and stateless layers.

        Read from the code, once per class: no fact of another function's run is needed.
        """
        if cls.stateless is None:
            cls.stateless = cls.bases == ["torch.nn.Module"] and self._keeps_no_state(cls)
        return cls.stateless

    def _keeps_no_state(self, cls: ClassInfo) -> bool:
        init = cls.methods.get("__init__")
        numbers = {p.name.value for p in init.params if number_parameter(p)} if init is not None else set()
        for node in descendants(cls.node.body):
            kind = type(node)
            if kind is cst.Call and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in _REGISTERING_CALLS:  # type: ignore[attr-defined]
                return False
            if init is not None and kind in (cst.Assign, cst.AnnAssign) and node.value is not None:  # type: ignore[attr-defined]
                targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
                if any(type(t) is cst.Attribute and dotted_name(t.value) == init.self_param for t in targets):
                    if not self._stateless_value(node.value, numbers):  # type: ignore[attr-defined]
                        return False
        return True

    def _stateless_value(self, value: cst.BaseExpression, numbers: set[str]) -> bool:
        """A literal, a number parameter, or a torch.nn layer that owns nothing."""
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or is_none(value):
            return True
        if isinstance(value, cst.Name):
            return value.value in numbers or value.value in ("True", "False")
        if isinstance(value, cst.Call):
            qualified = self.qualify(value.func) or ""
            leaf = qualified.rsplit(".", 1)[-1]
            return qualified.startswith("torch.nn.") and owns_no_state(leaf, value) and not any(arg.star for arg in value.args)
        return False

    def _note_args(self, target: FunctionInfo, node: cst.Call, args: list[tuple[cst.CSTNode, Value]], skip_self: bool) -> None:
        params = target.params[1:] if skip_self else target.params
        facts: dict[str, Value] = {}
        positional = [value for (expr, value), arg in zip(args, node.args) if arg.keyword is None and not arg.star]
        for param, value in zip(params, positional):
            facts[param.name.value] = value
        for (expr, value), arg in zip(args, node.args):
            if arg.keyword is not None:
                facts[arg.keyword.value] = value
        if any(arg.star for arg in node.args):
            facts = {name: F.UNKNOWN for name in (p.name.value for p in params)}
        for param in params:
            facts.setdefault(param.name.value, self._default_value(param))
        self.solver.note_call(target.key, facts)

    def _default_value(self, param: cst.Param) -> Value:
        if param.default is None:
            return F.UNKNOWN
        if is_none(param.default):
            return F.NONE
        saved, self.solver.recording = self.solver.recording, False
        try:
            return self.eval(param.default)
        finally:
            self.solver.recording = saved

    def call_local(self, node: cst.Call, target: FunctionInfo, args: list[tuple[cst.CSTNode, Value]], skip_self: bool = False, receiver: Value | None = None) -> Value:
        self._note_args(target, node, args, skip_self)
        result = self.solver.read("summaries", target.key, F.UNKNOWN)
        return self._substitute(result, target, node, args, skip_self, receiver)

    def _substitute(self, result: Value, target: FunctionInfo, node: cst.Call, args: list[tuple[cst.CSTNode, Value]], skip_self: bool, receiver: Value | None) -> Value:
        """Map a summary's parameter-relative places onto this call's arguments."""
        params = [p.name.value for p in (target.params[1:] if skip_self else target.params)]
        if result.place.kind is PlaceKind.FOLLOWS and result.place.name in params:
            positional = [value for (expr, value), arg in zip(args, node.args) if arg.keyword is None and not arg.star]
            bound = dict(zip(params, positional))
            bound.update({arg.keyword.value: value for (_, value), arg in zip(args, node.args) if arg.keyword is not None})
            actual = bound.get(result.place.name)
            if actual is not None and actual.place.known:
                return result.at(actual.place, batch=actual.batch)
            return replace(result, place=F.UNKNOWN_PLACE)
        if result.place == MODULE_DEVICE:
            if receiver is not None and receiver.place.known:
                return result.at(receiver.place)
            return replace(result, place=F.UNKNOWN_PLACE) if receiver is not None else result
        return self._defaulted_devices(result, target, node, params)

    def _defaulted_devices(self, result: Value, target: FunctionInfo, node: cst.Call, params: list[str]) -> Value:
        """`make(n)` for `def make(n, device=None)`: what it creates "on `device`" is on the default device here."""
        if result.items is not None:
            items = tuple(self._defaulted_devices(item, target, node, params) for item in result.items)
            return result if items == result.items else replace(result, items=items)
        name = result.place.name
        if result.place.kind is not PlaceKind.DEVICE or name not in params:
            return result
        position = params.index(name)
        for index, arg in enumerate(node.args):
            if arg.star or (arg.keyword.value == name if arg.keyword is not None else index == position):
                passed = arg.value
                if not is_none(passed):
                    return result
        param = next(p for p in target.params if p.name.value == name)
        if not is_none(param.default):
            return result
        return replace(result, place=F.UNKNOWN_PLACE)

    def call_method(self, node: cst.Call, func: cst.Attribute) -> Value:
        method = func.attr.value
        attribute = dotted_name(func)
        held = self.lookup(attribute) if attribute is not None else None
        if held is not None and held.kind in (Kind.MODULE, Kind.UNKNOWN) and (held.place.kind is not PlaceKind.UNKNOWN or held.stateless):
            return self.call_value(node, held, func)  # self.model(x)
        receiver = self.eval(func.value)
        receiver_text = dotted_name(func.value)
        # self.helper(...) and obj.method(...) for classes of this file.
        if receiver.kind is Kind.INSTANCE and receiver.cls in self.solver.program.classes:
            target = self.solver.program.classes[receiver.cls].methods.get(method)
            if target is not None:
                return self.call_local(node, target, self._args(node), skip_self=not target.is_static, receiver=receiver if receiver_text != (self.func.self_param if self.func else None) else None)
        if receiver.kind is Kind.MODULE and receiver.cls in self.solver.program.classes:
            target = self.solver.program.classes[receiver.cls].methods.get(method)
            if target is not None and method not in ("to", "cuda", "cpu"):
                result = self.call_local(node, target, self._args(node), skip_self=True, receiver=receiver)
                if method == "forward":
                    return self.call_value(node, receiver, func.value)
                return result
        if method in ("to", "cuda", "cpu", "type_as", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
            return self.move(node, method, receiver)
        args = self._args(node)
        if method == "numpy":
            self._numpy_check(node, [(func.value, receiver)], ".numpy()")
            return F.SCALAR
        if receiver.kind is Kind.SEQ:
            if method in ("items",):
                return Value(Kind.SEQ, elem=F.tuple_of([F.UNKNOWN, receiver.elem or F.UNKNOWN]))
            if method in ("values", "copy", "pop", "get"):
                return receiver.elem or F.UNKNOWN if method != "copy" else receiver
            return F.UNKNOWN
        if receiver.batch is not None:
            if method in NON_TENSOR_METHODS:
                return F.SCALAR
            if method in ("items",):
                return Value(Kind.SEQ, elem=F.tuple_of([F.UNKNOWN, replace(receiver, part=True)]))
            if method in ("values", "get", "pop"):
                return replace(receiver, part=True)
            return receiver if method not in SHAPE_ONLY_METHODS else F.SCALAR
        if receiver.kind is Kind.MODULE:
            if method in ("train", "eval", "float", "double", "half", "bfloat16", "requires_grad_", "zero_grad", "apply", "share_memory"):
                return receiver
            if method in ("parameters", "buffers"):
                return Value(Kind.SEQ, elem=Value(Kind.TENSOR, receiver.place, receiver.origin))
            if method == "forward":
                return self.call_value(node, receiver, func.value)
            return F.UNKNOWN
        if receiver.kind is Kind.TENSOR or receiver.kind is Kind.UNKNOWN and receiver.place.kind is PlaceKind.FOLLOWS and method not in NON_TENSOR_METHODS:
            if method in NON_TENSOR_METHODS or method in SHAPE_ONLY_METHODS:
                return F.SCALAR
            if method in CROSS_DEVICE_METHODS:
                return receiver.at(receiver.place, kind=Kind.TENSOR, scalar=False)
            operands = [(func.value, receiver), *self._flat(args)]
            result = self.combine(node, operands)
            if result.kind is Kind.TENSOR and result.place == receiver.place:
                return replace(result, origin=receiver.origin, in_module=receiver.in_module, scalar=receiver.scalar and result.scalar)
            return result
        if method in ("item", "tolist", "size", "dim", "numel"):
            # `x.size()` and `x.tolist()` are sequences (`torch.tensor(x.size())` is 1-D).
            return Value(Kind.SEQ, elem=F.SCALAR) if method in ("size", "tolist") and not node.args else F.SCALAR
        if receiver.kind is Kind.LOADER:
            return F.UNKNOWN
        if receiver.kind is Kind.UNKNOWN and receiver.place.known and method not in NON_TENSOR_METHODS:
            return receiver.at(receiver.place, weak=True)
        self._escape_args(node, args)
        if method in ("prepare",):
            return F.UNKNOWN
        return F.UNKNOWN

    def move(self, node: cst.Call, method: str, receiver: Value) -> Value:
        args = self._args(node)
        if receiver.stateless:
            return receiver  # `nn.CrossEntropyLoss().to(device)`: nothing moved, nowhere to be
        if method == "cpu":
            place = CPU
            what = "moved to the CPU by `.cpu()`"
        elif method == "cuda":
            place = Place(PlaceKind.ACCEL, "cuda")
            what = "moved by `.cuda()`"
        elif method == "type_as":
            place = args[0][1].place if args else F.UNKNOWN_PLACE
            what = "placed by `.type_as()`"
        elif method.startswith("new_"):
            device = self._keyword(node, "device")
            place = self.device_place(device.value) if device is not None else receiver.place
            what = f"created by `.{method}()`"
            return Value(Kind.TENSOR, place, self.origin(node, what), in_module=receiver.in_module)
        else:
            place = self._to_target(node, args, receiver)
            what = "moved by `.to()`"
            if place == receiver.place and receiver.origin is not None:
                return replace(receiver, kind=receiver.kind if receiver.kind is not Kind.UNKNOWN else Kind.UNKNOWN)
        kind = receiver.kind if receiver.kind in (Kind.TENSOR, Kind.MODULE, Kind.INSTANCE) else (Kind.TENSOR if receiver.batch is not None else Kind.UNKNOWN)
        if receiver.kind is Kind.INSTANCE and receiver.cls in self.solver.program.classes and self.solver.program.classes[receiver.cls].is_module:
            kind = Kind.MODULE
        return Value(kind, place, self.origin(node, what), cls=receiver.cls, elem=receiver.elem if receiver.kind is Kind.SEQ else None)

    def _to_target(self, node: cst.Call, args: list[tuple[cst.CSTNode, Value]], receiver: Value) -> Place:
        device = self._keyword(node, "device")
        if device is not None:
            return self.device_place(device.value)
        positional = [(expr, value) for (expr, value), arg in zip(args, node.args) if arg.keyword is None]
        if not positional:
            return receiver.place  # .to(dtype=...), .to(memory_format=...)
        expr, value = positional[0]
        if value.kind is Kind.DEVICE:
            return value.place
        if value.kind is Kind.TENSOR:
            return value.place
        if self.qualify(expr) in DTYPES | MEMORY_FORMATS if isinstance(expr, (cst.Name, cst.Attribute)) else False:
            return receiver.place
        text = dotted_name(expr)
        if text is not None and is_device_name(text.rsplit(".", 1)[-1], self.solver.settings):
            return Place(PlaceKind.DEVICE, text)
        return F.UNKNOWN_PLACE

    def call_value(self, node: cst.Call, callee: Value, func: cst.BaseExpression) -> Value:
        """Calling a module (or anything we hold a value for)."""
        forward = self._forward_of(callee)
        if forward is not None and not callee.place.known:
            # `self(x)` inside a module, or a module of this file whose placement is unknown.
            return self.call_local(node, forward, self._args(node), skip_self=True, receiver=None if func is not None and dotted_name(func) == (self.func.self_param if self.func else None) else callee)
        args = self._args(node)
        if callee.kind is Kind.MODULE or callee.kind is Kind.UNKNOWN and callee.place.known:
            module = Operand(func, callee, "module") if callee.place.known and callee.cls not in SCATTERING_WRAPPERS else None
            result = self.combine(node, self._flat(args), module=module)
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
        self._escape_args(node, args)
        return F.UNKNOWN

    def _forward_of(self, callee: Value) -> FunctionInfo | None:
        info = self.solver.program.classes.get(callee.cls) if callee.kind in (Kind.INSTANCE, Kind.MODULE) else None
        if info is None or not info.is_module:
            return None
        return info.methods.get("forward")

    def _escape_args(self, node: cst.Call, args: list[tuple[cst.CSTNode, Value]]) -> None:
        """A module handed to code we cannot see may be moved there; forget where it is.

        Before forgetting: an opaque call that receives a module on the device and an
        unmoved batch (`writer.add_graph(model, images)`) runs one on the other.
        """
        modules = [(expr, value) for expr, value in args if value.kind is Kind.MODULE and value.place.on_accelerator]
        batches = [(expr, value) for expr, value in args if value.batch is not None]
        has_device = any(value.kind is Kind.DEVICE for _, value in args)
        if modules and batches and not has_device:
            self.conflict(node, Operand(batches[0][0], batches[0][1]), Operand(modules[0][0], modules[0][1], "module"))
        self._forget_modules(args)

    def _forget_modules(self, args: list[tuple[cst.CSTNode, Value]]) -> None:
        """`add_hook_to_module(model, hook)`, `dispatch_model(model, ...)`: the callee may place it."""
        for expr, value in args:
            if value.kind is Kind.MODULE:
                name = dotted_name(expr)
                if name is not None and name in self.env:
                    self.env[name] = replace(value, place=F.UNKNOWN_PLACE)

    def _numpy_check(self, node: cst.Call, args: list[tuple[cst.CSTNode, Value]], via: str) -> None:
        for expr, value in args:
            candidate = value
            collection = value.kind is Kind.SEQ and value.elem is not None
            if collection:
                candidate = value.elem
            if candidate.kind in (Kind.TENSOR, Kind.UNKNOWN) and candidate.place.on_accelerator and candidate.place not in self.cpu_places:
                if candidate.kind is Kind.UNKNOWN and candidate.origin is None and not candidate.weak:
                    continue
                if candidate.kind is Kind.UNKNOWN and candidate.weak and via != ".numpy()":
                    # Only a tensor has `.numpy()`; what an opaque object's method returns to
                    # `np.asarray` may already be an array (kornia's `Image.to_numpy()`).
                    continue
                seen = replace(candidate, kind=Kind.SEQ) if collection else candidate
                self.solver.record(self.key, node, NumpyOnDevice(node, Operand(expr, seen), via))


_MODULE_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def _maybe_moved_module(value: Value) -> bool:
    """A module, or something moved like one (`model = model.to(device)` on a parameter), not known on the CPU."""
    if value.kind is Kind.MODULE:
        return not value.stateless and value.place != CPU
    return value.kind is Kind.UNKNOWN and value.place.on_accelerator


_PLACING_METHODS = frozenset({"to", "cuda", "_apply"})


_DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.frombuffer"})


def _buffers_of(cls: ClassInfo) -> frozenset[str]:
    """Names the class registers with `self.register_buffer("name", ...)`."""
    if cls.buffers is None:
        names = set()
        for node in descendants(cls.node.body):
            if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "register_buffer" and node.args:  # type: ignore[attr-defined]
                name = string_value(node.args[0].value)  # type: ignore[attr-defined]
                if name is not None:
                    names.add(name)
        cls.buffers = frozenset(names)
    return cls.buffers


def _called_elsewhere(cls: ClassInfo) -> frozenset[str]:
    """Methods called on `self` by a method other than `__init__`."""
    return frozenset(name for key, method in cls.methods.items() if key != "__init__" for name in _self_calls(method))


def _called_by_init(cls: ClassInfo) -> frozenset[str]:
    """`__init__` and the methods it calls on `self`: they run before the module can be moved."""
    init = cls.methods.get("__init__")
    return frozenset({"__init__", *(_self_calls(init) if init is not None else ())})


def _self_calls(method: FunctionInfo) -> Iterator[str]:
    """`self.<name>(...)` calls in the method."""
    if method.self_param is None:
        return
    for node in descendants(method.node.body):
        if type(node) is cst.Call and type(node.func) is cst.Attribute and dotted_name(node.func.value) == method.self_param:  # type: ignore[attr-defined]
            yield node.func.attr.value  # type: ignore[attr-defined]


# Calls that give a module state without a plain `self.x = ...`.
_REGISTERING_CALLS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module", "setattr", "__setattr__"})


def _loader_name(module: cst.Module, expr: cst.CSTNode) -> str:
    """`train_loader` for `enumerate(tqdm(iter(train_loader)))`."""
    while isinstance(expr, cst.Call) and expr.args and (dotted_name(expr.func) or "").rsplit(".", 1)[-1] in ("iter", "enumerate", "tqdm"):
        expr = expr.args[0].value
    return " ".join(module.code_for_node(expr).split())


def _unwrap(value: Value) -> Value:
    if value.kind is Kind.INSTANCE and value.elem is not None:
        return value.elem
    return value


def _placed(value: Value) -> bool:
    """A tensor (or maybe one) on a known device. Modules handed to a function as
    arguments are not operands (`register_parametrization(self.linear, "weight", L2Norm())`);
    a called module is checked as the call's own `module`."""
    return value.kind in (Kind.TENSOR, Kind.UNKNOWN) and value.place.known


def _suite(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    return [suite]  # SimpleStatementSuite: `if x: y = 1`
