"""Where an operation's result lives, given its operands; and when the operands conflict.

PyTorch runs an operation on the device of its tensor operands and refuses
operands on two devices ("Expected all tensors to be on the same device"),
except Python numbers and 0-dim CPU tensors, which mix with anything.
"""

from __future__ import annotations

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.evaluation import Arguments, Evaluation
from devlint.analysis.events import Operand
from devlint.analysis.facts import CPU, INPUT_DEVICE, MODULE_DEVICE, Kind, PlaceKind, Value


def placed(value: Value) -> bool:
    """A tensor (or maybe one) on a known device. Modules handed to a function as
    arguments are not operands (`register_parametrization(self.linear, "weight", L2Norm())`);
    a called module is checked as the call's own `module`."""
    return value.kind in (Kind.TENSOR, Kind.UNKNOWN) and value.place.known


def _caller_placed(value: Value) -> bool:
    """A tensor whose device is a parameter's: the caller chooses it."""
    return value.kind is Kind.TENSOR and value.place.kind is PlaceKind.FOLLOWS and not value.weak


def combine(run: Evaluation, node: cst.CSTNode, operands: Arguments, module: Operand | None = None) -> Value:
    """The place of an operation's result; records a conflict when the CPU meets a device.

    An operation that mixes devices raises: its result is UNREACHED, so that one root cause
    is one finding and the paths that crashed have no say where paths meet.
    """
    if any(value.kind is Kind.UNREACHED for _, value in operands):
        return F.UNREACHED
    tensors = [Operand(expr, value) for expr, value in operands if placed(value)]
    if module is not None and module.value.place.known:
        tensors.insert(0, module)
    cpu = [op for op in tensors if op.value.place == CPU and not op.value.scalar and not op.value.weak]
    device = [op for op in tensors if op.value.place.on_accelerator and not op.value.weak and op.value.place not in run.cpu_places]
    if cpu and not device and any(op.value.origin is not None and op.value.origin.factory for op in cpu):
        # Inside a module, what a callable it holds makes of its inputs (`self.loss_func(out, y)`)
        # is where those inputs are: a module's output lives on its inputs' device.
        device = [op for op in tensors if op.value.weak and op.value.place in (INPUT_DEVICE, MODULE_DEVICE)]
        cpu = [op for op in cpu if op.value.origin is not None and op.value.origin.factory] if device else cpu
    if cpu and device:
        if run.constructing and all(op.value.place == MODULE_DEVICE for op in device):
            # A module's own state sits where `__init__` built it until someone moves the
            # module: a dummy pass (`self.conv(torch.zeros(1, 3, 32, 32))`) runs on the CPU.
            return F.UNKNOWN
        batch = [op for op in cpu if op.value.batch is not None]
        run.conflict(node, (batch or cpu)[0], device[0])
        return F.UNREACHED
    fresh = [op for op in cpu if op.value.origin is not None and op.value.origin.factory]
    if fresh and not device:
        # A function's tensor parameter lives wherever its caller put it, possibly on an
        # accelerator: a tensor the function makes on the CPU cannot meet it.
        inputs = [Operand(expr, value) for expr, value in operands if _caller_placed(value)]
        if inputs:
            run.conflict(node, fresh[0], inputs[0])
            return F.UNREACHED
    split = next((Operand(expr, value) for expr, value in operands if value.cpu_path is not None and not value.weak), None)
    if split is not None:
        # A tensor that is a fresh CPU tensor on one path meets one on the device (or the caller's).
        # Two tensors both fresh on the same kind of path (`if empty: a, b = zeros(), zeros()`)
        # are correlated, not a conflict: only a tensor placed on every path counts.
        candidates = [Operand(e, v) for e, v in operands if e is not split.expr]
        if module is not None:
            candidates.insert(0, module)  # `self.embed(symbol)`: the layer's weights are where the module is
        others = [op for op in candidates if not op.value.weak and op.value.cpu_path is None and (op.value.place.on_accelerator or _caller_placed(op.value))]
        if others:
            fresh = Value(Kind.TENSOR, CPU, split.value.cpu_path)
            run.conflict(node, Operand(split.expr, fresh), others[0])
            return F.UNREACHED
    # In a branch that only runs where `device` is the CPU, a tensor on `device` is a CPU tensor.
    tensors = [Operand(op.expr, op.value.at(CPU)) if op.value.place in run.cpu_places else op for op in tensors]
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
        cpu_path=split.value.cpu_path if split is not None else None,
    )


def write_into(run: Evaluation, node: cst.CSTNode, output: Operand, inputs: Arguments) -> None:
    """An in-place operation (`total += x`, `t.add_(x)`) writes into its first operand: a CPU
    tensor, even a 0-dim one, cannot take the result of tensors on an accelerator."""
    if output.value.kind is not Kind.TENSOR or output.value.place != CPU or output.value.weak:
        return
    for expr, value in inputs:
        if value.kind in (Kind.TENSOR, Kind.UNKNOWN) and value.place.on_accelerator and not value.weak and value.place not in run.cpu_places:
            run.conflict(node, output, Operand(expr, value))
            return
