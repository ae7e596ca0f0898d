"""How code names its devices and loaders: the conventions the device analysis reads names with.

A variable or parameter called `device` (or `dev`, `*_device`) holds the device
chosen at run time, and one called `*loader` yields batches: the conventions of
PyTorch's own examples and documentation, extended by a project's configured
names (`device-variables`, `loaders`). What a *function* does is never read
from its name: it is read from its code, or from the torch and framework data.
"""

from __future__ import annotations

import re
from typing import Protocol


class NameSettings(Protocol):
    """The configured names that teach the analysis a project's own vocabulary."""

    device_variables: tuple[str, ...]
    loaders: tuple[str, ...]
    move_helpers: tuple[str, ...]


_DEVICE_NAME = re.compile(r"^(device|dev|[a-z0-9_]*_device|device_[0-9]+|torch_device|target_device)$")
_NOT_DEVICE = frozenset({"num_device", "n_device", "use_device", "device_type", "device_count", "device_name", "device_ids"})
_LOADER_NAME = re.compile(r"(loader|dataloader|_iter$|^iterator$|_iterator$|batches$)", re.IGNORECASE)


def is_device_name(name: str, settings: NameSettings) -> bool:
    """`device`, `self.device`'s leaf, `args.device`, `target_device`, or a configured name."""
    if name in settings.device_variables:
        return True
    lowered = name.lower()
    if "dev" not in lowered or "cpu" in lowered:
        return False  # `cpu_device` names the CPU, not the device chosen at run time
    return lowered not in _NOT_DEVICE and _DEVICE_NAME.match(lowered) is not None


def is_loader_name(name: str, settings: NameSettings) -> bool:
    if name in settings.loaders:
        return True
    lowered = name.lower()
    if not any(word in lowered for word in ("load", "iter", "batches")):
        return False
    return _LOADER_NAME.search(name) is not None


# Parameter names of configuration objects: `cfg.device` is the run-time device, not a tensor's.
CONFIG_NAMES = frozenset({"cfg", "config", "args", "opt", "opts", "options", "hparams", "hp", "conf", "settings", "params", "flags"})
