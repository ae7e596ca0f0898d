"""DL303: a tensor created without `device=` inside a module, then combined with its inputs."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.describe import code
from devlint.analysis.shapes import size_sources
from devlint.fixes import add_device_keyword
from devlint.rule import Rule
from devlint.rules.dl301_mixed_devices import claimed_by_factory_rule


class FactoryWithoutDevice(Rule):
    """`torch.zeros(...)`, `torch.arange(...)` and the other factories create
    their tensor on the CPU unless given `device=`. Inside `forward()` (and the
    helpers it calls) the inputs and parameters are on the model's device, so
    the fresh tensor breaks the model on a GPU — the classic RNN hidden state
    or attention mask bug. The same holds for a function that returns such a
    tensor on one path and a tensor on its input's device on another.
    Reported at the factory, where the fix goes: `device=x.device`, or
    `x.new_zeros(...)`.
    """

    code = "DL303"
    name = "factory-without-device"
    summary = "a tensor created inside `forward()` without `device=` (so on the CPU) and combined with the inputs or parameters"
    fix = "safe"

    def visit_Module(self, node: cst.Module) -> None:
        analysis = self.ctx.devices.run()
        reported: set[int] = set()
        module = self.ctx.module
        for conflict in analysis.conflicts:
            if conflict.cpu.value.batch is not None or not claimed_by_factory_rule(conflict):
                continue
            origin = conflict.cpu.value.origin
            assert origin is not None
            if id(origin.node) in reported:
                continue
            reported.add(id(origin.node))
            other = code(module, conflict.device.expr)
            source = next(iter(size_sources(origin.node)), None)
            if source is not None:
                advice = f"create it with `device={source}.device`"
            elif _plain(other):
                advice = f"create it with `device={other}.device`"
            else:
                advice = "create it on the inputs' device (`device=x.device` for an input `x`)"
            self.report(
                origin.node,
                f"`{code(module, origin.node)}` creates a CPU tensor (no `device=`) that meets `{other}` on the model's "
                f"device at line {self.ctx.line_of(conflict.node)}: {advice}",
                _fix(self.ctx, origin.node, source),
            )
        for split in analysis.split_returns:
            node_ = split.factory.expr
            if id(node_) in reported:
                continue
            reported.add(id(node_))
            param = split.other.value.place.name
            self.report(
                node_,
                f"`{code(module, node_)}` creates a CPU tensor (no `device=`) that `{split.function}()` returns where its "
                f"other path returns a tensor on `{param}`'s device: create it with `device={param}.device`",
                _fix(self.ctx, node_, param),
            )



def _plain(expression: str) -> str | None:
    """A bare variable name (an attribute such as `self.proj` may be a module, with no `.device`)."""
    return expression if expression.isidentifier() else None


def _fix(ctx, factory: cst.CSTNode, source: str | None):  # noqa: ANN001, ANN202
    if source is None or not isinstance(factory, cst.Call):
        return None
    return add_device_keyword(ctx, factory, f"{source}.device")
