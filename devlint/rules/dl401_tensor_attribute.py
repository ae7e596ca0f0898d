"""DL401: a tensor kept as a plain attribute of an `nn.Module`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection

import libcst as cst

from devlint.analysis.module_state import (
    PARAMETER,
    PARAMETER_CONVERSIONS,
    TENSOR,
    TENSORISH,
    Assignment,
    ClassState,
    FileIndex,
    Scope,
    bind_header,
    file_index,
    learn_locals,
    statements,
)
from devlint.analysis.dimensions import one_dimensional
from devlint.analysis.shapes import holds_nothing
from devlint.analysis.torchapi import DTYPES, LIKE_FACTORIES, NON_TENSOR_METHODS, SHAPE_ONLY_METHODS, is_torch_module_class
from devlint.analysis.torchapi.frameworks import MODULE_BASES
from devlint.finding import Edit, Fix
from devlint.fixes import outer_span, replace_node, source_of
from devlint.names import dotted_name, is_none
from devlint.rule import Rule
from devlint.tree import child_nodes, descendants


class TensorAttribute(Rule):
    """`model.to(device)` moves parameters, buffers and registered submodules,
    and nothing else. A tensor stored with `self.anchors = torch.tensor(...)`
    in `__init__` (or in a helper that `__init__` calls, or with `setattr`)
    stays where it was created, usually the CPU, and the first operation that
    mixes it with the moved inputs fails on the GPU.

    `nn.Parameter(t).to(device)` is the same mistake in disguise: `.to()`
    returns a plain tensor, so the "parameter" is neither registered nor moved.

    Only values known to be tensors are reported (torch factories and ops,
    tensor methods, local functions and methods that return them), and not
    attributes the class places itself: a method moves them
    (`self.mask = self.mask.to(x.device)`), an `_apply` override converts them,
    or every read outside the constructor is harmless with a CPU copy (an
    index, `self.k.repeat(n).to(x.device)`, a helper of the file that moves
    its argument). A 0-dim tensor of one Python number mixes with any device.
    """

    code = "DL401"
    name = "unregistered-tensor-attribute"
    summary = "a tensor kept as a plain `nn.Module` attribute (not `register_buffer` / `nn.Parameter`): `model.to(device)` leaves it behind"
    fix = "safe"

    _applied: frozenset[str] | None = None  # what the file's `_apply` overrides convert, once asked
    _attribute_counts: Counter[str] | None = None  # `.x` anywhere in the file, once asked

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        index = file_index(self.ctx)
        if not index.moved_by_to(node):
            return
        state = index.class_state(node)
        moved_by_hand: frozenset[str] | None = None  # a walk of the class body: only for candidates
        harmless: frozenset[str] = frozenset()
        overwritten: frozenset[str] = frozenset()
        for attr, attr_state in state.attrs.items():
            if attr_state.registered or not any(a.kind == TENSOR for a in attr_state.assignments):
                continue
            if moved_by_hand is None:
                if self._applied is None:
                    self._applied = _applied(self.ctx.module)
                moved_by_hand = _moved_by_hand(node, state.constructor_methods) | self._applied
                harmless, overwritten, iterated = _read_harmlessly(node, state.constructor_methods, index.functions)
            if attr in moved_by_hand or _rebound_to_a_value(node, attr_state.assignments[-1]):
                continue
            if (
                all(_parameter_conversion(a) is None for a in attr_state.assignments)
                and _all_methods_in_view(index, node, self.ctx.qualify, set())
                and self._only_built_upon(attr, state.constructor_methods)
            ):
                continue  # gridgen's `self.theta`: a step towards `self.grid3d`, gone with `__init__`
            tensors = [a for a in attr_state.assignments if a.kind == TENSOR]
            if attr in iterated and all(one_dimensional(a.value, self.ctx.qualify) for a in tensors):
                continue  # NeRF's `for freq in self.freq_bands`: 0-dim items mix with any device
            if attr in overwritten and all(isinstance(a.value, cst.Call) and holds_nothing(a.value) for a in attr_state.assignments if a.kind == TENSOR):
                continue  # MONAI's `self.att_mat = torch.Tensor()`, replaced by forward
            bindings = attr_state.assignments
            for position, assignment in enumerate(bindings):
                # A Parameter lost to `.to()` is missing from `parameters()`, wherever it is read.
                if _moves_itself(assignment.value, attr) and len(bindings) > 1:
                    continue  # `self.fb = self.fb.to(device)`: the tensor reported where it is made
                if any(later.kind == TENSOR and _reads_itself(later.value, attr) and not _moves_itself(later.value, attr) for later in bindings[position + 1 :]):
                    continue  # RIFE's `self.k = self.k.unsqueeze(0).to(device)`: reported where the kept value is made
                if assignment.kind == TENSOR and (attr not in harmless or _parameter_conversion(assignment) is not None):
                    self._report(index, node, state, assignment)
        for assignment in state.dynamic:
            if assignment.kind == TENSOR:
                self._report(index, node, state, assignment)

    def _only_built_upon(self, attr: str, constructors: Collection[cst.FunctionDef]) -> bool:
        """The constructor computes other state from `self.<attr>`, and nothing in the file names
        `.<attr>` outside the constructors (each class's `__init__` building its own `self`): the
        module is not moved while `__init__` runs, so those reads meet no device, and no later code
        uses the tensor. An attribute the constructor never reads is kept for others to read
        (perhaps in other files) and stays reported."""
        if self._attribute_counts is None:
            everywhere = Counter(n.attr.value for n in descendants(self.ctx.module) if type(n) is cst.Attribute)  # type: ignore[attr-defined]
            inits = [n for n in descendants(self.ctx.module) if type(n) is cst.FunctionDef and n.name.value == "__init__"]  # type: ignore[attr-defined]
            everywhere.subtract(_self_attributes(inits))
            self._attribute_counts = everywhere
        helpers = [m for m in constructors if m.name.value != "__init__"]
        if self._attribute_counts[attr] != _self_attributes(helpers)[attr]:
            return False
        return any(read.attr.value == attr and _computes_from(parents) for method in constructors for read, parents in _self_uses(method)[0])

    def _report(self, index: FileIndex, node: cst.ClassDef, state: ClassState, assignment: Assignment) -> None:
        target = f"self.{assignment.attr}" if assignment.attr else f"setattr(self, {source_of(self.ctx, assignment.name_expr)}, ...)"  # type: ignore[arg-type]
        conversion = _parameter_conversion(assignment)
        if conversion is not None:
            method = conversion.func.attr.value  # type: ignore[attr-defined]
            message = (
                f"`nn.Parameter(...).{method}(...)` returns a plain tensor, not a Parameter: `{target}` is not registered "
                f"(missing from `parameters()` and `state_dict()`) and `model.to(device)` leaves it behind; "
                f"convert the data first: `nn.Parameter(t.{method}(...))`"
            )
            self.report(assignment.node, message, self._conversion_fix(conversion))
            return
        name = assignment.attr or "name"
        # Created on a chosen device (`.cuda()`, `device=...`), it stays there when the model moves elsewhere.
        # `torch.zeros_like(self.weight)` is where that tensor is: not necessarily the CPU.
        like = isinstance(assignment.value, cst.Call) and (dotted_name(assignment.value.func) or "").rsplit(".", 1)[-1] in _LIKE
        where = "where it was created" if like or _placed(assignment.value, {}, set()) else "on the CPU"
        message = (
            f"`{target}` keeps a tensor as a plain attribute of `{node.name.value}`: `model.to(device)` moves only "
            f"parameters, buffers and submodules, so it stays {where}; use "
            f"`self.register_buffer(\"{name}\", ...)` (or `nn.Parameter` if it is trained)"
        )
        self.report(assignment.node, message, self._buffer_fix(index, node, state, assignment))

    # -- fixes ---------------------------------------------------------------------
    def _conversion_fix(self, outer: cst.Call) -> Fix | None:
        """`nn.Parameter(t).to(d)` -> `nn.Parameter(t.to(d))`: where `.to()` was a no-op
        (the machine it works on) nothing changes; elsewhere the Parameter now exists."""
        func = outer.func
        assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call)
        parameter = func.value
        data = [arg for arg in parameter.args if arg.keyword is None and not arg.star]
        if not data:
            data = [arg for arg in parameter.args if arg.keyword is not None and arg.keyword.value == "data"]
        if not data or outer.lpar:
            return None
        _, attr_end = self.ctx.offsets(func.attr)
        _, call_end = self.ctx.offsets(outer)
        suffix = "." + func.attr.value + self.ctx.text[attr_end:call_end]
        _, parameter_end = outer_span(self.ctx, parameter)
        data_value = data[0].value
        start, end = outer_span(self.ctx, data_value)
        edits = [Edit(parameter_end, call_end, "")]
        if getattr(data_value, "lpar", ()) or isinstance(data_value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            edits.append(Edit(end, end, suffix))
        else:
            edits += [Edit(start, start, "("), Edit(end, end, ")" + suffix)]
        return Fix(tuple(edits), safe=True, title=f"Move `.{func.attr.value}()` inside `nn.Parameter(...)`")

    def _buffer_fix(self, index: FileIndex, node: cst.ClassDef, state: ClassState, assignment: Assignment) -> Fix | None:
        """`self.x = t` -> `self.register_buffer("x", t, persistent=False)`.

        Non-persistent keeps `state_dict()` as it was, so checkpoints still load.
        Safe only where the rewrite cannot raise: after `super().__init__()`, no
        class attribute of that name, and every other assignment of the
        attribute is a tensor (or None), which a buffer accepts.
        """
        if assignment.before_super or _requires_grad(assignment.value) or _mentions_parameter(assignment.scope, assignment.value):
            return None
        self_name = assignment.scope.self_name
        statement = assignment.statement
        if assignment.attr is None:
            if not (isinstance(statement, cst.Expr) and statement.value is assignment.node):
                return None
            name = source_of(self.ctx, assignment.name_expr)  # type: ignore[arg-type]
            safe = False  # a computed name may clash with an existing attribute
        else:
            if isinstance(statement, cst.Assign) and len(statement.targets) != 1:
                return None
            attr = assignment.attr
            if attr in index.class_level_names(node.name.value):
                return None
            if state.attrs[attr].parameter_elsewhere:
                return None
            siblings = state.attrs[attr].assignments
            if any(other.kind != TENSOR or other.before_super for other in siblings):
                return None
            if assignment is not siblings[0]:
                # Applied alone, a later binding's rewrite meets the plain attribute the first one
                # left: `register_buffer` raises "attribute already exists" (RIFE's SOBEL).
                return None
            if not _other_methods_assign_tensors(index, node, state, attr):
                return None
            name = f'"{attr}"'
            safe = True
        value = source_of(self.ctx, assignment.value)
        text = f"{self_name}.register_buffer({name}, {value}, persistent=False)"
        return replace_node(self.ctx, statement, text, safe=safe, title="Register it as a non-persistent buffer")


def _computes_from(parents: list[cst.CSTNode]) -> bool:
    """A read whose value goes into something else: not measured (`n = self.priors.size(0)`, which
    leaves the priors kept for others), not filled (`self.boosts[0, i] = v`, `self.w.normal_()`,
    `nn.init.normal_(self.w)`)."""
    if not parents:
        return True
    first = parents[0]
    if type(first) is cst.Attribute:
        attr = first.attr.value  # type: ignore[attr-defined]
        return attr not in _METADATA and not attr.endswith("_")
    if type(first) is cst.Subscript:
        return not (len(parents) > 1 and type(parents[1]) in (cst.AssignTarget, cst.AugAssign))
    if type(first) is cst.Arg and len(parents) > 1 and type(parents[1]) is cst.Call:
        name = dotted_name(parents[1].func)  # type: ignore[attr-defined]
        return name is None or not name.endswith("_")
    return True


def _all_methods_in_view(index: FileIndex, node: cst.ClassDef, qualify: Callable[[cst.BaseExpression], str | None], seen: set[str]) -> bool:
    """Every base is torch's own Module class or a class of this file, so every method that could
    read `self.x` is in this file (ReAgent's trainer is read by its base in another file)."""
    for base in node.bases:
        if base.keyword is not None:
            continue
        qualified = qualify(base.value)
        if qualified is not None and (qualified in MODULE_BASES or is_torch_module_class(qualified)):
            continue
        name = base.value.value if isinstance(base.value, cst.Name) else None
        local = index.classes.get(name) if name is not None and name not in seen else None
        if local is None or not _all_methods_in_view(index, local, qualify, seen | {name}):  # type: ignore[operator]
            return False
    return True


def _self_attributes(methods: Collection[cst.FunctionDef]) -> Counter[str]:
    """How often each `self.x` (the first parameter's attribute) is named in these methods."""
    counts: Counter[str] = Counter()
    for method in methods:
        params = method.params.params
        if not params:
            continue
        me = params[0].name.value
        counts.update(
            n.attr.value for n in descendants(method.body)  # type: ignore[attr-defined]
            if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == me  # type: ignore[attr-defined]
        )
    return counts


def _rebound_to_a_value(node: cst.ClassDef, last: Assignment) -> bool:
    """`self.freq_bands = self.freq_bands.numpy().tolist()` as a statement of `__init__` itself, after
    every other binding: the module keeps the list, and the tensor before it was only a step (torch-ngp)."""
    value = last.value
    if not (
        isinstance(value, (cst.Integer, cst.Float, cst.SimpleString))
        or is_none(value)
        or isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in NON_TENSOR_METHODS
    ):
        return False
    init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None) if isinstance(node.body, cst.IndentedBlock) else None
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return False
    return any(isinstance(line, cst.SimpleStatementLine) and last.statement in line.body for line in init.body.body)


def _parameter_conversion(assignment: Assignment) -> cst.Call | None:
    """The `nn.Parameter(...).to(...)` call when that is the whole assigned value."""
    value = assignment.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return None
    if value.func.attr.value not in PARAMETER_CONVERSIONS or not isinstance(value.func.value, cst.Call):
        return None
    return value if assignment.scope.kind(value.func.value) == PARAMETER else None



def _requires_grad(value: cst.BaseExpression) -> bool:
    """A tensor that asks for gradients is meant to be a Parameter: no automatic fix."""
    for node in descendants(value):
        if type(node) is cst.Arg and node.keyword is not None and node.keyword.value == "requires_grad":
            if not (isinstance(node.value, cst.Name) and node.value.value == "False"):
                return True
        elif type(node) is cst.Attribute and node.attr.value == "requires_grad_":
            return True
    return False


def _mentions_parameter(scope: Scope, value: cst.BaseExpression) -> bool:
    # Every call's kind is asked for, without stopping at the first: asking fills
    # the file index's memo of local functions' return kinds, and later answers
    # must not depend on where this walk stopped.
    kinds = [scope.kind(node) for node in descendants(value) if type(node) is cst.Call]
    return PARAMETER in kinds


def _other_methods_assign_tensors(index: FileIndex, node: cst.ClassDef, state: ClassState, attr: str) -> bool:
    """Outside the constructor, `self.<attr> = v` must stay legal for a buffer: v a tensor or None."""
    if not isinstance(node.body, cst.IndentedBlock):
        return True
    for method in node.body.body:
        if not isinstance(method, cst.FunctionDef) or method in state.constructor_methods:
            continue
        scope = Scope(index, method, node.name.value, dict(state.self_attrs))
        if scope.self_name is None:
            continue
        for statement in statements(tuple(method.body.body) if isinstance(method.body, cst.IndentedBlock) else ()):
            if isinstance(statement, cst.BaseCompoundStatement):
                bind_header(scope, statement)
                continue
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and getattr(small, "value", None) is not None:
                    targets = [small.target]
                if any(scope.self_attribute(target) == attr for target in targets):
                    value = small.value  # type: ignore[union-attr]
                    if isinstance(small, cst.AugAssign):
                        continue  # in place on the tensor: still a tensor
                    if not is_none(value) and scope.kind(value) not in TENSORISH:
                        return False
                learn_locals(scope, small)
    return True


def _reads_itself(value: cst.BaseExpression | None, attr: str) -> bool:
    """The new value is computed from the old one: the same tensor, reshaped or moved."""
    return value is not None and any(type(node) is cst.Attribute and dotted_name(node) == f"self.{attr}" for node in descendants(value))


def _moves_itself(value: cst.BaseExpression | None, attr: str) -> bool:
    """`self.mask.to(x.device)`, also inside the value (`self.mask.to(x.device)[:n]`)."""
    if value is None:
        return False
    for node in descendants(value):
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _MOVES:  # type: ignore[attr-defined]
            if dotted_name(node.func.value) == f"self.{attr}" and (node.func.attr.value != "type" or _moves_device(node)):  # type: ignore[attr-defined]
                return True
    return False


def _moved_by_hand(node: cst.ClassDef, constructors: Collection[cst.FunctionDef]) -> frozenset[str]:
    """Attributes the class places itself: the class manages their device, so
    `model.to(device)` leaving them behind is no bug.

    Those a method moves (`self.mask = self.mask.to(x.device)`, as CLIP does), and
    those a method other than the constructor rebuilds from a placed value (a
    rotary cache grown on the input's device: `self.cos_cached = emb.cos()` after
    `emb = ....to(x.device)`).
    """
    moved: set[str] = set()
    # A move while the module is built (`self.fb = self.fb.to(device)` in `__init__`, as
    # auraloss did) comes before `model.to()`, which then leaves the attribute behind. A helper
    # `__init__` calls that `forward` calls too runs after the move as well (ESPnet's
    # `extend_pe(x)`, which re-places `self.pe` on `x.device`, copied into chatterbox).
    later = _called_outside(node, constructors)
    building = {id(method) for method in constructors if method.name.value not in later}
    # Only a move that rebinds the attribute places it: `w = self.w.to(x.device)` leaves
    # `self.w` behind for the reads elsewhere (mmaction2's class weights, moved in one
    # branch and multiplied unmoved in another); those reads are judged one by one.
    for child in descendants(node.body, enter=lambda n: id(n) not in building):
        if type(child) is cst.Assign:
            for target in child.targets:  # type: ignore[attr-defined]
                name = dotted_name(target.target)
                if name is not None and name.count(".") == 1 and name.startswith("self.") and _moves_itself(child.value, name[5:]):  # type: ignore[attr-defined]
                    moved.add(name[5:])
        elif type(child) is cst.FunctionDef and child not in constructors:
            moved.update(_rebuilt_placed(child))
    return frozenset(moved)


def _called_outside(node: cst.ClassDef, constructors: Collection[cst.FunctionDef]) -> frozenset[str]:
    """The methods called on `self` by the class's methods that do not build it."""
    called: set[str] = set()
    for method in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if not isinstance(method, cst.FunctionDef) or method in constructors or not method.params.params:
            continue
        this = method.params.params[0].name.value
        for child in descendants(method.body):
            if type(child) is cst.Call and type(child.func) is cst.Attribute and dotted_name(child.func.value) == this:  # type: ignore[attr-defined]
                called.add(child.func.attr.value)  # type: ignore[attr-defined]
    return frozenset(called)


def _applied(module: cst.Module) -> frozenset[str]:
    """Attributes an `_apply` override of the file converts with the rest (`m.stride = fn(m.stride)`,
    as ultralytics' DetectionModel does): `model.to(device)` moves them too."""
    found: set[str] = set()
    for node in descendants(module):
        if type(node) is not cst.FunctionDef or node.name.value != "_apply":  # type: ignore[attr-defined]
            continue
        params = node.params.params  # type: ignore[attr-defined]
        fn = params[1].name.value if len(params) >= 2 else None
        for inner in descendants(node.body):  # type: ignore[attr-defined]
            if type(inner) is cst.Assign and type(inner.value) is cst.Call and dotted_name(inner.value.func) == fn:  # type: ignore[attr-defined]
                found.update(t.target.attr.value for t in inner.targets if type(t.target) is cst.Attribute)  # type: ignore[attr-defined]
    return frozenset(found)


# What reads only sizes or the dtype: the same on every device.
_METADATA = SHAPE_ONLY_METHODS | {"shape", "ndim", "dtype"}


def _read_harmlessly(
    node: cst.ClassDef, constructors: Collection[cst.FunctionDef], functions: dict[str, cst.FunctionDef]
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """Attributes the methods read, and only where the CPU copy does no harm.

    As an index (`w[self.idx]`: PyTorch takes CPU indices into a GPU tensor), shown in
    an f-string, moved on
    the way (`self.k.repeat(n).to(x.device)`), or handed to a function of this file that
    places its argument (`w.to(image)`, `torch.as_tensor(w, device=x.device)`). Reads in
    a constructor (the module is not moved yet) decide nothing; an attribute no other
    method reads is not harmless, as code outside the class may read it. Second: the
    attributes a method overwrites and none reads, whose placeholder then matters to no one.
    Third: the attributes the methods only loop over (`for freq in self.freq_bands`).
    """
    harmful: set[str] = set()
    harmless: set[str] = set()
    iterated: set[str] = set()  # only looped over: harmless where the tensor is 1-D
    overwritten: set[str] = set()  # placeholders a method replaces (MONAI's `self.att_mat`)
    for method in node.body.body:
        if type(method) is not cst.FunctionDef or method in constructors:
            continue
        reads, writes = _self_uses(method)
        overwritten.update(writes)
        counters = _integer_counters(method)
        for read, parents in reads:
            if _looped_over(read, parents):
                iterated.add(read.attr.value)
            elif _item_read(read, parents, counters):
                iterated.add(read.attr.value)  # `self.w[i]`: one item, as a loop over it reads
            else:
                (harmless if _harmless_use(read, parents, functions) else harmful).add(read.attr.value)
    return frozenset(harmless - harmful), frozenset(overwritten - harmful - harmless - iterated), frozenset(iterated - harmful)


# Builtins that iterate each of their positional arguments in turn, item by item.
_ITEMWISE = frozenset({"zip", "enumerate", "reversed"})


def _looped_over(read: cst.Attribute, parents: list[cst.CSTNode]) -> bool:
    """`for f in self.w`, also through `zip(self.w, self.m)`, `enumerate(self.w)` or
    `reversed(self.w)` (threestudio's `for freq, mask in zip(self.freq_bands, self.mask)`)."""
    node: cst.CSTNode = read
    while parents and type(parents[0]) is cst.Arg and parents[0].value is node and not parents[0].star and parents[0].keyword is None:  # type: ignore[attr-defined]
        if len(parents) < 2 or type(parents[1]) is not cst.Call or dotted_name(parents[1].func) not in _ITEMWISE:  # type: ignore[attr-defined]
            return False
        node, parents = parents[1], parents[2:]  # `enumerate(zip(self.w, self.m))`
    return bool(parents) and type(parents[0]) in (cst.For, cst.CompFor) and parents[0].iter is node  # type: ignore[attr-defined]


def _integer_counters(method: cst.FunctionDef) -> frozenset[str]:
    """Names only ever bound as loop counters of `range(...)` or the index of `enumerate(...)`:
    Python ints."""
    counted: set[str] = set()
    bound: Counter[str] = Counter()
    for node in descendants(method.body):
        kind = type(node)
        if kind in (cst.For, cst.CompFor):
            target, walked = node.target, node.iter  # type: ignore[attr-defined]
            callee = dotted_name(walked.func) if type(walked) is cst.Call else None  # type: ignore[attr-defined]
            if callee == "range" and type(target) is cst.Name:
                counted.add(target.value)  # type: ignore[attr-defined]
            elif callee == "enumerate" and type(target) is cst.Tuple and target.elements and type(target.elements[0].value) is cst.Name:  # type: ignore[attr-defined]
                counted.add(target.elements[0].value.value)  # type: ignore[attr-defined]
        for name in _bound_names(node):
            bound[name] += 1
    return frozenset(name for name in counted if bound[name] == 1)


def _bound_names(node: cst.CSTNode) -> list[str]:
    targets: list[cst.CSTNode] = []
    if type(node) is cst.Assign:
        targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
    elif type(node) in (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor):
        targets = [node.target]  # type: ignore[attr-defined]
    return [n.value for t in targets for n in descendants(t) if type(n) is cst.Name]  # type: ignore[attr-defined]


def _item_read(read: cst.Attribute, parents: list[cst.CSTNode], counters: frozenset[str]) -> bool:
    """`self.w[i]` with `i` a loop counter or an integer literal: one item of a 1-D tensor, 0-dim."""
    if not parents or type(parents[0]) is not cst.Subscript or parents[0].value is not read or len(parents[0].slice) != 1:  # type: ignore[attr-defined]
        return False
    index = parents[0].slice[0].slice  # type: ignore[attr-defined]
    if type(index) is not cst.Index:
        return False
    value = index.value
    return type(value) is cst.Integer or type(value) is cst.Name and value.value in counters  # type: ignore[attr-defined]


def _self_uses(method: cst.FunctionDef) -> tuple[list[tuple[cst.Attribute, list[cst.CSTNode]]], set[str]]:
    """Every `self.x` the method reads, with its ancestors innermost first; and the `x` it assigns."""
    found: list[tuple[cst.Attribute, list[cst.CSTNode]]] = []
    written: set[str] = set()
    stack: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = [(method.body, [])]
    while stack:
        current, parents = stack.pop()
        if type(current) is cst.Attribute and dotted_name(current) is not None and dotted_name(current).count(".") == 1 and dotted_name(current).startswith("self."):  # type: ignore[union-attr]
            if parents and type(parents[0]) is cst.AssignTarget:
                written.add(current.attr.value)  # type: ignore[attr-defined]
            elif not (parents and type(parents[0]) in (cst.AugAssign, cst.AnnAssign)):
                found.append((current, parents))  # type: ignore[arg-type]
            continue
        stack.extend((child, [current, *parents]) for child in child_nodes(current))
    return found, written


def _harmless_use(read: cst.Attribute, parents: list[cst.CSTNode], functions: dict[str, cst.FunctionDef]) -> bool:
    if parents and type(parents[0]) in (cst.Index, cst.FormattedStringExpression):
        return True  # `w[self.idx]`; `f"{self.mean}"` in a `__repr__`
    if parents and type(parents[0]) is cst.Attribute and parents[0].attr.value in _METADATA:  # type: ignore[attr-defined]
        return True  # `self.grid.size()`: sizes and dtypes are the same on every device
    if parents and type(parents[0]) is cst.Assign and parents[0].value is read:  # type: ignore[attr-defined]
        if all(type(t.target) is cst.Subscript for t in parents[0].targets):  # type: ignore[attr-defined]
            return True  # `batch[i] = self.grid`: a copy into the target, which PyTorch makes across devices
    if parents and type(parents[0]) is cst.Comparison and parents[0].left is read:  # type: ignore[attr-defined]
        # `if self.class_weight is not None:` asks whether there is one, wherever it is.
        if all(type(t.operator) in (cst.Is, cst.IsNot) and is_none(t.comparator) for t in parents[0].comparisons):  # type: ignore[attr-defined]
            return True
    current: cst.CSTNode = read
    for parent in parents:  # up a chain of methods on the value: `self.k.repeat(n).to(x.device)`
        if type(parent) is cst.Attribute and parent.value is current:
            current = parent
        elif type(parent) is cst.Call and parent.func is current:
            if type(current) is cst.Attribute and current.attr.value in _MOVES and _moves_device(parent):
                return True
            current = parent
        else:
            break
    if len(parents) >= 2 and type(parents[0]) is cst.Arg and type(parents[1]) is cst.Call:
        call = parents[1]
        target = functions.get(dotted_name(call.func) or "")  # type: ignore[attr-defined]
        if target is not None:
            param = _parameter_for(target, call, parents[0])  # type: ignore[arg-type]
            return param is not None and _places_parameter(target, param)
    return False


def _parameter_for(func: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value
    positional = [a for a in call.args if a.keyword is None]
    params = [*func.params.posonly_params, *func.params.params]
    index = next(i for i, a in enumerate(positional) if a is arg)
    return params[index].name.value if index < len(params) else None


def _places_parameter(func: cst.FunctionDef, name: str) -> bool:
    """The function moves its parameter (`w.to(image)`) or rebuilds it with `device=`."""
    for node in descendants(func.body):
        if type(node) is not cst.Call:
            continue
        func_ = node.func  # type: ignore[attr-defined]
        if type(func_) is cst.Attribute and func_.attr.value in _MOVES and dotted_name(func_.value) == name and _moves_device(node):  # type: ignore[arg-type]
            return True
        args = node.args  # type: ignore[attr-defined]
        if args and dotted_name(args[0].value) == name and any(a.keyword is not None and a.keyword.value == "device" for a in args):
            return True
    return False


def _rebuilt_placed(method: cst.FunctionDef) -> set[str]:
    """`self.x = v` in the method where v, or a local it is computed from, is placed on a device."""
    assigned: dict[str, cst.BaseExpression] = {}
    rebuilt: list[tuple[str, cst.BaseExpression]] = []
    for node in descendants(method.body):
        if type(node) is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                name = dotted_name(target.target)
                if name is None:
                    continue
                if name.startswith("self.") and name.count(".") == 1:
                    rebuilt.append((name.split(".", 1)[1], node.value))  # type: ignore[attr-defined]
                elif "." not in name:
                    assigned[name] = node.value  # type: ignore[attr-defined]
    # A value that reads the attribute's old self (`self.avg = 0.9 * self.avg + ...`) updates it in place.
    return {
        attr
        for attr, value in rebuilt
        if _placed(value, assigned, set()) and not any(dotted_name(n) == f"self.{attr}" for n in descendants(value) if type(n) is cst.Attribute)  # type: ignore[arg-type]
    }


def _placed(expr: cst.BaseExpression, assigned: dict[str, cst.BaseExpression], seen: set[str]) -> bool:
    """Does the value read a device (`x.device`), pass one (`device=`), move a tensor, or use a local that does?"""
    for node in descendants(expr):
        kind = type(node)
        if kind is cst.Attribute and node.attr.value == "device":  # type: ignore[attr-defined]
            return True
        if kind is cst.Arg and node.keyword is not None and node.keyword.value == "device":  # type: ignore[attr-defined]
            return True
        if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _MOVES and _moves_device(node):  # type: ignore[attr-defined]
            return True
        if kind is cst.Name and node.value in assigned and node.value not in seen:  # type: ignore[attr-defined]
            seen.add(node.value)  # type: ignore[attr-defined]
            if _placed(assigned[node.value], assigned, seen):  # type: ignore[attr-defined]
                return True
    return False


def _moves_device(call: cst.Call) -> bool:
    """`.cuda()`, `.type_as(t)`, `.to(device)`, `.type("torch.cuda.FloatTensor")`; not a dtype-only
    `.to(torch.float32)` / `.to(x.dtype)` / `.type(torch.half)`."""
    if call.func.attr.value == "type":  # type: ignore[attr-defined]
        # A type name holds the device (`torch{}.FloatTensor".format(cuda)`, `x.type()`, a legacy
        # `torch.cuda.FloatTensor`); a dtype does not.
        if len(call.args) != 1 or call.args[0].keyword is not None:
            return False
        given = call.args[0].value
        if isinstance(given, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return True
        if isinstance(given, cst.Call) and isinstance(given.func, cst.Attribute):
            return given.func.attr.value == "type" or given.func.attr.value == "format" and isinstance(given.func.value, cst.SimpleString)
        return (dotted_name(given) or "").endswith("Tensor")
    if call.func.attr.value != "to":  # type: ignore[attr-defined]
        return True
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
        return True
    if not positional:
        return False
    first = dotted_name(positional[0].value) or ""
    return not (first.endswith("dtype") or first.rsplit(".", 1)[-1] in _DTYPE_NAMES)


# `torch.float32` or `float32` as imported: a dtype, not a device.
_DTYPE_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in DTYPES)

_MOVES = frozenset({"to", "cuda", "type_as", "type"})
_LIKE = frozenset(name.rsplit(".", 1)[-1] for name in LIKE_FACTORIES) | {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}
