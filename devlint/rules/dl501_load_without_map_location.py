"""DL501: `torch.load` without `map_location`."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.torchnames import LOAD_FUNCTIONS
from devlint.fixes import add_map_location
from devlint.rule import Rule


class LoadWithoutMapLocation(Rule):
    """A checkpoint saved from GPU tensors restores them onto the GPU: on a
    CPU-only machine `torch.load` raises "Attempting to deserialize object on
    a CUDA device". `map_location` makes the load portable.

    A file that never names an accelerator (pure CPU code saving and reloading
    its own checkpoints) is not reported.
    """

    code = "DL501"
    name = "load-without-map-location"
    summary = "`torch.load(...)` without `map_location` fails on CPU-only machines for GPU checkpoints"
    needles = ("load",)
    # Unsafe: the tensors then load where map_location says, not where they were saved.
    fix = "unsafe"

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualify(node.func) not in LOAD_FUNCTIONS:
            return
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) >= 2 or any(arg.star == "**" for arg in node.args):
            return
        if any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in node.args):
            return
        if not self.ctx.may_use_accelerator:
            return
        call = self.ctx.module.code_for_node(node.func)
        self.report(
            node,
            f"`{call}(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a machine without one; "
            "pass `map_location=device` (or `map_location=\"cpu\"`)",
            add_map_location(self.ctx, node),
        )
