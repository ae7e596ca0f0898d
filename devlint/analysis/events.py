"""What the device analysis observed, for rules to judge: the analysis never reports."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devlint.analysis.facts import Value


@dataclass(frozen=True)
class Operand:
    expr: cst.CSTNode  # the expression as written
    value: Value
    role: str = "operand"  # "module" for the called module, "operand" otherwise


@dataclass(frozen=True)
class Conflict:
    """One operation combines a CPU value with an accelerator / run-time device value."""

    node: cst.CSTNode  # the operation (a call, a binary operator, a subscript)
    cpu: Operand
    device: Operand
    function: str  # qualified name of the enclosing function ("" at module level)
    in_forward: bool  # inside a method of an nn.Module subclass


@dataclass(frozen=True)
class DiscardedMove:
    """`t.to(device)` / `t.cuda()` / `t.cpu()` as a statement on a known tensor."""

    node: cst.Call
    target: cst.BaseExpression  # the tensor expression (`X` in `X.cuda()`)
    method: str
    parameter: bool = False  # the target is an `nn.Parameter` attribute of the module: no plain tensor can replace it


@dataclass(frozen=True)
class NumpyOnDevice:
    """A tensor that may be on an accelerator handed to numpy."""

    node: cst.Call
    tensor: Operand
    via: str  # ".numpy()" or "np.asarray"


@dataclass(frozen=True)
class SplitReturn:
    """A function returns a fresh CPU tensor on one path and an input-following tensor on another."""

    factory: Operand
    other: Operand
    function: str


@dataclass(frozen=True)
class CpuArgumentOnDevice:
    """A tensor that is on an accelerator passed where PyTorch requires a CPU tensor
    (`pack_padded_sequence(x, lengths)`: "'lengths' argument should be a 1D CPU int64 tensor")."""

    node: cst.Call
    argument: Operand
    parameter: str  # "lengths"
    function: str  # "pack_padded_sequence"


@dataclass(frozen=True)
class OutgoingCall:
    """A call of a name the file imports, with the tensors it passes: the callee, in another file
    of the project, takes its callers' devices from these (project/index.py)."""

    callee: str  # qualified, as the file's imports name it
    positional: tuple[Value | None, ...]  # None: nothing known of it (not a tensor)
    keywords: tuple[tuple[str, Value | None], ...]
    node: cst.Call
