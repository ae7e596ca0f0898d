"""DL202: `t.to(device)` as a statement: tensors are not moved in place."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.describe import code
from devlint.fixes import assign_result
from devlint.names import dotted_name
from devlint.rule import Rule


class DiscardedMove(Rule):
    """`Tensor.to()`, `.cuda()` and `.cpu()` return a new tensor and leave the
    original where it was; the statement does nothing. (`nn.Module.to()` moves
    the module in place, so `model.to(device)` is correct and never reported;
    when devlint cannot tell a tensor from a module, it stays silent.)
    """

    code = "DL202"
    name = "discarded-move"
    summary = "`t.to(...)` / `t.cuda()` / `t.cpu()` on a tensor whose result is discarded"
    needles = (".to(", ".cuda(", ".cpu(")
    fix = "safe"

    def visit_Module(self, node: cst.Module) -> None:
        for event in self.ctx.devices.run().discarded:
            target = code(self.ctx.module, event.target)
            call = code(self.ctx.module, event.node, 60)
            if event.parameter:
                # Module.__setattr__ refuses a plain tensor for a parameter's name (TypeError).
                advice = f"`{target}` is an `nn.Parameter`, which takes no plain tensor back: convert or move the module itself (its `.to()` changes its parameters in place)"
            elif dotted_name(event.target) is not None:
                advice = f"assign it: `{target} = {call}`"
            else:
                advice = "assign the result to a variable and use that"
            self.report(
                event.node,
                f"`{call}` returns a moved copy that is thrown away: tensors are not moved in place, "
                f"so `{target}` stays where it was; {advice}",
                assign_result(self.ctx, event.node),
            )
