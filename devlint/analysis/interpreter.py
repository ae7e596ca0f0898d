"""The interpretation of one function body, statement by statement (see dataflow.py).

This is the core: statements, the environment, branches and loops. Each
expression goes to the module that knows its meaning (expressions.py, calls.py,
and through them torch_calls.py); they reach the run through evaluation.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.accelerator_use import is_cpu_device
from devlint.analysis.calls import eval_call
from devlint.analysis.correlated import switch
from devlint.analysis.class_facts import building_methods, called_by_init, parameter_attributes, registered_attributes, registered_tensor_names
from devlint.analysis.environment import Env, join_envs
from devlint.analysis.evaluation import SharedFacts
from devlint.analysis.events import Conflict, DiscardedMove, Operand, SplitReturn
from devlint.analysis.expressions import EVALUATORS, batch_value, check_indices, iterate, subscript_indices
from devlint.analysis.facts import CPU, INPUT_DEVICE, MODULE_DEVICE, Kind, Origin, Place, PlaceKind, Value
from devlint.analysis.guards import string_value
from devlint.analysis.naming import is_device_name, is_loader_name
from devlint.analysis.narrowing import cuda_tested, may_be_tensor, not_tensors, not_tensors_unless, off_cuda, passed_where, stays_off_cuda
from devlint.analysis.placement import combine, write_into
from devlint.analysis.program import ClassInfo, FunctionInfo
from devlint.analysis.shapes import holds_nothing, number_parameter, size_sources
from devlint.analysis.torch_calls import converts_dtype_only, default_type_place, device_place
from devlint.analysis.torchapi import AVAILABILITY_CALLS, CPU_ONLY_METHODS, DATA_FACTORIES, MODULE_METHODS_RETURNING_SELF, REGISTERED_STATE_CLASSES, TENSOR_ATTRIBUTES, TENSOR_METHODS
from devlint.analysis.torchapi.frameworks import IN_PLACE_BATCH_LIBRARIES
from devlint.analysis.usage import dataclass_fields, declared_container, declared_value, tensor_parameters, unshown_in_exits
from devlint.names import dotted_name, imports_any, is_none
from devlint.tree import child_nodes, descendants

_MAX_LOOP_DEPTH = 2  # deeper loops run once: keeps the cost linear


def function_body(node: cst.FunctionDef) -> list[cst.CSTNode]:
    return list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else [node.body]


_LEAVING = frozenset({cst.Raise, cst.Continue, cst.Break})

# unittest's context managers that expect the block to raise.
_RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})

_Evaluator = Callable[["FunctionRun", cst.CSTNode], Value]
_DISPATCH: dict[type, _Evaluator] = {**EVALUATORS, cst.Call: eval_call}  # type: ignore[dict-item]


def _bound_names(target: cst.BaseExpression) -> set[str]:
    """The names a loop target binds: `batch`, `(i, (x, y))`."""
    return {n.value for n in descendants(target) if type(n) is cst.Name}  # type: ignore[attr-defined]


class FunctionRun:
    """The interpretation of one function body (or of module top level)."""

    def __init__(self, solver: SharedFacts, func: FunctionInfo | None, assumed: dict[str, bool] | None = None) -> None:
        self.solver = solver
        self.func = func
        self.assumed = assumed or {}  # a switch the body tests twice, held to one value for this run
        # Where an availability check has put the statement running: True under
        # `if torch.cuda.is_available():`, False in its else or past `if ...: return`, None elsewhere.
        self.accelerator_path: bool | None = None
        self._return_paths: dict[int, bool | None] = {}
        self.env: Env = Env()
        self._with_attributes: set[str] = set()  # roots of dotted keys in env (`self`, `args`)
        self.returns: list[tuple[cst.CSTNode, Value]] = []
        self.default_place: Place = solver.read("default_place", "", CPU)
        self.loop_depth = 0
        self.loop_exits: list[list[Env]] = []  # per enclosing loop: the states at its `continue`s and `break`s
        self.cpu_places: frozenset[Place] = frozenset()  # devices a branch test has shown to be the CPU
        self.cls: ClassInfo | None = self._owning_class()
        self.key = func.key if func is not None else ""
        self._parameters: dict[str, Value | None] = {}  # what each parameter held as the function started

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
    def constructing(self) -> bool:
        """In `__init__`, or a method only `__init__` calls (kornia's `init_kron`)."""
        func, cls = self.func, self.cls
        if func is None or cls is None or not cls.is_module:
            return False
        return func.name in building_methods(cls)

    def start(self) -> None:
        func = self.func
        assert func is not None
        # A function without parameters (`self` aside) reads nothing from its callers.
        passed = func.params[1:] if func.self_param is not None else func.params
        facts = self.solver.read("param_facts", func.key, {}) if passed or any(func.star_params) else {}
        called = "<calls>" in facts
        for index, param in enumerate(func.params):
            name = param.name.value
            if index == 0 and func.self_param == name:
                self.env[name] = Value(Kind.INSTANCE, cls=func.cls.name if func.cls else "")
                continue
            default = self._param_default(func, param)
            # forward()'s inputs are on the module's device wherever it is called from: a
            # caller's own mix is checked at the call, against the module's placement.
            # An optional input (`mask=None`) is what the callers pass where they pass one.
            is_forward = default.place == INPUT_DEVICE and not is_none(param.default)
            fact = facts.get(name) if called and not is_forward else None
            if fact is not None and fact.place == CPU and self._inputs_on_the_cpu(func, facts):
                # A caller that runs the model on the CPU hands it a CPU mask too: beside
                # inputs taken to be on the module's device, that would be a mix of our making.
                fact = None
            if fact is not None and fact.place.kind is PlaceKind.FOLLOWS:
                # A caller passing its own input: here it is this function's input, wherever the
                # caller's caller put it. Named after this parameter, a result computed from it
                # maps back onto the argument at each call (`y = adjust(x)` is on `x`'s device).
                fact = fact.at(Place(PlaceKind.FOLLOWS, name))
            if fact is not None and default.kind is Kind.TENSOR and default.place.kind is PlaceKind.FOLLOWS:
                # The callers of the file say where it lives; the body says it is a tensor. A caller
                # passing what the analysis cannot place leaves it unplaced: data pipelines hand
                # helpers CPU tensors from opaque calls (a tokenizer's `pad`) as often as models
                # hand them device outputs.
                self.env[name] = replace(fact, kind=Kind.TENSOR) if fact.kind is Kind.UNKNOWN else fact
            elif fact is not None and default.kind is Kind.SEQ and fact.kind is not Kind.SEQ:
                # `x: Dict[str, Tensor]`, where the callers pass what the analysis does not know as a
                # container: its tensors are where the callers' own callers put them, as for a tensor
                # parameter; anything else the callers pass is what it is.
                caller_placed = fact.kind is Kind.UNKNOWN and fact.place.kind is PlaceKind.FOLLOWS and not fact.weak
                declared = declared_value(param.annotation.annotation, self.solver.names, fact.place) if caller_placed and param.annotation else None
                self.env[name] = declared or fact
            elif fact is not None and (fact.kind is not Kind.UNKNOWN or default.kind is Kind.UNKNOWN):
                self.env[name] = fact
            else:
                self.env[name] = default
        self._parameters = {param.name.value: self.env.get(param.name.value) for param in func.params}
        for name in func.star_params:
            if name is not None:
                # `*args`, `**kwargs`: what the callers pass, or whatever they may pass.
                passed = facts.get(name) if called else None
                if passed is not None and passed.place.kind is PlaceKind.FOLLOWS:
                    passed = passed.at(Place(PlaceKind.FOLLOWS, name))  # the callers' inputs, as for a parameter
                self.env[name] = Value(Kind.SEQ, elem=passed or self._star_element(func, name))
        if func.cls is not None and func.self_param is not None and func.name != "__init__":
            for attr, value in self.solver.read("self_attrs", func.cls.key, {}).items():
                if self.assumed and self._move_not_taken(value.origin):
                    # Placed by a move this run's switch skips (`if self.gpu_mode: self.D.cuda()`):
                    # a module stays where it was built, the CPU; a tensor, where it was made.
                    value = replace(value, place=CPU if value.kind is Kind.MODULE else F.UNKNOWN_PLACE, origin=None)
                self.env.setdefault(f"{func.self_param}.{attr}", value)
            if not func.cls.is_module and not func.cls.maybe_module and not func.decorated("classmethod"):
                for attr, value in dataclass_fields(func.cls, self.solver.names).items():
                    self.env.setdefault(f"{func.self_param}.{attr}", value)
            if func.cls.is_module:
                # Parameters and layers a builder method registers move with the module too.
                for attr, tensor in registered_attributes(func.cls).items():
                    self.env.setdefault(f"{func.self_param}.{attr}", Value(Kind.TENSOR if tensor else Kind.MODULE, MODULE_DEVICE))

    def _star_element(self, func: FunctionInfo, name: str) -> Value:
        cls = func.cls
        if cls is not None and cls.is_module and func.name == "forward":
            return Value(Kind.TENSOR, INPUT_DEVICE, in_module=cls.name)
        return Value(Kind.UNKNOWN, Place(PlaceKind.FOLLOWS, name))

    def _inputs_on_the_cpu(self, func: FunctionInfo, facts: dict[str, Value]) -> bool:
        """The callers of a Module's method pass its first input on the CPU: they run the model
        there (`model.forward_raw(torch.rand(2, 3))` in a file's smoke test), as a caller of
        forward() does; where the model is moved, the call is checked against it."""
        if not self.in_module_method or func.name == "__init__":
            return False
        params = func.params[1:] if func.self_param is not None else func.params
        first = facts.get(params[0].name.value) if params else None
        return first is not None and first.place == CPU

    def _param_default(self, func: FunctionInfo, param: cst.Param) -> Value:
        """What a parameter holds as the function starts. An input of forward() that defaults to
        None (`mask=None`, `gt=None`) is on the module's device where a caller passes one, as the
        others are; elsewhere such a parameter is left to the callers (many pass only CPU data
        to an optional argument, a helper cannot tell)."""
        name = param.name.value
        cls = func.cls
        forward = cls is not None and cls.is_module and func.name == "forward"
        if is_none(param.default) and (not forward or is_device_name(name, self.solver.settings)):
            return F.NONE  # `device=None`: torch's default device
        if is_device_name(name, self.solver.settings):
            return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, name))
        if number_parameter(param):
            return F.SCALAR
        if is_loader_name(name, self.solver.settings):
            return Value(Kind.LOADER, elem=batch_value(self, name, param))
        if forward:
            annotation = param.annotation.annotation if param.annotation is not None else None
            if annotation is not None and declared_value(annotation, self.solver.names, INPUT_DEVICE) is None:
                # A container the annotation says no more of (`ref_dict: Optional[dict]`,
                # chatterbox's S3Gen): writing an entry into it meets no device, and what it
                # holds is input, on the module's device as the other inputs are.
                container = declared_container(annotation, self.solver.names)
                if container is not None:
                    return replace(container, elem=Value(Kind.TENSOR, INPUT_DEVICE, in_module=cls.name))  # type: ignore[union-attr]
            # Working code calls a module with inputs on the module's device.
            return Value(Kind.TENSOR, INPUT_DEVICE, in_module=cls.name)  # type: ignore[union-attr]
        place = Place(PlaceKind.FOLLOWS, name)
        if name in tensor_parameters(func, self.solver.program, self.solver.names):
            return Value(Kind.TENSOR, place)
        if param.annotation is not None:
            # `x: Dict[str, Tensor]`: its tensors are the caller's, where the caller put them.
            declared = declared_value(param.annotation.annotation, self.solver.names, place)
            if declared is not None and declared.kind is Kind.SEQ:
                return declared
        # A name given as the default (`window="hann_window"`) holds where no call in the file
        # passes the parameter; a call that does gives its own value instead (start()).
        text = string_value(param.default) if param.default is not None else None
        return Value(Kind.UNKNOWN, place, text=text if text is not None and text.isidentifier() else "")

    def finish(self) -> None:
        func = self.func
        assert func is not None
        value: Value | None = None
        for _, returned in self._returns_that_meet():
            value = returned if value is None else F.join(value, returned)
        self.solver.note_return(func.key, value if value is not None else F.NONE)
        self.solver.note_env(func.key, self.env)
        if func.name == "__init__" and func.cls is not None and func.self_param is not None:
            prefix = f"{func.self_param}."
            attrs = {k[len(prefix):]: v for k, v in self.env.items() if k.startswith(prefix) and "." not in k[len(prefix):]}
            self.solver.note_attrs(func.cls.key, attrs)
        self._check_split_returns()

    def _returns_that_meet(self) -> list[tuple[cst.CSTNode, Value]]:
        """DeepPrivacy's `to_cuda`: `if torch.cuda.is_available(): return x.cuda()`, then `return x`.
        The second return runs only on a machine without CUDA, where no other device is: a caller
        where CUDA is gets the first. Returns of both sides of an availability check never meet."""
        paths = [self._return_paths.get(id(node)) for node, _ in self.returns]
        if True in paths and False in paths:
            return [pair for pair, path in zip(self.returns, paths) if path is not False]
        return self.returns

    def _check_split_returns(self) -> None:
        """A fresh CPU tensor returned on one path, a tensor on the caller's device on another: a
        caller on a GPU gets a CPU tensor on the rare path (an empty batch, an out-of-range loss)."""
        returned = [(node, _unwrap(value)) for node, value in self._returns_that_meet()]
        for node, value in returned:
            if value.cpu_path is not None and not value.weak and not self._converts_a_parameter(value.cpu_path.node) and (
                value.place.kind is not PlaceKind.FOLLOWS or self._own_parameter(value.place.name)
            ):
                # Fresh on the CPU on one path into this very return (`loss = torch.tensor([1.0])`).
                fresh_value = Value(Kind.TENSOR, CPU, value.cpu_path)
                self.solver.record(self.key, value.cpu_path.node, SplitReturn(Operand(value.cpu_path.node, fresh_value), Operand(node, replace(value, cpu_path=None)), self.key))
        fresh = [
            (n, v) for n, v in returned
            if v.place == CPU and v.origin and v.origin.factory and not v.scalar and not self._converts_a_parameter(v.origin.node)
        ]
        for _, cpu_value in fresh:
            assert cpu_value.origin is not None
            sized_from = size_sources(cpu_value.origin.node)
            # The other path: a tensor on the caller's device, or anything following the very
            # parameter the factory takes its size from (`torch.zeros(x.shape[1])` beside `x * 2`).
            placed = [
                (n, v) for n, v in returned
                if not v.weak and (v.place.kind is PlaceKind.FOLLOWS and self._own_parameter(v.place.name) or v.place.on_accelerator)
                and (v.kind is Kind.TENSOR or v.place.kind is PlaceKind.FOLLOWS and v.place.name in sized_from)
            ]
            for other_node, other in placed[:1]:
                self.solver.record(
                    self.key,
                    cpu_value.origin.node,
                    SplitReturn(Operand(cpu_value.origin.node, cpu_value), Operand(other_node, other), self.key),
                )

    def _own_parameter(self, name: str) -> bool:
        """Whether a place that follows `name` follows this function's own parameter: one of a
        helper it called (face-alignment's `_weighted_non_max_suppression(detections)`) is
        decided by what this function passed there, not by its own caller."""
        return not name or self.func is not None and any(param.name.value == name for param in self.func.params)

    def _converts_a_parameter(self, node: cst.CSTNode) -> bool:
        """`torch.from_numpy(data)` of a parameter of the function that converts it: the caller's
        data made a tensor where that data is (host memory for a numpy array), not a tensor made
        anew (simple-faster-rcnn's `totensor`, a converter split by the input's type; also where
        such a converter hands its result on, as face-alignment's `flip` to `shuffle_lr`)."""
        if self.func is None or not isinstance(node, cst.Call) or self.qualify(node.func) not in DATA_FACTORIES:
            return False
        first = node.args[0].value if node.args and node.args[0].keyword is None else None
        if not isinstance(first, cst.Name):
            return False
        if self._own_parameter(first.value):
            return True
        converter = self.solver.enclosing_function(node)
        return converter is not None and converter is not self.func.node and first.value in _parameter_names(converter)

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
        if value.kind is Kind.UNKNOWN and value.place.kind is PlaceKind.FOLLOWS and not value.weak:
            return [value] * count  # `x, y = batch` reads what `batch[0]`, `batch[1]` read: the caller's
        if value.batch is not None or value.kind is Kind.SEQ and F.iterated(value) is not None:
            element = replace(value, part=True) if value.batch is not None else F.iterated(value)
            assert element is not None
            return [element] * count
        return [F.UNKNOWN] * count

    # -- statements ------------------------------------------------------------
    def exec_block(self, body: Iterable[cst.CSTNode]) -> bool:
        """Run statements; False when the block always leaves (return/raise/continue)."""
        saved = self.accelerator_path  # an availability exit inside the block holds to its end
        try:
            for stmt in body:
                if not self.exec_stmt(stmt):
                    return False
            return True
        finally:
            self.accelerator_path = saved

    def exec_stmt(self, stmt: cst.CSTNode) -> bool:
        kind = type(stmt)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:  # `if x: y = 1` holds a suite
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
                value = self._declared(small.annotation.annotation, small.value, self.eval(small.value))
                self._assign(small.target, value, small.value)
        elif type(small) is cst.AugAssign:
            left = self.eval(small.target)
            right = self.eval(small.value)
            write_into(self, small, Operand(small.target, left), [(small.value, right)])
            result = combine(self, small, [(small.target, left), (small.value, right)])
            if left.kind is Kind.TENSOR and left.place.known:
                result = left  # in place: `total += x` leaves `total` where it was
            self._assign(small.target, result, small)
        elif type(small) is cst.Expr:
            self.exec_expr_statement(small.value)
        elif type(small) is cst.Return:
            value = self.eval(small.value) if small.value is not None else F.NONE
            self.returns.append((small.value or small, value))
            self._return_paths[id(small.value or small)] = self.accelerator_path
            return False
        elif type(small) in _LEAVING:
            if type(small) is cst.Raise and small.exc is not None:
                self.eval(small.exc)
            elif type(small) is not cst.Raise and self.loop_exits:
                # `continue` and `break` leave the body, not the loop: what this path holds
                # reaches the next iteration and the loop's exit.
                self.loop_exits[-1].append(_snapshot(self.env))
            return False
        elif type(small) is cst.Assert:
            self.eval(small.test)
        elif type(small) is cst.Del:
            return True
        return True

    def _declared(self, annotation: cst.BaseExpression, source: cst.BaseExpression, value: Value) -> Value:
        """`q: torch.LongTensor = batch.query_vec`: what the code declares a tensor, reached from a
        parameter (its attribute, item, or `.get()`), is one the caller built, on the caller's
        device as the parameter is. What the analysis places otherwise keeps its place."""
        if value.kind is not Kind.UNKNOWN or value.weak or value.place.kind not in (PlaceKind.FOLLOWS, PlaceKind.UNKNOWN):
            return value
        place = value.place
        if place.kind is PlaceKind.UNKNOWN:
            root = _reached_from(source)
            held = self.lookup(root) if root is not None else None
            if held is None or held.kind is not Kind.UNKNOWN or held.weak or held.place.kind is not PlaceKind.FOLLOWS:
                return value
            place = held.place
        declared = declared_value(annotation, self.solver.names, place)
        return declared if declared is not None else value

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
            indices = subscript_indices(self, target)
            if container.kind is Kind.TENSOR:
                check_indices(self, target, container, indices)
            if container.kind is Kind.TENSOR and any(index.kind in (Kind.TENSOR, Kind.SEQ) for _, index in indices):
                # Advanced indexing writes with index_put_, whose values must be on the tensor's
                # device (a 0-dim CPU value excepted); basic slicing copies across devices.
                combine(self, target, [(target.value, container), (source if isinstance(source, cst.BaseExpression) else target, value)])
            name = dotted_name(target.value)
            if name is not None and container.batch is not None:
                self.env[name] = replace(container, batch=None, place=F.UNKNOWN_PLACE)
            elif name is not None and container.kind is Kind.SEQ and container.elem is not None and not _alike(value, container.elem):
                # `x["mask"] = torch.ones(n)`: its elements are no longer all where they were.
                self.env[name] = replace(container, elem=F.UNKNOWN, parts=())
            return
        if isinstance(target, cst.Attribute) and isinstance(target.value, (cst.Name, cst.Attribute)):
            base = dotted_name(target.value)
            if base is not None and self.func is not None and base == self.func.self_param:
                # A tensor unpacked into `self.a, self.b` is not one DL401 reports, so it
                # keeps its own place; a submodule is registered either way.
                # `self.q, self.v = nn.Parameter(...), nn.Parameter(...)` registers both, as one at a time.
                if self.in_module_method and (not unpacked or value.kind in (Kind.MODULE, Kind.INSTANCE) or self._registers_state(source)):
                    self._check_buffer_replaced(target, value)
                    if not self._made_outside_construction(target, value, source):
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
        if value.origin is None or not value.origin.factory or self.constructing:
            return
        factory = value.origin.node
        if not isinstance(factory, cst.Call) or self.qualify(factory.func) in DATA_FACTORIES or holds_nothing(factory):
            return  # built from data that may be on the device; an empty placeholder (`torch.rand(0)`)
        if target.attr.value in registered_tensor_names(cls) and func.name not in called_by_init(cls):
            self.conflict(target, Operand(target, value), Operand(target, Value(Kind.TENSOR, MODULE_DEVICE)))

    def _made_outside_construction(self, target: cst.Attribute, value: Value, source: cst.CSTNode | None) -> bool:
        """`self.rope = torch.arange(n)` in `forward` (OpenNMT's rotary cache), `self.last =
        out.cpu()`: a tensor set after construction is neither registered nor moved by
        `module.to()`, so until it is bound again it is where the code put it. (A registered
        buffer's name is the other check's business, and construction's plain tensors are DL401's.)"""
        cls = self.cls
        if cls is None or self.constructing or self._registers_state(source):
            return False
        return value.kind is Kind.TENSOR and target.attr.value not in registered_tensor_names(cls)

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
                if method == "to" and converts_dtype_only(self, expr) and receiver.kind is not Kind.MODULE:
                    return  # a tensor's dtype conversion left unused: no device involved (a module's moves in place)
                if receiver.kind is Kind.TENSOR and receiver.place.kind is not PlaceKind.UNKNOWN and moved.place == receiver.place:
                    # Already there (`v = torch.tensor(..., device=d)`, then `v.to(d)`): the copy is
                    # `v` itself, and nothing was left behind (pytorch_GAN_zoo, style-based-gan-pytorch).
                    return
                name = dotted_name(self._module_itself(receiver_expr))
                # What a loader yields may be a structure whose `.to()` moves it in place
                # (transformers' BatchEncoding, PyG's Batch); its tensors are not.
                whole = receiver.batch is not None and not receiver.part
                if receiver.kind is Kind.TENSOR or receiver.batch is not None and not (whole and name is not None and self._structured(name, expr)):
                    self.solver.record(self.key, expr, DiscardedMove(expr, receiver_expr, method, self._a_parameter(receiver_expr)))
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
            if method in CPU_ONLY_METHODS:
                self.eval(expr)
                self._ran_on_the_cpu(receiver_expr, method)
                return
            if method in ("update", "setdefault") and expr.args and (name := dotted_name(receiver_expr)) is not None:
                container = self.lookup(name) or F.UNKNOWN
                if container.kind is Kind.SEQ and container.elem is not None:
                    self.env[name] = replace(container, elem=F.UNKNOWN, parts=())  # new items, placed anywhere
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
        if isinstance(expr, cst.Call):
            place = device_place(self, expr.args[0].value) if self.qualify(expr.func) == "torch.set_default_device" and expr.args else default_type_place(self, expr)
            if place == F.DEFAULT_TYPE_DEVICE and self.func is not None:
                # A function that sets it itself may have been entered with it set (a test's
                # `setUp`): what its own code built before is not known to be on the CPU.
                place = F.UNKNOWN_PLACE
            if place is not None:
                self.default_place = place
                if self.func is None:
                    self.solver.note_default_place(place)
        self.eval(expr)

    def _ran_on_the_cpu(self, receiver: cst.BaseExpression, method: str) -> None:
        """`preds[..., 0].apply_(f)` raises on any other device: past it, `preds` is on the CPU
        (face-alignment's `get_preds_fromhm`, copied into Wav2Lip). Weak: what it was computed
        from was on the CPU too, which the analysis does not follow back, so it meets them
        without a finding."""
        while isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        name = dotted_name(receiver)
        held = self.lookup(name) if name is not None else None
        if held is None or held.kind is not Kind.TENSOR or held.place.on_accelerator:
            return
        origin = Origin(receiver, f"ran `{method}`, which works on CPU tensors only")
        self.env[name] = replace(held, place=CPU, origin=origin, weak=True, cpu_path=None)  # type: ignore[index]

    def _module_itself(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """`model` for `model.eval()`, `model.requires_grad_(False)` and, on a module, `model.half()`:
        the module those calls return. A tensor's `half()` is another tensor."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MODULE_METHODS_RETURNING_SELF:
            method = expr.func.attr.value
            if method in TENSOR_METHODS and self.eval(expr.func.value).kind is not Kind.MODULE:
                break
            expr = expr.func.value
        return expr

    def _structured(self, name: str, statement: cst.CSTNode) -> bool:
        """Is the batch `name` a structure rather than a tensor?

        So it is where the loop that draws it uses it as a mapping (`**batch`,
        `batch["labels"]`) or reads a field no tensor has (`batch.edge_index`), and in a
        file that works with PyG or transformers, whose batches move in place.
        """
        if imports_any(self.solver.names.bindings.values(), IN_PLACE_BATCH_LIBRARIES):
            return True
        scope: cst.CSTNode = self.func.node if self.func is not None else self.solver.module
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
                if node.attr.value not in TENSOR_ATTRIBUTES:  # type: ignore[attr-defined]
                    return True
        return False

    def exec_if(self, stmt: cst.If) -> bool:
        self.eval(stmt.test)
        orelse = stmt.orelse
        cpu_in_body, cpu_in_else = self._cpu_tested(stmt.test)
        available = self._availability_test(stmt.test)
        if available is not None and not (cpu_in_body or cpu_in_else):
            return self._exec_availability_test(stmt, available)
        held = switch(stmt.test) if self.assumed else None
        if held is not None and held[0] in self.assumed and not (cpu_in_body or cpu_in_else):
            # The run where the switch has this value takes this branch only (analysis/correlated.py).
            if self.assumed[held[0]] == held[1]:
                return self.exec_block(_suite(stmt.body))
            if orelse is None:
                return True
            return self.exec_stmt(orelse) if isinstance(orelse, cst.If) else self.exec_block(_suite(orelse.body))
        narrowed = not_tensors(self, stmt.test) | self._unshown_here(stmt)
        excluded = not_tensors_unless(self, stmt.test)
        passed = passed_where(self, stmt.test, True) | self._placed_where(stmt.test, True)
        passed_else = passed_where(self, stmt.test, False) | self._placed_where(stmt.test, False)
        tested = cuda_tested(stmt.test)
        if tested is not None and orelse is None and not (cpu_in_body or narrowed):
            return self._exec_cuda_test(stmt, tested)
        if isinstance(orelse, cst.If) or cpu_in_body or cpu_in_else or narrowed or excluded or passed or passed_else:
            before = self.env
            outcomes = [self._run_narrowed(stmt.body, before, cpu_in_body, narrowed, passed)]
            if isinstance(orelse, cst.If):
                outcomes.append(self._run_narrowed(orelse, before, cpu_in_else, excluded, passed_else))
            elif orelse is not None:
                outcomes.append(self._run_narrowed(orelse.body, before, cpu_in_else, excluded, passed_else))
            else:
                rest = before.fork()
                if not outcomes[0][1]:
                    # `if isinstance(x, torch.Tensor): return x.clone()`: only the path where
                    # the test is false goes on, so past the `if` x is no tensor.
                    for name, value in excluded.items():
                        rest[name] = value
                for name, value in passed_else.items():
                    rest[name] = value  # `if device is None: device = cpu`: else the caller's
                outcomes.append((rest, True))
            return self._merge(outcomes, before)
        branches: list[cst.BaseSuite] = [stmt.body]
        if orelse is not None:
            branches.append(orelse.body)
        return self._branches(branches, fallthrough=orelse is None)

    def _placed_where(self, test: cst.BaseExpression, holds: bool) -> dict[str, Value]:
        """`x.device == d` where it holds, `x.device != d` where it does not: there `x` is on `d`
        (chatterbox's `if ref_wav.device != device: ref_wav = ref_wav.to(device)` leaves it on
        `device` on both paths)."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return {}
        operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
        if not isinstance(operator, (cst.Equal, cst.NotEqual)) or isinstance(operator, cst.NotEqual) == holds:
            return {}
        left = test.left
        if not (isinstance(left, cst.Attribute) and left.attr.value == "device"):
            return {}
        name = dotted_name(left.value)
        held = self.lookup(name) if name is not None else None
        if held is None or held.kind not in (Kind.TENSOR, Kind.UNKNOWN) or held.kind is Kind.UNKNOWN and not held.place.known:
            return {}
        place = device_place(self, right)
        if not place.known:
            return {}
        return {name: replace(held, kind=Kind.TENSOR, place=place, origin=Origin(test, f"on `{self.source(right)}` (tested)"), cpu_path=None)}  # type: ignore[dict-item]

    def _availability_test(self, test: cst.BaseExpression) -> bool | None:
        """`torch.cuda.is_available()` (True: its body runs where the accelerator is) or
        `not torch.cuda.is_available()` (False); None for any other test."""
        polarity = True
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, polarity = test.expression, not polarity
        if isinstance(test, cst.Call) and not test.args and self.qualify(test.func) in AVAILABILITY_CALLS:
            return polarity
        return None

    def _exec_availability_test(self, stmt: cst.If, available: bool) -> bool:
        start, saved = self.env, self.accelerator_path
        self.accelerator_path = available
        body = self._run_branch(stmt.body, start)
        self.accelerator_path = not available
        orelse = stmt.orelse
        if orelse is None:
            other = (start.fork(), True)
        elif isinstance(orelse, cst.If):
            other = self._run_branch_stmt(orelse, start)
        else:
            other = self._run_branch(orelse.body, start)
        self.accelerator_path = saved
        falls = self._merge([body, other], start)
        if orelse is None and not body[1]:
            self.accelerator_path = not available  # past `if torch.cuda.is_available(): return ...`
        return falls

    def _exec_cuda_test(self, stmt: cst.If, name: str) -> bool:
        """`if x.is_cuda: x = x.cpu()`: past it, `x` is still where it was when that was an MPS
        or XPU device, where numpy cannot read it either."""
        before = self.env
        body = self._run_branch(stmt.body, before)
        moved = body[0].get(name) if body[1] else None
        falls = self._merge([body, (before.fork(), True)], before)
        kept = before.get(name)
        if off_cuda(kept, moved):
            self.env[name] = stays_off_cuda(kept, stmt.test, self.source(stmt.test))  # type: ignore[arg-type]
        return falls

    def _a_parameter(self, expr: cst.BaseExpression) -> bool:
        """`self.w` where a method of this module sets `self.w = nn.Parameter(...)`."""
        func = self.func
        if func is None or func.cls is None or func.self_param is None or not isinstance(expr, cst.Attribute):
            return False
        return dotted_name(expr.value) == func.self_param and expr.attr.value in parameter_attributes(func.cls)

    def passed_device(self, name: str) -> Value | None:
        """What a `device=None` parameter of a module's constructor, still holding its default,
        holds where a caller passed one: the device that caller chose. There it decides where
        the module lives, and forward()'s inputs are wherever that is: a module built without
        it lives on the CPU with its inputs (YOLOv7's `End2End(model, device=None)`). Elsewhere
        the default's fallback is kept: `forward(x, device=None)` building a CPU tensor beside
        `x` is the bug its callers hit by passing nothing."""
        value = self.env.get(name)
        if value is None or value is not F.NONE or self._parameters.get(name) is not F.NONE:
            return None
        if self.func is None or self.func.name != "__init__" or self.cls is None or not self.cls.is_module:
            return None
        if not is_device_name(name, self.solver.settings):
            return None
        return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, name))

    def _unshown_here(self, stmt: cst.If) -> dict[str, Value]:
        """In a branch that returns before the uses that show a parameter to be a tensor, the
        parameter is what the caller passed, which those uses do not tell."""
        if self.func is None:
            return {}
        unshown = unshown_in_exits(self.func, self.solver.program, self.solver.names).get(stmt, ())
        found = {}
        for name in unshown:
            if may_be_tensor(self, stmt.test, name):
                continue
            value = self.env.get(name)
            if value is not None and value is self._parameters.get(name) and value.kind is Kind.TENSOR and value.place == Place(PlaceKind.FOLLOWS, name):
                found[name] = F.UNKNOWN
        return found

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

    def _run_narrowed(
        self, branch: cst.BaseSuite | cst.If, start: "Env", cpu: Place | None, narrowed: dict[str, Value], passed: dict[str, Value] | None = None
    ) -> tuple["Env", bool]:
        """A branch under `isinstance(x, np.ndarray)` (or an `elif`/`else` of
        `isinstance(x, torch.Tensor)`): there `x` is no tensor. Past the branch, a name the branch
        did not rebind is again what it was before. A `device=None` parameter the test shows was
        passed (`passed`) is the caller's device there, and stays so on that path."""
        self.env = start.fork()
        for name, value in (passed or {}).items():
            self.env[name] = value
        for name, value in narrowed.items():
            self.env[name] = value
        with self._on_the_cpu(cpu):
            falls = self.exec_stmt(branch) if isinstance(branch, cst.If) else self.exec_block(_suite(branch))
        for name, value in narrowed.items():
            if self.env.get(name) is value:
                self.env.written.discard(name)
                if name in start:
                    dict.__setitem__(self.env, name, start[name])
                else:
                    dict.__delitem__(self.env, name)
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
            element = iterate(self, self.eval(stmt.iter), stmt.iter)
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
            self._run_body(stmt, element, entry)
            self.solver.recording = recording
        self._run_body(stmt, element, entry)
        self.loop_depth -= 1
        if stmt.orelse is not None:
            self.exec_block(_suite(stmt.orelse.body))
        return True

    def _run_body(self, stmt: cst.For | cst.While, element: Value, entry: Env) -> None:
        """One pass of a loop's body from the current state; the state after it is what the loop
        may leave: the entry's (no pass), the body's end, or a `continue`'s or `break`'s."""
        if isinstance(stmt, cst.For):
            self.bind(stmt.target, element)
        self.loop_exits.append([])
        try:
            self.exec_block(_suite(stmt.body))
        finally:
            exits = self.loop_exits.pop()
        self.env = join_envs([entry.fork(), self.env, *exits], entry)

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
    def eval(self, expr: cst.BaseExpression | None) -> Value:
        if expr is None:
            return F.UNKNOWN
        evaluate = _DISPATCH.get(type(expr))
        if evaluate is None:
            for child in child_nodes(expr):
                if isinstance(child, cst.BaseExpression):
                    self.eval(child)
                elif isinstance(child, cst.From):
                    self.eval(child.item)  # `yield from f(x)` calls f too
            return F.UNKNOWN
        return evaluate(self, expr)

    def qualify(self, node: cst.BaseExpression) -> str | None:
        shadowed = self.func.shadowed if self.func is not None else ()
        return self.solver.names.qualify(node, shadowed)

    def _move_not_taken(self, origin: Origin | None) -> bool:
        """Was the device operand placed by a move under a switch this run holds the other way
        (`if self.gpu_mode: self.D.cuda()` in `__init__`, seen from the run where it is off)?"""
        if origin is None or not origin.moved or self.func is None or self.func.cls is None:
            return False
        fixed = self.solver.class_switches(self.func.cls)  # only these hold one value in every method
        if not fixed.intersection(self.assumed):
            return False
        return any(key in fixed and key in self.assumed and self.assumed[key] != holds for key, holds in self.solver.moved_under(origin.node))

    def origin(self, node: cst.CSTNode, what: str, factory: bool = False) -> Origin:
        return Origin(node, what, factory)

    def source(self, node: cst.CSTNode) -> str:
        return self.solver.module.code_for_node(node)

    @contextmanager
    def forked(self) -> Iterator[None]:
        """Bindings made inside (a comprehension's variables) do not outlive it."""
        saved = self.env
        self.env = saved.fork()
        try:
            yield
        finally:
            self.env = saved

    @contextmanager
    def silent(self) -> Iterator[None]:
        """Evaluate without recording what is seen (a default value, a trial pass)."""
        saved, self.solver.recording = self.solver.recording, False
        try:
            yield
        finally:
            self.solver.recording = saved

    def conflict(self, node: cst.CSTNode, cpu: Operand, device: Operand) -> None:
        if cpu.value.place != CPU:
            cpu, device = device, cpu
        if self.assumed and self._move_not_taken(device.value.origin):
            return  # this run holds the switch the other way: that move did not happen
        event = Conflict(node, cpu, device, self.key, self.in_module_method)
        origin = cpu.value.origin
        if origin is None:
            self.solver.record(self.key, node, event)
        elif cpu.value.batch is not None:
            # Each unmoved batch variable once: `x` and `y` are two fixes.
            self.solver.record(f"batch:{self.source(cpu.expr)}", origin.node, event)
        else:
            # One CPU tensor meeting the device in five places is one bug, reported once.
            self.solver.record("origin", origin.node, event)


def _snapshot(env: Env) -> Env:
    """The state at a jump, kept apart from the path's own state, which goes on changing."""
    copy = env.fork()
    copy.written = set(env.written)
    return copy


def _unwrap(value: Value) -> Value:
    if value.kind is Kind.INSTANCE and value.elem is not None:
        return value.elem
    return value


def _suite(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    return [suite]  # SimpleStatementSuite: `if x: y = 1`


def _reached_from(expr: cst.BaseExpression) -> str | None:
    """The name a value is read from through attributes, items and `.get()`: `batch` for
    `batch.query_vec`, `x["k"]`, `out.get("boxes")[0]`."""
    while True:
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get":
            expr = expr.func.value
        else:
            return expr.value if isinstance(expr, cst.Name) else None


def _alike(a: Value, b: Value) -> bool:
    """Values of one kind in one place: an element written among the others changes nothing."""
    return a.kind is b.kind and a.place == b.place


def _parameter_names(func: cst.FunctionDef) -> set[str]:
    params = func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    return {p.name.value for p in every}
