"""DL301: one operation combines a CPU tensor with a device tensor."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.describe import cited, code, device_expression, where
from devlint.analysis.events import Conflict
from devlint.rule import Rule


def claimed_by_factory_rule(conflict: Conflict) -> bool:
    """DL303 reports, at the factory, CPU tensors a torch factory made without `device=`:
    that is where the fix goes."""
    origin = conflict.cpu.value.origin
    return bool(origin is not None and origin.factory)


class MixedDevices(Rule):
    """PyTorch refuses to combine tensors on different devices ("Expected all
    tensors to be on the same device, but found at least two devices, cuda:0
    and cpu!"). A tensor known to be on the CPU meeting one on an accelerator,
    or on the device chosen at run time, fails on the GPU machine even when
    the laptop runs it. Python numbers and 0-dim CPU tensors mix freely, and
    a device tensor may be indexed with CPU indices; these are not reported.
    Nor are modules that own no state (an unweighted loss, an activation, a
    module of the file holding only numbers), code in `__init__` before the
    module can have been moved, and branches whose test shows the device is
    the CPU (`if device.type == "cpu":`).

    Also reported: a tensor computed on the device passed where PyTorch
    requires a CPU tensor (`pack_padded_sequence`'s `lengths`).
    """

    code = "DL301"
    name = "mixed-devices"
    summary = "one operation combines a tensor on the CPU with one on an accelerator or the run-time device"

    def visit_Module(self, node: cst.Module) -> None:
        for conflict in self.ctx.devices.run().conflicts:
            if conflict.cpu.value.batch is not None or claimed_by_factory_rule(conflict):
                continue
            module = self.ctx.module
            cpu, device = conflict.cpu, conflict.device
            target = device_expression(device.value.place)
            self.report(
                conflict.node,
                f"`{code(module, conflict.node, 50)}` mixes devices: `{code(module, cpu.expr)}` is {where(cpu, self.ctx.line_of)}, "
                f"but `{code(module, device.expr)}` is {where(device, self.ctx.line_of)}; put both on one device "
                f"(`.to({target})`, or create it with `device={target}`)",
                related=cited(cpu, device),
            )
        for event in self.ctx.devices.run().cpu_arguments:
            module = self.ctx.module
            shown = code(module, event.argument.expr)
            self.report(
                event.node,
                f"`{event.function}()` requires `{event.parameter}` on the CPU, but `{shown}` is "
                f"{where(event.argument, self.ctx.line_of)}; pass `{shown}.cpu()`",
                related=cited(event.argument),
            )
