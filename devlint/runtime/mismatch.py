"""A module call whose tensors are on more than one device, and the message for it."""

from __future__ import annotations

from dataclasses import dataclass
from types import FrameType

import torch
from torch import nn

from devlint.runtime.callsite import CallSite
from devlint.runtime.errors import DeviceMismatchError, Misplaced
from devlint.runtime.tensors import CallTensors, Placed

# Long input lists (a batch dict of fifty tensors) are cut in the message.
MAX_LISTED = 12


@dataclass(frozen=True)
class ModulePlace:
    """Where a module sits: its path inside the outermost model being called."""

    relative: str | None  # "encoder.layers.0"; "" for the model itself; None if not inside it
    display: str  # "model.encoder.layers.0"
    root_name: str  # "model"

    @classmethod
    def find(cls, module: nn.Module, root: nn.Module | None, root_frame: FrameType | None) -> ModulePlace:
        if root is None:
            root = module
        root_name = _name_in_frame(root, root_frame) or type(root).__name__
        if module is root:
            return cls("", root_name, root_name)
        for name, sub in root.named_modules(remove_duplicate=False):
            if sub is module:
                return cls(name, f"{root_name}.{name}", root_name)
        return cls(None, f"{type(module).__name__} (called inside {root_name}, not one of its submodules)", root_name)


def _name_in_frame(root: nn.Module, frame: FrameType | None) -> str | None:
    """The variable (or attribute of one) through which user code reached the model."""
    if frame is None:
        return None
    local_vars = frame.f_locals
    for name, value in local_vars.items():
        if value is root:
            return name
    for name, value in local_vars.items():
        if isinstance(value, nn.Module):
            for sub_name, sub in value.named_modules():
                if sub is root and sub_name:
                    return f"{name}.{sub_name}"
    return None


@dataclass(frozen=True)
class Mismatch:
    """What disagrees in one call, relative to the device the call should be on."""

    expected: torch.device
    split_module: bool  # the module's own tensors disagree with each other
    parameterless: bool  # the module has no tensors of its own
    offenders: tuple[Placed, ...]
    tensors: CallTensors

    @classmethod
    def judge(cls, tensors: CallTensors) -> Mismatch | None:
        """None when the tensors agree after all: the fast pass leaves CPU scalars to this one."""
        own_devices = tensors.own_devices()
        if own_devices:
            expected = own_devices[0]
        elif tensors.inner is not None:
            expected = tensors.inner.device
        else:
            first = next((p for p in tensors.inputs if not p.is_cpu_scalar()), None)
            if first is None:
                return None
            expected = first.device
        offenders = tuple(
            p for p in (*tensors.own, *tensors.inputs) if p.device != expected and not p.is_cpu_scalar()
        )
        if not offenders:
            return None
        return cls(expected, len(own_devices) > 1, not tensors.own, offenders, tensors)

    @classmethod
    def unexplained(cls, tensors: CallTensors) -> Mismatch:
        """An operation inside the call failed, but the call's own tensors agree."""
        inner = tensors.inner.device if tensors.inner is not None else None
        own = tensors.own_devices()
        expected = own[0] if own else inner if inner is not None else torch.device("cpu")
        return cls(expected, False, not tensors.own, (), tensors)

    def error(
        self,
        module: nn.Module,
        place: ModulePlace,
        site: CallSite | None,
        root_site: CallSite | None,
        *,
        root_inputs: tuple[str, ...] = (),
        failure: str | None = None,
        failed_at: CallSite | None = None,
    ) -> DeviceMismatchError:
        """The error for this mismatch.

        ``root_inputs`` are the paths, in the outermost call, of the tensors
        found here; ``failure`` is PyTorch's message when an operation in the
        module's code raised, and ``failed_at`` the line that ran it.
        """
        lines = [f"device mismatch in {place.display} ({type(module).__name__})"]
        expected = str(self.expected)
        own_names = {id(p) for p in self.tensors.own}
        if self.split_module:
            lines.append("  its own parameters and buffers are on more than one device:")
            lines += _table([p for p in self.tensors.own if not p.is_cpu_scalar()])
            inputs_off = [p for p in self.offenders if id(p) not in own_names]
            if inputs_off:
                lines.append(f"  and these inputs are not on {expected}, where most of them are:")
                lines += _table(inputs_off)
        elif not self.offenders:
            lines.append("  an operation in its code met tensors on two devices")
        elif self.parameterless and self.tensors.inner is not None:
            lines.append(f"  its submodules' parameters are on {expected}, but these inputs are not:")
            lines += _table(list(self.offenders))
        elif self.parameterless:
            first = next(p for p in self.tensors.inputs if not p.is_cpu_scalar())
            lines.append(
                f"  it has no parameters or buffers, and its inputs are on more than one device: "
                f"{first.where} is on {expected}, but"
            )
            lines += _table(list(self.offenders))
        else:
            owner = "parameters" if any(p.kind == "parameter" for p in self.tensors.own) else "buffers"
            lines.append(f"  its {owner} are on {expected}, but these inputs are not:")
            lines += _table(list(self.offenders))
        if failure is not None:
            lines.append(f"  PyTorch raised: {failure}")
            if failed_at is not None:
                lines.append(f"  at {failed_at.location} in {failed_at.function}: {failed_at.line}")
        if site is not None:
            lines.append(f"  called from {site.location} in {site.function}: {site.line}")
        if root_site is not None and root_site != site:
            passed = f" with {', '.join(root_inputs)}" if root_inputs else ""
            lines.append(f"  {place.root_name} called from {root_site.location}{passed}: {root_site.line}")
        lines.append("fix: " + self._fix(place))
        module_on_meta = expected == "meta" and (not self.parameterless or self.tensors.inner is not None)
        if module_on_meta:
            lines.append(
                "note: meta tensors have no data; a module built on the meta device "
                "(torch.device('meta'), init_empty_weights) must be materialized with "
                "to_empty(device=...) or load_state_dict(..., assign=True) before it is called."
            )
        offenders = tuple(
            Misplaced(
                where=p.where if id(p) not in own_names else f"{place.display}.{p.where}",
                device=str(p.device),
                shape=p.describe()[1],
                dtype=str(p.tensor.dtype),
            )
            for p in self.offenders
        )
        return DeviceMismatchError(
            "\n".join(lines),
            module_path=place.display,
            module_type=type(module).__name__,
            expected=expected,
            offenders=offenders,
            call_site=site.location if site is not None else "",
        )

    def _fix(self, place: ModulePlace) -> str:
        expected = str(self.expected)
        if not self.offenders:
            return (
                f"create the tensors this code makes on the device of the ones it meets "
                f"(`torch.zeros(..., device=x.device)`), or move them there before the operation."
            )
        if self.split_module:
            return (
                f"move the whole model after changing its tensors: `{place.root_name}.to(device)` moves "
                "every parameter and buffer, but one assigned after the move stays where it was created "
                "(create it on the module's device, or move the model again). If the module is split "
                "across devices on purpose, exempt it: check_devices(exempt=[...])."
            )
        if self.parameterless and self.tensors.inner is None:
            return f"move every input of this call to one device before the call, e.g. `tensor.to(\"{expected}\")`."
        return (
            f"move each input listed above to {expected} before the call (`tensor.to(\"{expected}\")`); "
            f"or, if the module is the one on the wrong device, move the model: `{place.root_name}.to(device)`."
        )


def _table(placed: list[Placed]) -> list[str]:
    rows = []
    for p in placed[:MAX_LISTED]:
        device, shape, dtype = p.describe()
        kind = "" if p.kind == "input" else f" ({p.kind})"
        rows.append((p.where + kind, device, f"shape {shape}", dtype))
    widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else [0, 0, 0]
    lines = [f"    {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}" for r in rows]
    if len(placed) > MAX_LISTED:
        lines.append(f"    ... and {len(placed) - MAX_LISTED} more")
    return lines

