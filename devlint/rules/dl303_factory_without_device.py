"""DL303: a tensor created without `device=` (so on the CPU), then combined with tensors on a device."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.describe import cited, code, device_expression, where
from devlint.analysis.events import Conflict
from devlint.analysis.facts import PlaceKind
from devlint.analysis.shapes import size_sources
from devlint.analysis.torchapi import takes_device
from devlint.finding import Fix
from devlint.fixes import add_device_keyword, enclosing_functions, parent_of
from devlint.rule import Rule
from devlint.rules.dl301_mixed_devices import claimed_by_factory_rule


class FactoryWithoutDevice(Rule):
    """`torch.zeros(...)`, `torch.arange(...)`, `torch.tensor([...])` and the
    other factories create their tensor on the CPU unless given `device=`.
    Combined with the inputs or parameters of a model, with a tensor on the
    device chosen at run time, or with a tensor parameter of a function
    (whose caller may pass it on an accelerator), the fresh tensor breaks the
    code on a GPU: the classic RNN hidden state, attention mask and index
    bugs. The same holds for a function that returns such a tensor on one path
    and a tensor on its input's device on another. Reported at the factory,
    where the fix goes: `device=x.device`, or `x.new_zeros(...)`.
    """

    code = "DL303"
    name = "factory-without-device"
    summary = "a tensor created without `device=` (so on the CPU) and combined with tensors on an accelerator, the run-time device or a caller's inputs"
    fix = "safe"

    def visit_Module(self, node: cst.Module) -> None:
        analysis = self.ctx.devices.run()
        reported: set[int] = set()
        for conflict in analysis.conflicts:
            if conflict.cpu.value.batch is not None or not claimed_by_factory_rule(conflict):
                continue
            origin = conflict.cpu.value.origin
            assert origin is not None
            if id(origin.node) not in reported:
                reported.add(id(origin.node))
                self._report_conflict(conflict, origin.node)
        for split in analysis.split_returns:
            factory = split.factory.expr
            if id(factory) in reported:
                continue
            reported.add(id(factory))
            place = split.other.value.place
            other = code(self.ctx.module, split.other.expr)
            # A parameter is in scope wherever the factory is: its device is the fix.
            source = place.name if place.kind is PlaceKind.FOLLOWS and place.name else None
            target = f"`device={source}.device`" if source else (f"`device={other}.device`" if other.isidentifier() else "the device of its other result")
            self.report(
                factory,
                f"`{code(self.ctx.module, factory)}` creates a CPU tensor (no `device=`) that `{split.function}()` returns where its "
                f"other path returns `{other}` {where(split.other, self.ctx.line_of)}: create it with {target}",
                _fix(self.ctx, factory, source),
            )

    def _report_conflict(self, conflict: Conflict, factory: cst.CSTNode) -> None:
        module = self.ctx.module
        other = code(module, conflict.device.expr)
        place = conflict.device.value.place
        source = next(iter(size_sources(factory, lengths=False)), None)
        # What it meets may be a name of another function (`__call__`'s input, a window built in `__init__`).
        together = next(enclosing_functions(self.ctx, factory), None) is next(enclosing_functions(self.ctx, conflict.node), None)
        if source is None and place.kind is PlaceKind.FOLLOWS and other == place.name and together:
            source = other  # the function's own parameter: in scope where the factory is
        elsewhere = False  # the name it meets is not in scope where it is created
        if source is not None:
            target = f"{source}.device"
        elif place.kind is PlaceKind.DEVICE and not place.name.startswith("<") and place.name:
            target = device_expression(place)
        elif other.isidentifier():
            target = f"{other}.device"
            elsewhere = not together
        else:
            target = None
        qualified = self.ctx.qualify(factory.func) if isinstance(factory, cst.Call) else None
        if target is None:
            advice = "create it on the device of the tensors it meets (`device=x.device` for a tensor `x`)"
        elif elsewhere:
            advice = f"move it there where they meet, with `.to({target})`"
        elif qualified is not None and not takes_device(qualified):
            advice = f"move it there with `.to({target})`"  # `torch.from_numpy`, the legacy typed constructors
        else:
            advice = f"create it with `device={target}`"
        self.report(
            factory,
            f"`{code(module, factory)}` creates a CPU tensor (no `device=`) that meets `{other}` "
            f"{where(conflict.device, self.ctx.line_of)} at line {self.ctx.line_of(conflict.node)}: {advice}",
            _fix(self.ctx, factory, source),
            related=[*cited(conflict.device), (conflict.node, f"meets `{other}`")],
        )


def _fix(ctx, factory: cst.CSTNode, source: str | None) -> Fix | None:  # noqa: ANN001 - FileContext
    if source is None or not isinstance(factory, cst.Call) or _chained_with_values(ctx, factory):
        return None
    return add_device_keyword(ctx, factory, f"{source}.device")


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


def _chained_with_values(ctx, factory: cst.Call) -> bool:  # noqa: ANN001 - FileContext
    """`torch.zeros(n).scatter_(1, index.cpu(), 1)`: a method of the new tensor given something
    other than literals, which may be a CPU tensor it would then meet on the device (torchreid's
    `CrossEntropyLabelSmooth`: the fix made CUDA `scatter_` reject the CPU index)."""
    member = parent_of(ctx, factory)
    call = parent_of(ctx, member) if isinstance(member, cst.Attribute) else None
    return isinstance(call, cst.Call) and call.func is member and any(not isinstance(arg.value, _LITERALS) for arg in call.args)
