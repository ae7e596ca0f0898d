"""How many dimensions a tensor has, where the code shows it: enough to tell 0-dim tensors.

PyTorch lets a 0-dim CPU tensor meet tensors on any device (it is read as a
number), so `alphas[t]` with an integer `t` mixes freely with CUDA tensors
while `alphas[t]` with a tensor of timesteps does not. Dimensions are known
for factories given literal sizes or nested literal data, kept through
operators and the methods and functions torch's own data says keep them
(tools/gen_torch_api.py tries each on a tensor), and taken away by integer
indexing. Anything else is unknown.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devlint.analysis.evaluation import Arguments
from devlint.analysis.facts import Kind, Value
from devlint.tree import descendants

# Factories that always make 1-D or 2-D tensors.
_ONE_DIMENSIONAL = frozenset(
    {"torch.arange", "torch.linspace", "torch.logspace", "torch.randperm", "torch.range",
     "torch.hann_window", "torch.hamming_window", "torch.blackman_window", "torch.bartlett_window", "torch.kaiser_window"}
)  # fmt: skip
_TWO_DIMENSIONAL = frozenset({"torch.eye", "torch.tril_indices", "torch.triu_indices"})
# Factories whose positional arguments (or first tuple) are the sizes.
_SIZED = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.full", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor", "torch.IntTensor", "torch.BoolTensor", "torch.ByteTensor", "torch.HalfTensor"})
# Factories whose first argument is the data.
_FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray"})


def of_factory(qualified: str, node: cst.Call, args: Arguments) -> int | None:
    """The dimensions of what `qualified(...)` creates, when its arguments show them."""
    if qualified in _ONE_DIMENSIONAL:
        return 1
    if qualified in _TWO_DIMENSIONAL:
        return 2
    positional = [(arg.value, value) for arg, (_, value) in zip(node.args, args) if arg.keyword is None and not arg.star]
    if qualified in _FROM_DATA or qualified in _SIZED and positional and isinstance(positional[0][0], cst.List):
        return _data_dims(positional[0][0], positional[0][1]) if positional else None
    if qualified in _SIZED:
        size = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "size"), None)
        if size is None and positional and isinstance(positional[0][0], (cst.Tuple, cst.List)):
            size = positional[0][0]
        if isinstance(size, (cst.Tuple, cst.List)):
            return len(size.elements) if not any(isinstance(e, cst.StarredElement) for e in size.elements) else None
        if qualified == "torch.full":
            return None
        if positional and all(value.kind is Kind.SCALAR and not isinstance(expr, (cst.Tuple, cst.List)) for expr, value in positional):
            return len(positional)  # torch.zeros(n, m)
    return None


def _data_dims(expr: cst.BaseExpression, value: Value) -> int | None:
    """`[[1, 2], [3, 4]]` is 2-D, `[a, b]` 1-D, a number 0-D. The leaves of literal data are
    numbers (or 0-dim tensors): `torch.tensor([t])` of a longer tensor raises."""
    if not isinstance(expr, (cst.List, cst.Tuple)):
        return 0 if value.kind is Kind.SCALAR else None
    depth = 0
    while isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
        depth += 1
        first = expr.elements[0]
        if isinstance(first, cst.StarredElement):
            return None
        expr = first.value
    if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
        return None  # `[]`, or a comprehension whose elements may be lists
    return depth


def after_indexing(dims: int | None, integers: int) -> int | None:
    """`t[i]` drops one dimension per integer index; slices keep theirs."""
    if dims is None or integers > dims:
        return None
    return dims - integers


def broadcast(values: list[Value]) -> int | None:
    """An elementwise operation: as many dimensions as its largest operand (numbers count 0)."""
    dims = []
    for value in values:
        if value.kind is Kind.SCALAR and value.dims is None:
            dims.append(0)  # a Python number
        elif value.dims is None:
            return None
        else:
            dims.append(value.dims)
    return max(dims) if dims else None


def one_dimensional(expr: cst.BaseExpression, qualify: "Callable[[cst.BaseExpression], str | None]") -> bool:
    """`torch.linspace(0, 9, 10)`, `2 ** torch.arange(n)`: a 1-D factory, alone or with numbers,
    read from the code as written (iterating it yields 0-dim tensors)."""
    if isinstance(expr, cst.Call):
        qualified = qualify(expr.func)
        if qualified in _FROM_DATA or qualified in _SIZED and qualified.endswith("Tensor"):  # data, not sizes
            # `torch.tensor([0.5, 0.25])`, flownet2's `torch.FloatTensor([w / 2 ** s for s in range(n)])`
            data = expr.args[0].value if expr.args and expr.args[0].keyword is None and not expr.args[0].star else None
            return data is not None and _flat_numbers(data)
        return qualified in _ONE_DIMENSIONAL
    if isinstance(expr, cst.BinaryOperation):
        left, right = expr.left, expr.right
        numbers = (cst.Integer, cst.Float)
        return (one_dimensional(left, qualify) and (isinstance(right, numbers) or one_dimensional(right, qualify))) or (
            isinstance(left, numbers) and one_dimensional(right, qualify)
        )
    return False


def _flat_numbers(data: cst.BaseExpression) -> bool:
    """A list of number literals, or a comprehension whose element is arithmetic on a number
    literal and names (no container, no call that could give one)."""
    if isinstance(data, (cst.List, cst.Tuple)):
        return bool(data.elements) and all(
            isinstance(e, cst.Element) and isinstance(e.value, (cst.Integer, cst.Float)) for e in data.elements
        )
    if isinstance(data, (cst.ListComp, cst.GeneratorExp)):
        expressions = [node for node in descendants(data.elt) if isinstance(node, cst.BaseExpression)]
        return (
            isinstance(data.elt, cst.BinaryOperation)
            and any(isinstance(node, (cst.Integer, cst.Float)) for node in expressions)
            and all(isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Integer, cst.Float, cst.Name)) for node in expressions)
        )
    return False
