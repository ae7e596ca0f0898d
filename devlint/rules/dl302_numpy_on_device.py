"""DL302: `.numpy()` / `np.asarray(t)` on a tensor that may be on an accelerator."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.describe import cited, code, where
from devlint.analysis.facts import INPUT_DEVICE, Value
from devlint.analysis.torchapi import ARRAY_LIBRARIES
from devlint.fixes import append_cpu, cpu_before_numpy, postfix_ready
from devlint.rule import Rule


class NumpyOnDevice(Rule):
    """numpy cannot read GPU memory: `t.numpy()` raises "can't convert cuda:0
    device type tensor to numpy" on the cluster, while the laptop (CPU) runs
    it. Convert with `.cpu()` first (`.detach().cpu().numpy()`), or take
    `.item()` for a scalar.
    """

    code = "DL302"
    name = "numpy-on-device"
    summary = "`.numpy()` (or `np.asarray(t)`, `np.array(t)`) on a tensor that may be on an accelerator, without `.cpu()`"
    # `.numpy()`, and every library whose functions read their arguments through numpy (a file
    # using one imports it by name: `import scipy.stats`, `from sklearn import metrics`).
    needles = tuple(sorted({"numpy", *(library.split(".")[0] for library in ARRAY_LIBRARIES)}))
    fix = "safe"

    def visit_Module(self, node: cst.Module) -> None:
        for event in self.ctx.devices.run().numpy:
            tensor = code(self.ctx.module, event.tensor.expr)
            fix = None
            if event.tensor.value.kind.value == "seq":
                advice = "convert each tensor with `.item()` (or `.cpu()`) before collecting it"
                what = f"`{tensor}`, which {where(event.tensor, self.ctx.line_of)}"
            else:
                # A shortened snippet with `.cpu()` after it would read as code that is not there.
                receiver = tensor if postfix_ready(event.tensor.expr) else f"({tensor})"
                shown = f"`{receiver}.cpu()`" if tensor == code(self.ctx.module, event.tensor.expr, 10_000) else "`.cpu()`"
                advice = f"convert with {shown} first (or `.item()` for a number)"
                what = f"`{tensor}`, which is {where(event.tensor, self.ctx.line_of)}"
                if event.via == ".numpy()":
                    fix = cpu_before_numpy(self.ctx, event.node)  # what has `.numpy()` and lives on a device is a tensor
                elif not _assumed_input(event.tensor.value):
                    fix = append_cpu(self.ctx, event.tensor.expr)
            self.report(
                event.node, f"`{event.via}` on {what}: numpy cannot read accelerator memory; {advice}", fix, cited(event.tensor)
            )


def _assumed_input(value: Value) -> bool:
    """A module's input the analysis takes to be a tensor without having seen it used as one: it
    may be a count (ALBEF's `k`, handed on to `np.arange`), and an int has no `.cpu()`."""
    return value.place == INPUT_DEVICE and value.origin is None
