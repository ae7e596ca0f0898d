"""What happens to values handed to code the analysis cannot see."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.evaluation import Arguments, Evaluation
from devlint.analysis.events import Operand
from devlint.analysis.facts import Kind
from devlint.names import dotted_name


def escape(run: Evaluation, node: cst.Call, args: Arguments) -> None:
    """A module handed to code we cannot see may be moved there; forget where it is.

    Before forgetting: an opaque call that receives a module on the device and an
    unmoved batch (`writer.add_graph(model, images)`) runs one on the other.
    """
    # A module, or what may be one (`model = model.to(device)` on a parameter of unknown kind).
    modules = [(expr, value) for expr, value in args if value.kind in (Kind.MODULE, Kind.UNKNOWN) and value.place.on_accelerator and not value.weak]
    batches = [(expr, value) for expr, value in args if value.batch is not None]
    has_device = any(value.kind is Kind.DEVICE for _, value in args)
    if modules and batches and not has_device:
        run.conflict(node, Operand(batches[0][0], batches[0][1]), Operand(modules[0][0], modules[0][1], "module"))
    forget_modules(run, args)


def forget_modules(run: Evaluation, args: Arguments) -> None:
    """`add_hook_to_module(model, hook)`, `dispatch_model(model, ...)`: the callee may place it."""
    for expr, value in args:
        if value.kind is Kind.MODULE:
            name = dotted_name(expr) if isinstance(expr, cst.BaseExpression) else None
            if name is not None and name in run.env:
                run.env[name] = replace(value, place=F.UNKNOWN_PLACE)
