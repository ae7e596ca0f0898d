"""What `isinstance` and `is_cuda` tests tell about a name inside the branch they guard."""

from __future__ import annotations

import builtins
from dataclasses import replace

import libcst as cst

from devlint.analysis.evaluation import Evaluation
from devlint.analysis.facts import Kind, Origin, PlaceKind, Value
from devlint.analysis.torchapi import CONTAINER_CLASSES, CUDA_TENSOR_TYPES, NON_TENSOR_CLASSES
from devlint.names import dotted_name, is_none

_BUILTIN_NAMES = frozenset(dir(builtins))


def not_tensors(run: Evaluation, test: cst.BaseExpression) -> dict[str, Value]:
    """The names `test` shows are no tensor where it is true: `isinstance(img, Image.Image)`,
    `isinstance(a, (list, tuple)) and a`, `not torch.is_tensor(x)`. Each gets a value of its own
    (no tensor, nowhere)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return not_tensors(run, test.left) | not_tensors(run, test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return not_tensors_unless(run, test.expression)
    if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and run.lookup("isinstance") is None):
        return {}
    if len(test.args) != 2 or any(arg.keyword is not None or arg.star for arg in test.args):
        return {}
    name = dotted_name(test.args[0].value)
    classes = _classes(run, test.args[1].value)
    if name is None or not classes or not classes <= NON_TENSOR_CLASSES:
        return {}
    held = run.lookup(name)
    if held is not None and held.kind not in (Kind.TENSOR, Kind.UNKNOWN):
        # Known to be no tensor already (a device string, a list, a module): the test tells
        # nothing new, and `if isinstance(device, str): device = torch.device(device)` keeps it.
        return {}
    origin = Origin(test, f"an instance of `{run.source(test.args[1].value)}`")
    if classes <= CONTAINER_CLASSES:
        return {name: Value(Kind.SEQ, origin=origin, elem=_elements(held), mapping=classes == {"builtins.dict"})}
    if classes.isdisjoint(CONTAINER_CLASSES):
        return {name: Value(Kind.SCALAR, origin=origin, scalar=True)}
    return {name: Value(Kind.UNKNOWN, origin=origin)}


def _elements(held: Value | None) -> Value | None:
    """What a container holds that the analysis took for one tensor. A model's output that is a
    tuple (`out = model(x.to(device))`, then `if isinstance(out, tuple): out = out[0]`) holds what
    the model computed, where it computed it; a list given to `forward` holds inputs of the module,
    which are on its device as its other inputs are. A parameter, taken for a tensor only from how
    the body uses it, holds what the caller put there: not known (open3d-ml's
    `np.array(ary, dtype='float32')` under `isinstance(ary, list)` converts numbers)."""
    if held is None or not held.place.known:
        return None
    return held


def _classes(run: Evaluation, node: cst.BaseExpression) -> frozenset[str]:
    """The qualified classes of `C` or `(C1, C2)`; empty if one of them is not known."""
    elements = [el.value for el in node.elements] if isinstance(node, cst.Tuple) else [node]
    found: set[str] = set()
    for element in elements:
        qualified = run.qualify(element)
        if qualified is None and isinstance(element, cst.Name) and element.value in _BUILTIN_NAMES and _unbound(run, element.value):
            qualified = f"builtins.{element.value}"
        if qualified is None:
            return frozenset()
        found.add(qualified)
    return frozenset(found)


def _unbound(run: Evaluation, name: str) -> bool:
    """The builtin itself: no variable, function, class or import of the file is called so."""
    program = run.solver.program
    return run.lookup(name) is None and name not in program.classes and name not in run.solver.names.bindings and not any(
        f.name == name for f in program.functions
    )


def not_tensors_unless(run: Evaluation, test: cst.BaseExpression) -> dict[str, Value]:
    """The names `test` shows are no tensor where it is false: the `else` of
    `isinstance(x, torch.Tensor)` or `torch.is_tensor(x)` (`x.clone() if isinstance(x, torch.Tensor)
    else np.copy(x)`), of `a or b` when both are false, of `not t` where `t` is true."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return not_tensors_unless(run, test.left) | not_tensors_unless(run, test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return not_tensors(run, test.expression)
    asked = _tensor_test(run, test)
    if asked is None or asked[1] != {"torch.Tensor"}:
        # Only `torch.Tensor` itself: a tensor that is no `nn.Parameter` or `FloatTensor` is still a tensor.
        return {}
    return {asked[0]: Value(Kind.UNKNOWN, origin=Origin(test, f"no tensor where `{run.source(test)}` is false"))}


def _tensor_test(run: Evaluation, test: cst.BaseExpression) -> tuple[str, frozenset[str]] | None:
    """The name `isinstance(x, C)` or `torch.is_tensor(x)` asks about, with the classes it asks
    for (`torch.is_tensor` asks for `torch.Tensor`)."""
    if not isinstance(test, cst.Call) or not test.args or any(arg.keyword is not None or arg.star for arg in test.args):
        return None
    name = dotted_name(test.args[0].value)
    if name is None:
        return None
    if dotted_name(test.func) == "isinstance" and run.lookup("isinstance") is None and len(test.args) == 2:
        return name, _classes(run, test.args[1].value)
    if run.qualify(test.func) == "torch.is_tensor" and len(test.args) == 1:
        return name, frozenset({"torch.Tensor"})
    return None


def cuda_tested(test: cst.BaseExpression) -> str | None:
    """The tensor `test` asks whether it is on CUDA: `x.is_cuda`, `x.device.type == "cuda"`.
    Where the answer is no, `x` is on the CPU or on another accelerator (MPS, XPU): a branch
    that moves `x` to the CPU only where it is yes leaves an MPS tensor where it was (skorch's
    `to_numpy`; snntorch's `torch.device("cuda") if data.is_cuda else torch.device("cpu")`)."""
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda":
        return dotted_name(test.value)
    if isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2 and dotted_name(test.args[1].value) in CUDA_TENSOR_TYPES:
        return dotted_name(test.args[0].value)  # `isinstance(x, torch.cuda.FloatTensor)`: the legacy spelling
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    if not isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)):
        return None
    for side, other in ((test.left, test.comparisons[0].comparator), (test.comparisons[0].comparator, test.left)):
        if isinstance(other, cst.SimpleString) and other.evaluated_value == "cuda" and isinstance(side, cst.Attribute):
            device = side.value
            if side.attr.value == "type" and isinstance(device, cst.Attribute) and device.attr.value == "device":
                return dotted_name(device.value)
    return None


def off_cuda(kept: Value | None, moved: Value | None) -> bool:
    """`x` moved to the CPU on the path where it is on CUDA (`moved`), and left as it was
    (`kept`) where it is not: there it may still be on an accelerator."""
    if kept is None or moved is None or moved.place.kind is not PlaceKind.CPU or kept.weak:
        return False
    return kept.kind is Kind.TENSOR and kept.place.kind in (PlaceKind.FOLLOWS, PlaceKind.DEVICE)


def stays_off_cuda(kept: Value, test: cst.BaseExpression, shown: str) -> Value:
    """What `x` is past such a branch: where it was, for the tensors the test lets through."""
    return replace(kept, origin=Origin(test, f"moved to the CPU only when `{shown}`: an MPS or XPU tensor stays where it is"))


def may_be_tensor(run: Evaluation, test: cst.BaseExpression, name: str) -> bool:
    """Whether `test` asks if `name` is a tensor (`isinstance(x, (np.ndarray, torch.Tensor))`,
    `torch.is_tensor(x)`): where it holds, the name may well be one."""
    operands = (test.left, test.right) if isinstance(test, cst.BooleanOperation) else ()
    for node in (test, *operands):
        asked = _tensor_test(run, node)
        if asked is not None and asked[0] == name and "torch.Tensor" in asked[1]:
            return True
    return False


def passed_where(run: Evaluation, test: cst.BaseExpression, holds: bool) -> dict[str, Value]:
    """The `device=None` parameters that `test` being `holds` shows the caller passed:
    `device if device else torch.device("cpu")`, the `else` of `if device is None:`. There the
    parameter is the device the caller chose, not torch's default."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return passed_where(run, test.expression, not holds)
    if isinstance(test, cst.BooleanOperation):
        both = isinstance(test.operator, cst.And) == holds  # `a and b` true, `a or b` false: both are
        return passed_where(run, test.left, holds) | passed_where(run, test.right, holds) if both else {}
    name: str | None = None
    if isinstance(test, cst.Name) and holds:
        name = test.value  # `if device:`
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) and is_none(test.comparisons[0].comparator):
        # `device is not None` where it holds, `device is None` where it does not.
        operator = test.comparisons[0].operator
        if isinstance(operator, (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual)) and isinstance(operator, (cst.IsNot, cst.NotEqual)) == holds:
            name = test.left.value
    value = run.passed_device(name) if name is not None else None
    return {name: value} if name is not None and value is not None else {}
