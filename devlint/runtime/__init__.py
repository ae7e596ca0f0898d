"""Runtime device checks: every nn.Module call has its tensors on one device.

    import devlint.runtime as dlr

    with dlr.check_devices():          # every nn.Module call is checked
        loss = criterion(model(x), y)

The names below are loaded on first use, so that importing this package (which
the pytest plugin does in every pytest run) does not import torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from devlint.runtime.errors import (
    DeviceCheckSkippedWarning,
    DeviceMismatchError,
    DeviceMismatchWarning,
    Misplaced,
)

if TYPE_CHECKING:
    from devlint.runtime.check import DeviceCheck, check_devices, disable, enable, is_enabled
    from devlint.runtime.simulate import simulate_cuda

_LAZY = {
    "DeviceCheck": "devlint.runtime.check",
    "check_devices": "devlint.runtime.check",
    "enable": "devlint.runtime.check",
    "disable": "devlint.runtime.check",
    "is_enabled": "devlint.runtime.check",
    # Simulated CUDA lives in devlint.runtime.simulate (issue 6).
    "simulate_cuda": "devlint.runtime.simulate",
}

__all__ = [
    "DeviceCheck",
    "DeviceCheckSkippedWarning",
    "DeviceMismatchError",
    "DeviceMismatchWarning",
    "Misplaced",
    "check_devices",
    "disable",
    "enable",
    "is_enabled",
    "simulate_cuda",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'devlint.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
