"""The meaning of Python's own expressions for device facts: names, literals, attributes,
subscripts, operators, containers and comprehensions (calls are in calls.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

import libcst as cst

from devlint.analysis import dimensions
from devlint.analysis import facts as F
from devlint.analysis.evaluation import Arguments, Evaluation
from devlint.analysis.events import Operand
from devlint.analysis.facts import CPU, MODULE_DEVICE, Kind, Place, PlaceKind, Value
from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.naming import CONFIG_NAMES, is_device_name
from devlint.analysis.narrowing import cuda_tested, not_tensors, not_tensors_unless, off_cuda, passed_where, stays_off_cuda
from devlint.analysis.placement import combine
from devlint.analysis.torchapi import (
    ACCELERATOR_TYPES,
    CPU_TENSOR_TYPES,
    CUDA_TENSOR_TYPES,
    DTYPES,
    MEMORY_FORMATS,
    NUMBER_CONSTANTS,
    PLOT_OBJECT,
    PLOT_OBJECT_ATTRIBUTES,
    TENSOR_ATTRIBUTES,
    TENSOR_VALUED_ATTRIBUTES,
    factory_placement,
)
from devlint.names import dotted_name

Evaluator = Callable[[Evaluation, cst.CSTNode], Value]

# Containers whose items (by iteration and by index) are their layers.
_MODULE_SEQUENCES = frozenset({"ModuleList", "Sequential"})
# A class with its own `.to()` (diffusers' DDIMSolver) places what it holds.
_PLACING_METHODS = frozenset({"to", "cuda", "_apply"})


def eval_name(run: Evaluation, node: cst.Name) -> Value:
    if node.value == "None":
        return F.NONE
    if node.value in ("True", "False"):
        return F.SCALAR
    known = run.lookup(node.value)
    if known is not None:
        return known
    qualified = run.qualify(node)
    if qualified is not None:
        return _imported(run, node, qualified)
    if is_device_name(node.value, run.solver.settings):
        return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, node.value))
    return F.UNKNOWN


def _imported(run: Evaluation, node: cst.CSTNode, qualified: str) -> Value:
    """An imported name used as a value: a dtype, a legacy typed-tensor class and where it
    allocates, or a device variable of another file of the project (`from config import device`)."""
    variable = run.solver.imported.variables.get(qualified)
    if variable is not None:
        return variable.fact.value(run.origin(node, f"set in {variable.where}"))
    if qualified in DTYPES or qualified in MEMORY_FORMATS:
        return Value(Kind.SCALAR)
    if qualified in NUMBER_CONSTANTS:
        return F.SCALAR  # `torch.pi`: `torch.tensor(2.0 / torch.pi)` is 0-dim (LLMs-from-scratch's GELU)
    if qualified in CUDA_TENSOR_TYPES:
        return Value(Kind.TENSOR_TYPE, Place(PlaceKind.ACCEL, "cuda"))
    if qualified in CPU_TENSOR_TYPES:
        return Value(Kind.TENSOR_TYPE, CPU)
    if factory_placement(qualified) is not None:
        return Value(function=qualified)  # `win = torch.hann_window`: calling `win` calls the factory
    return F.UNKNOWN


def eval_number(run: Evaluation, node: cst.CSTNode) -> Value:
    return F.SCALAR


def eval_string(run: Evaluation, node: cst.SimpleString) -> Value:
    value = string_value(node)
    kind = device_type_of_string(value) if value is not None else None
    if kind == "cpu":
        return Value(Kind.DEVICE, CPU)
    if kind in ACCELERATOR_TYPES:
        return Value(Kind.DEVICE, Place(PlaceKind.ACCEL, value or ""))
    if value is not None and value.isidentifier():
        return Value(text=value)  # a name `getattr` may look up; other strings are of no use
    return F.UNKNOWN


def eval_fstring(run: Evaluation, node: cst.FormattedString) -> Value:
    for part in node.parts:
        if isinstance(part, cst.FormattedStringExpression):
            run.eval(part.expression)
    text = "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText)).split(":", 1)[0]
    if text in ACCELERATOR_TYPES:
        return Value(Kind.DEVICE, Place(PlaceKind.ACCEL, text))  # f"cuda:{rank}"
    return F.UNKNOWN


def eval_attribute(run: Evaluation, node: cst.Attribute) -> Value:
    name = dotted_name(node)
    if name is not None:
        known = run.lookup(name)
        if known is not None:
            return known
        qualified = run.qualify(node)
        if qualified is not None:
            return _imported(run, node, qualified)
    base = run.eval(node.value)
    attr = node.attr.value
    if base.cls == PLOT_OBJECT:
        # `axs.flat`, `fig.axes`: matplotlib's axes, whose plotting methods read through numpy.
        return Value(Kind.SEQ, elem=Value(Kind.INSTANCE, cls=PLOT_OBJECT), cls=PLOT_OBJECT) if attr in PLOT_OBJECT_ATTRIBUTES else F.UNKNOWN
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
        if attr in TENSOR_VALUED_ATTRIBUTES:
            return base.at(base.place)
        return F.SCALAR if attr in TENSOR_ATTRIBUTES else F.UNKNOWN
    if base.kind is Kind.MODULE and base.place.on_accelerator:
        info = run.solver.program.classes.get(base.cls) if base.cls else None
        if info is not None and attr in (assigned := run.solver.read("self_attrs", info.key, {})):
            # What the class's own `__init__` binds (`self.patch_shape = (h, w)`): a parameter or
            # submodule there is on the module's device, anything else is what it is.
            value = assigned[attr]
            return value.at(base.place) if value.place == MODULE_DEVICE else value
        # A parameter or submodule of a module lives where the module lives.
        return Value(Kind.UNKNOWN, base.place, base.origin)
    if base.kind is Kind.INSTANCE and base.cls:
        return _instance_attribute(run, base, attr)
    if is_device_name(attr, run.solver.settings):
        return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, name or attr))
    if base.kind is not Kind.INSTANCE and (kept := run.solver.read("dataset_attrs", attr, None)) is not None:
        return kept
    return F.UNKNOWN


def _instance_attribute(run: Evaluation, base: Value, attr: str) -> Value:
    info = run.solver.program.classes.get(base.cls)
    if info is not None and not info.is_module and not _PLACING_METHODS.isdisjoint(info.methods):
        return F.UNKNOWN
    attrs = run.solver.read("self_attrs", info.key, {}) if info is not None else {}
    if attr in attrs:
        value = attrs[attr]
        if value.place == MODULE_DEVICE:
            return value.at(base.place) if base.place.known else replace(value, place=F.UNKNOWN_PLACE)
        return value  # type: ignore[no-any-return]
    return F.UNKNOWN


def eval_subscript(run: Evaluation, node: cst.Subscript) -> Value:
    base = run.eval(node.value)
    indices = subscript_indices(run, node)
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
    if base.kind is Kind.MODULE and base.cls in _MODULE_SEQUENCES:
        # `self.blocks[i]` is a layer (`self.blocks[1:]` a ModuleList) where the container lives.
        return Value(Kind.MODULE, base.place, base.origin, cls="" if indices else base.cls)
    if base.kind is Kind.SCALAR:
        # `x.size()[0]` is a number, `x.size()[1:]` a tuple of them.
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            return Value(Kind.SEQ, elem=F.SCALAR)
        return F.SCALAR
    if base.kind is Kind.TENSOR or base.kind is Kind.UNKNOWN and base.place.known:
        check_indices(run, node, base, indices)
        # `None`, `...` and tensor indices are not numbers: they leave the dimensions unknown.
        numbers = all(value.kind is Kind.SCALAR for _, value in indices)
        dims = dimensions.after_indexing(base.dims, len(indices)) if numbers else None
        return base.at(base.place, scalar=dims == 0, dims=dims)
    if base.kind is Kind.UNKNOWN and base.place.kind is PlaceKind.FOLLOWS:
        return base
    return F.UNKNOWN


def check_indices(run: Evaluation, node: cst.Subscript, base: Value, indices: Arguments) -> None:
    """A device tensor may be indexed with CPU indices; a CPU tensor not with device ones, nor
    with tensors on the device a caller chooses (reading `t[i]` or writing `t[i] = v`)."""
    if base.place != CPU:
        return
    for index_expr, index in indices:
        # A value with a place that is no tensor's (`x.to(device)` of an unknown `x`) is one:
        # lists and arrays have no `.to()`.
        tensor = index.kind is Kind.TENSOR or index.kind is Kind.UNKNOWN and index.place.known
        elsewhere = index.place.on_accelerator or index.place.kind is PlaceKind.FOLLOWS
        if tensor and elsewhere and not index.weak and not index.scalar:
            run.conflict(node, Operand(node.value, base), Operand(index_expr, index))


def subscript_indices(run: Evaluation, node: cst.Subscript) -> Arguments:
    out = []
    for element in node.slice:
        inner = element.slice
        if isinstance(inner, cst.Index):
            out.append((inner.value, run.eval(inner.value)))
        elif isinstance(inner, cst.Slice):
            for part in (inner.lower, inner.upper, inner.step):
                if part is not None:
                    run.eval(part)
    return out


def eval_binary(run: Evaluation, node: cst.BinaryOperation) -> Value:
    left = run.eval(node.left)
    right = run.eval(node.right)
    if isinstance(node.operator, cst.Modulo) and isinstance(node.left, (cst.SimpleString, cst.FormattedString)):
        return F.UNKNOWN
    if left.kind is Kind.SEQ and right.kind is Kind.SEQ and isinstance(node.operator, cst.Add):
        return Value(Kind.SEQ, elem=F.join(left.elem or F.NONE, right.elem or F.NONE))
    result = combine(run, node, [(node.left, left), (node.right, right)])
    if result.kind is Kind.TENSOR and not isinstance(node.operator, cst.MatrixMultiply):
        dims = dimensions.broadcast([left, right])
        result = replace(result, dims=dims, scalar=result.scalar or dims == 0)
    return result


def eval_unary(run: Evaluation, node: cst.UnaryOperation) -> Value:
    value = run.eval(node.expression)
    return F.SCALAR if isinstance(node.operator, cst.Not) else value


def eval_comparison(run: Evaluation, node: cst.Comparison) -> Value:
    operands = [(node.left, run.eval(node.left))]
    tensor_compare = True
    for target in node.comparisons:
        operands.append((target.comparator, run.eval(target.comparator)))
        if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
            tensor_compare = False
    if not tensor_compare or any(v.kind is Kind.DEVICE for _, v in operands):
        return F.SCALAR
    return combine(run, node, operands)


def eval_boolean(run: Evaluation, node: cst.BooleanOperation) -> Value:
    left = run.eval(node.left)
    right = run.eval(node.right)
    if isinstance(node.operator, cst.Or) and left.kind is Kind.NONE:
        # `device or "cpu"` with `device=None`: the device a caller passes, else the CPU.
        passed = run.passed_device(node.left.value) if isinstance(node.left, cst.Name) else None
        return right if passed is None else F.join(passed, right)
    return F.join(left, right) if left.kind is right.kind else F.UNKNOWN


def eval_ifexp(run: Evaluation, node: cst.IfExp) -> Value:
    run.eval(node.test)
    body = _eval_narrowed(run, node.body, not_tensors(run, node.test) | passed_where(run, node.test, True))
    orelse = _eval_narrowed(run, node.orelse, not_tensors_unless(run, node.test) | passed_where(run, node.test, False))
    if body.kind is Kind.DEVICE and orelse.kind is Kind.DEVICE and body.place != orelse.place:
        # The device-selection idiom: "the device", named by what it is assigned to.
        return Value(Kind.DEVICE, Place(PlaceKind.DEVICE))
    if body.kind is Kind.TENSOR_TYPE and orelse.kind is Kind.TENSOR_TYPE and body.place != orelse.place:
        # Its legacy form: `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`.
        return Value(Kind.TENSOR_TYPE, Place(PlaceKind.DEVICE))
    tested = cuda_tested(node.test)
    if tested is not None and dotted_name(node.orelse) == tested and off_cuda(orelse, body):
        return stays_off_cuda(orelse, node.test, run.source(node.test))  # `x.cpu() if x.is_cuda else x`
    return F.join(body, orelse)


def _eval_narrowed(run: Evaluation, node: cst.BaseExpression, narrowed: dict[str, Value]) -> Value:
    """An operand of `a if test else b` where the test shows names to be no tensor
    (`x.clone() if isinstance(x, torch.Tensor) else np.copy(x)`)."""
    if not narrowed:
        return run.eval(node)
    with run.forked():
        for name, value in narrowed.items():
            run.env[name] = value
        return run.eval(node)


def eval_named(run: Evaluation, node: cst.NamedExpr) -> Value:
    value = run.eval(node.value)
    run.bind(node.target, value)
    return value


def eval_await(run: Evaluation, node: cst.Await) -> Value:
    run.eval(node.expression)
    return F.UNKNOWN


def eval_lambda(run: Evaluation, node: cst.Lambda) -> Value:
    return F.UNKNOWN


def elements(run: Evaluation, items: Iterable[cst.BaseElement]) -> Arguments:
    out: Arguments = []
    for element in items:
        value = run.eval(element.value)
        if isinstance(element, cst.StarredElement):
            if value.kind is Kind.SEQ and value.parts:
                value = replace(value.elem or F.UNKNOWN, parts=value.parts, kind=Kind.SEQ)
            else:
                value = (F.iterated(value) or F.UNKNOWN) if value.kind is Kind.SEQ else F.UNKNOWN
        out.append((element.value, value))
    return out


def eval_tuple(run: Evaluation, node: cst.Tuple) -> Value:
    return F.tuple_of([v for _, v in elements(run, node.elements)])


def eval_list(run: Evaluation, node: cst.List | cst.Set) -> Value:
    elem: Value = F.NONE
    parts: list[Value] = []
    for _, value in elements(run, node.elements):
        elem = F.join(elem, value) if elem.kind is not Kind.NONE else value
        parts.extend(value.parts if value.kind is Kind.SEQ else (value,))
    return Value(Kind.SEQ, elem=elem, parts=F.merge_parts(tuple(parts)))


def eval_dict(run: Evaluation, node: cst.Dict) -> Value:
    elem: Value = F.NONE
    for element in node.elements:
        if isinstance(element, cst.DictElement):
            run.eval(element.key)
            value = run.eval(element.value)
        else:
            value = run.eval(element.value)
            value = value.elem if value.kind is Kind.SEQ and value.elem is not None else F.UNKNOWN
        elem = F.join(elem, value) if elem.kind is not Kind.NONE else value
    return Value(Kind.SEQ, elem=elem)


def _comprehension(run: Evaluation, node: cst.BaseComp | cst.DictComp, result: cst.BaseExpression) -> Value:
    with run.forked():
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            element = iterate(run, run.eval(comp.iter), comp.iter)
            run.bind(comp.target, element)
            for condition in comp.ifs:
                run.eval(condition.test)
            comp = comp.inner_for_in
        value = run.eval(result)
    return Value(Kind.SEQ, elem=value)


def eval_comprehension(run: Evaluation, node: cst.ListComp | cst.SetComp | cst.GeneratorExp) -> Value:
    return _comprehension(run, node, node.elt)


def eval_dict_comprehension(run: Evaluation, node: cst.DictComp) -> Value:
    return _comprehension(run, node, node.value)


# -- iteration ------------------------------------------------------------------------------
def iterate(run: Evaluation, iterable: Value, expr: cst.BaseExpression) -> Value:
    """The value one iteration step yields."""
    if iterable.kind is Kind.LOADER and iterable.elem is not None:
        # Name the batch after the loader as the loop wrote it: `for x, y in train_loader`.
        return batch_value(run, loader_name(run, expr), expr)
    if iterable.items is not None:
        items = iterable.items
        joined = items[0] if items else F.UNKNOWN
        for item in items[1:]:
            joined = F.join(joined, item)
        return joined
    if iterable.kind is Kind.SEQ:
        return F.iterated(iterable) or F.UNKNOWN
    if iterable.kind is Kind.MODULE and iterable.cls in _MODULE_SEQUENCES:
        # `for layer in self.blocks`: a ModuleList's layers live where it lives.
        return Value(Kind.MODULE, iterable.place, iterable.origin)
    if iterable.batch is not None:
        return replace(iterable, part=True)
    if iterable.kind is Kind.TENSOR and iterable.place.known:
        return iterable.at(iterable.place)
    return F.UNKNOWN


def batch_value(run: Evaluation, loader_text: str, node: cst.CSTNode) -> Value:
    origin = run.origin(node, f"comes from `{loader_text}`")
    return Value(Kind.UNKNOWN, CPU, origin, batch=origin)


def loader_name(run: Evaluation, expr: cst.CSTNode) -> str:
    """`train_loader` for `enumerate(tqdm(iter(train_loader)))`."""
    while isinstance(expr, cst.Call) and expr.args and (dotted_name(expr.func) or "").rsplit(".", 1)[-1] in ("iter", "enumerate", "tqdm"):
        expr = expr.args[0].value
    return " ".join(run.source(expr).split())


EVALUATORS: dict[type, Evaluator] = {
    cst.Name: eval_name,  # type: ignore[dict-item]
    cst.Integer: eval_number,
    cst.Float: eval_number,
    cst.Imaginary: eval_number,
    cst.SimpleString: eval_string,  # type: ignore[dict-item]
    cst.FormattedString: eval_fstring,  # type: ignore[dict-item]
    cst.Attribute: eval_attribute,  # type: ignore[dict-item]
    cst.Subscript: eval_subscript,  # type: ignore[dict-item]
    cst.BinaryOperation: eval_binary,  # type: ignore[dict-item]
    cst.UnaryOperation: eval_unary,  # type: ignore[dict-item]
    cst.Comparison: eval_comparison,  # type: ignore[dict-item]
    cst.BooleanOperation: eval_boolean,  # type: ignore[dict-item]
    cst.IfExp: eval_ifexp,  # type: ignore[dict-item]
    cst.NamedExpr: eval_named,  # type: ignore[dict-item]
    cst.Await: eval_await,  # type: ignore[dict-item]
    cst.Lambda: eval_lambda,  # type: ignore[dict-item]
    cst.Tuple: eval_tuple,  # type: ignore[dict-item]
    cst.List: eval_list,  # type: ignore[dict-item]
    cst.Set: eval_list,  # type: ignore[dict-item]
    cst.Dict: eval_dict,  # type: ignore[dict-item]
    cst.ListComp: eval_comprehension,  # type: ignore[dict-item]
    cst.SetComp: eval_comprehension,  # type: ignore[dict-item]
    cst.GeneratorExp: eval_comprehension,  # type: ignore[dict-item]
    cst.DictComp: eval_dict_comprehension,  # type: ignore[dict-item]
}
