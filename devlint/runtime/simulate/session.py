"""``simulate_cuda()``: run a block of code as if a CUDA GPU were present."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import torch

from .machine import Patches, SimulatedMachine, install
from .mode import SimulatedCudaMode


class _Simulation:
    def __init__(self, machine: SimulatedMachine, mode: SimulatedCudaMode, patches: Patches) -> None:
        self.machine = machine
        self.mode = mode
        self.patches = patches
        self.depth = 1


_LOCK = threading.Lock()
_ACTIVE: _Simulation | None = None


class simulate_cuda(contextlib.ContextDecorator):  # noqa: N801 - reads like a function, as contextlib's do
    """Simulate ``devices`` CUDA GPUs on the CPU for the duration of a block.

    ``torch.cuda.is_available()`` answers True, tensors created on or moved
    to ``"cuda"`` keep their data on the CPU but report ``cuda:N``, and any
    operation that real CUDA would refuse (a CPU tensor meeting a CUDA one,
    ``.numpy()`` on a CUDA tensor, CUDA indices into a CPU tensor) raises
    ``DeviceMismatchError`` naming the operation, the tensors, the module
    and the line. Numbers are computed on the CPU, so results are the same
    as a plain CPU run.

    Use as ``with simulate_cuda(): ...`` or as a decorator. Everything
    patched is restored on exit, also when the block raises. Nesting reuses
    the outer simulation.
    """

    def __init__(self, devices: int = 1) -> None:
        if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
            raise ValueError(f"simulate_cuda(devices=...) needs a positive int, got {devices!r}")
        self.devices = devices
        self._owner = False

    def _recreate_cm(self) -> simulate_cuda:
        return type(self)(self.devices)

    def __enter__(self) -> SimulatedMachine:
        global _ACTIVE
        with _LOCK:
            if _ACTIVE is not None:
                if _ACTIVE.machine.devices != self.devices:
                    raise ValueError(
                        f"already simulating {_ACTIVE.machine.devices} CUDA device(s); "
                        f"a nested simulate_cuda(devices={self.devices}) cannot change that"
                    )
                _ACTIVE.depth += 1
                return _ACTIVE.machine
            machine = SimulatedMachine(self.devices)
            mode = SimulatedCudaMode(machine)
            patches = install(machine, mode, mode.active)
            try:
                mode.__enter__()
            except BaseException:
                patches.restore()
                raise
            _ACTIVE = _Simulation(machine, mode, patches)
            self._owner = True
            return machine

    def __exit__(self, *exc: Any) -> bool:
        global _ACTIVE
        with _LOCK:
            active = _ACTIVE
            if active is None:
                return False
            active.depth -= 1
            if active.depth > 0:
                return False
            _ACTIVE = None
            try:
                _remove_mode(active.mode)
            finally:
                active.patches.restore()
        return False


def is_simulating() -> bool:
    return _ACTIVE is not None


def active_machine() -> SimulatedMachine | None:
    """The machine being simulated now, if any."""
    active = _ACTIVE
    return None if active is None else active.machine


def _remove_mode(mode: SimulatedCudaMode) -> None:
    """Pop ``mode`` from this thread's function-mode stack, keeping the modes above it.

    ``torch.set_default_device("cuda")`` or a ``with torch.device(...)``
    left open inside the block pushes a mode above ours.
    """
    above = []
    while torch._C._len_torch_function_stack() > 0:
        top = torch._C._pop_torch_function_stack()
        if top is mode:
            break
        above.append(top)
    for other in reversed(above):
        torch._C._push_on_torch_function_stack(other)
