"""DL201: a batch from a CPU loader used with the device without being moved."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.describe import cited, code, device_expression, where
from devlint.rule import Rule
from devlint.snippet import one_line


class UnmovedBatch(Rule):
    """A DataLoader yields CPU tensors. Feeding them to a model on the GPU, or
    to a loss together with GPU outputs, raises "Expected all tensors to be on
    the same device" on the cluster; on a CPU-only laptop it runs, so the bug
    ships. Batches from `accelerator.prepare(...)` loaders and Lightning's
    `training_step(self, batch, ...)` arrive already moved and are not
    reported; neither is a script that never places anything on a device.
    """

    code = "DL201"
    name = "unmoved-batch"
    summary = "a batch from a loader reaches a model, a loss or a device tensor without being moved to the device"

    def visit_Module(self, node: cst.Module) -> None:
        for conflict in self.ctx.devices.run().conflicts:
            batch = conflict.cpu.value.batch
            if batch is None:
                continue
            module = self.ctx.module
            name = code(module, conflict.cpu.expr)
            device = conflict.device
            target = device_expression(device.value.place)
            lives = "lives" if device.role == "module" or device.value.kind.value == "module" else "is"
            self.report(
                conflict.node,
                f"`{name}` {batch.what} (line {self.ctx.line_of(batch.node)}) on the CPU, but `{code(module, device.expr)}` "
                f"{lives} {where(device, self.ctx.line_of)}: move it first with `{_move(module, conflict.cpu.expr, target)}`",
                related=[(batch.node, f"`{name}` {batch.what}"), *cited(device)],
            )


def _move(module: cst.Module, expr: cst.BaseExpression, target: str) -> str:
    """The suggested move, as valid Python: an assignment where the expression can be assigned
    to (`data = data.to(device)`), else the moved expression (`data.reshape(-1, 4).to(device)`)."""
    text = one_line(module.code_for_node(expr))
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return f"{text} = {text}.to({target})"
    if not isinstance(expr, cst.Call) and not expr.lpar:
        text = f"({text})"
    return f"{text}.to({target})"
