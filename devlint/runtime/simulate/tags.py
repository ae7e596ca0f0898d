"""Which simulated device a tensor lives on, recorded on its storage.

The data of a simulated CUDA tensor stays in CPU memory; only a tag says that
it "lives" on ``cuda:N``. The tag is an attribute of the tensor's
``UntypedStorage`` object rather than of the tensor: PyTorch keeps one Python
storage object per storage for as long as the storage lives, so the tag is
shared by every view, survives ``nn.Parameter(t)``, ``deepcopy`` (which goes
through ``clone``) and ``Module.to``'s ``param.data = ...`` swap, and dies
with the memory it describes (no registry keyed by address that a new
allocation could inherit).

The functions here run inside ``__torch_function__`` where the simulation
mode is off, so they see real devices and real storages.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

import torch

TAG = "_devlint_simulated_device"

CPU = torch.device("cpu")


def device_of(t: torch.Tensor) -> torch.device:
    """The device ``t`` is on in the simulation (its real one if untagged)."""
    try:
        tag = getattr(t.untyped_storage(), TAG, None)
    except (RuntimeError, NotImplementedError):
        # sparse and other storage-less layouts cannot be tagged
        return t.device
    return t.device if tag is None else tag


def place(t: torch.Tensor, device: torch.device) -> None:
    """Record that ``t`` (and every tensor sharing its storage) is on ``device``.

    Placing on the CPU does nothing: a tag is never removed, because other
    tensors may share the storage; moves to the CPU make copies instead.
    """
    if device.type == "cpu":
        return
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return
    place_storage(storage, device)


def place_storage(storage: torch.UntypedStorage, device: torch.device) -> None:
    """Record that ``storage`` is on the simulated ``device`` (not the CPU)."""
    if getattr(storage, TAG, None) == device:
        return
    setattr(storage, TAG, device)
    MEMORY.allocate(storage, device)


def storage_device(storage: object) -> torch.device | None:
    """The simulated device of an untyped or typed storage, None if it has no tag."""
    untyped = getattr(storage, "_untyped_storage", storage)
    return getattr(untyped, TAG, None)


class MemoryLedger:
    """Bytes held by live simulated-CUDA storages, per device index.

    Lets ``torch.cuda.memory_allocated()`` and friends answer with numbers
    that move the way a training script expects (up when tensors are moved,
    down when they are freed), without touching real CUDA.
    """

    def __init__(self) -> None:
        self.allocated: defaultdict[int, int] = defaultdict(int)
        self.peak: defaultdict[int, int] = defaultdict(int)
        self._refs: dict[int, weakref.ref] = {}

    def allocate(self, storage: torch.UntypedStorage, device: torch.device) -> None:
        key = id(storage)
        if key in self._refs:
            return
        index = device.index or 0
        size = storage.nbytes()
        self.allocated[index] += size
        self.peak[index] = max(self.peak[index], self.allocated[index])

        def release(_ref: weakref.ref, key: int = key, index: int = index, size: int = size) -> None:
            self._refs.pop(key, None)
            self.allocated[index] -= size

        self._refs[key] = weakref.ref(storage, release)

    def reset_peak(self, index: int) -> None:
        self.peak[index] = self.allocated[index]


MEMORY = MemoryLedger()
