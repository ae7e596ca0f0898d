"""Where the tensors of one module call are: its own parameters and buffers, and its inputs.

Two passes over the same data. ``call_is_consistent`` runs before every module
call and only answers yes or no, so it allocates nothing and stops at the first
disagreement. ``CallTensors.collect`` runs only after a disagreement, to name
every tensor by the path a user would type to reach it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence

# Inputs nested deeper than this are not looked at; real calls nest two or
# three levels (a batch dict of lists of tensors), and the limit keeps a
# self-referencing structure from recursing forever.
MAX_DEPTH = 6


def _is_cpu_scalar(t: Tensor, device: torch.device) -> bool:
    # PyTorch lets a 0-dim CPU tensor take part in an op on any device
    # (it is read as a scalar), so such a tensor never disagrees.
    return device.type == "cpu" and t.dim() == 0


class _Disagree(Exception):
    """Raised inside the fast pass to leave nested loops at once."""


def _walk_fast(obj: Any, device: torch.device | None, depth: int) -> torch.device | None:
    """Return the device the tensors in ``obj`` agree on so far; raise _Disagree if they do not."""
    if isinstance(obj, Tensor):
        d = obj.device
        if device is not None and d != device:
            raise _Disagree
        return d
    if depth >= MAX_DEPTH:
        return device
    cls = type(obj)
    if cls is PackedSequence:
        for item in _on_device_parts(obj):
            device = _walk_fast(item, device, depth + 1)
    elif cls is tuple or cls is list or isinstance(obj, (tuple, list)):
        for item in obj:
            device = _walk_fast(item, device, depth + 1)
    elif isinstance(obj, Mapping):
        for item in obj.values():
            device = _walk_fast(item, device, depth + 1)
    elif getattr(cls, "__dataclass_fields__", None) is not None and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            device = _walk_fast(getattr(obj, f.name, None), device, depth + 1)
    return device


def call_is_consistent(
    module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any], parameterless: bool
) -> bool:
    """True when the module's own tensors and every input tensor share one device.

    False means "look closer": this pass runs before every module call, so it
    does not spend time on the CPU-scalar exception (``device.type`` alone
    costs more than the rest of the pass); ``Mismatch.judge`` decides.
    ``parameterless`` says whether a module without parameters or buffers
    should still check that its inputs agree with each other.
    """
    # _parameters / _buffers directly: parameters(recurse=False) costs twice as
    # much, and only the module's own tensors matter here.
    params = module._parameters
    buffers = module._buffers
    if not params and not buffers:
        # Containers, activations, pooling: most calls in a model have no
        # tensors of their own and one tensor in; nothing can disagree there.
        if not parameterless or (not kwargs and len(args) == 1 and type(args[0]) is Tensor):
            return True
    device: torch.device | None = None
    for t in params.values():
        if t is not None:
            if device is None:
                device = t.device
            elif t.device != device:
                return False
    for t in buffers.values():
        if t is not None:
            if device is None:
                device = t.device
            elif t.device != device:
                return False
    if device is None and not parameterless:  # parameters and buffers all None
        return True
    try:
        for a in args:
            cls = type(a)
            if cls is Tensor or cls is nn.Parameter:
                if device is None:
                    device = a.device
                elif a.device != device:
                    return False
            elif a is not None and cls not in _SCALARS:
                device = _walk_fast(a, device, 1)
        for a in kwargs.values():
            if a is not None and type(a) not in _SCALARS:
                device = _walk_fast(a, device, 1)
    except _Disagree:
        return False
    return True


_SCALARS = frozenset({int, float, bool, str, bytes, complex})


def _on_device_parts(packed: PackedSequence) -> tuple[Any, ...]:
    # batch_sizes is always a CPU tensor, whatever the data's device: the RNN
    # kernels read it from host memory.
    return packed.data, packed.sorted_indices, packed.unsorted_indices


# Inputs of torch.nn layers that PyTorch wants (or accepts) as integer tensors
# in host memory next to data on an accelerator: cuDNN's CTC reads targets and
# lengths from the CPU, and the native CUDA kernel copies them itself.
HOST_ARGUMENTS: dict[type, tuple[tuple[int, str], ...]] = {
    nn.CTCLoss: ((1, "targets"), (2, "input_lengths"), (3, "target_lengths")),
}


def without_host_arguments(
    module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[tuple[Any, ...], Mapping[str, Any]]:
    """The call's inputs less the integer CPU tensors its layer reads from host memory."""
    places = HOST_ARGUMENTS.get(type(module))
    if places is None:
        return args, kwargs
    kept_args = list(args)
    kept_kwargs = dict(kwargs)
    for position, name in places:
        if position < len(kept_args) and _host_integers(kept_args[position]):
            kept_args[position] = None
        if _host_integers(kept_kwargs.get(name)):
            kept_kwargs[name] = None
    return tuple(kept_args), kept_kwargs


def _host_integers(value: Any) -> bool:
    return (
        isinstance(value, Tensor)
        and value.device.type == "cpu"
        and not value.is_floating_point()
        and not value.is_complex()
    )


@dataclasses.dataclass(frozen=True)
class Placed:
    """One tensor of a call: how to reach it, and where it is."""

    where: str
    tensor: Tensor
    kind: str = "input"  # or "parameter", "buffer"

    @property
    def device(self) -> torch.device:
        return self.tensor.device

    def describe(self) -> tuple[str, str, str]:
        """Device, shape and dtype as a user reads them."""
        t = self.tensor
        shape = "(" + ", ".join(str(s) for s in t.shape) + ("," if t.dim() == 1 else "") + ")"
        return str(t.device), shape, str(t.dtype)

    def is_cpu_scalar(self) -> bool:
        return _is_cpu_scalar(self.tensor, self.tensor.device)


def _walk_named(obj: Any, where: str, depth: int, seen: set[int]) -> Iterator[Placed]:
    if isinstance(obj, Tensor):
        yield Placed(where, obj)
        return
    if depth >= MAX_DEPTH or id(obj) in seen or type(obj) in _SCALARS or obj is None:
        return
    seen.add(id(obj))
    if isinstance(obj, PackedSequence):
        for name in ("data", "sorted_indices", "unsorted_indices"):
            yield from _walk_named(getattr(obj, name), f"{where}.{name}", depth + 1, seen)
    elif isinstance(obj, (tuple, list)):
        for i, item in enumerate(obj):
            yield from _walk_named(item, f"{where}[{i}]", depth + 1, seen)
    elif isinstance(obj, Mapping):
        for key, item in obj.items():
            key_text = f'"{key}"' if isinstance(key, str) else repr(key)
            yield from _walk_named(item, f"{where}[{key_text}]", depth + 1, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _walk_named(getattr(obj, f.name, None), f"{where}.{f.name}", depth + 1, seen)


@dataclasses.dataclass(frozen=True)
class CallTensors:
    """Every tensor of one module call, named."""

    own: tuple[Placed, ...]
    inputs: tuple[Placed, ...]
    # For a module without tensors of its own: its submodules' first one.
    inner: Placed | None = None

    @classmethod
    def collect(cls, module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> CallTensors:
        own = [Placed(name, t, "parameter") for name, t in module._parameters.items() if t is not None]
        own += [Placed(name, t, "buffer") for name, t in module._buffers.items() if t is not None]
        seen: set[int] = set()
        inputs = list(_walk_named(args, "args", 0, seen))
        inputs += _walk_named(dict(kwargs), "kwargs", 0, seen)
        inner = None
        if not own:
            for name, t in (*module.named_parameters(), *module.named_buffers()):
                if not _is_cpu_scalar(t, t.device):
                    inner = Placed(name, t, "parameter")
                    break
        return cls(tuple(own), tuple(inputs), inner)

    def own_devices(self) -> list[torch.device]:
        """The devices of the module's own tensors, most used first (ties: first seen)."""
        return _by_use(p for p in self.own if not p.is_cpu_scalar())


def _by_use(placed: Iterator[Placed]) -> list[torch.device]:
    counts: dict[torch.device, int] = {}
    for p in placed:
        counts[p.device] = counts.get(p.device, 0) + 1
    return sorted(counts, key=lambda d: -counts[d])


def paths_of(tensors: Iterator[Tensor], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """Where, among a call's inputs, the given tensors (or tensors sharing their memory) are.

    Lets an error found deep inside a model name the input through which the
    user passed the tensor (``kwargs["labels"]``), also when the model passed
    on a view of it (``labels.view(-1)``).
    """
    wanted = [(t, _storage(t)) for t in tensors]
    found: list[str] = []
    for placed in (*_walk_named(args, "args", 0, set()), *_walk_named(dict(kwargs), "kwargs", 0, set())):
        storage = _storage(placed.tensor)
        for tensor, wanted_storage in wanted:
            if placed.tensor is tensor or (storage is not None and storage is wanted_storage):
                if placed.where not in found:
                    found.append(placed.where)
                break
    return tuple(found)


def _storage(t: Tensor) -> Any:
    try:
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError):  # sparse and other layouts without one storage
        return None

