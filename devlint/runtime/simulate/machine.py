"""The simulated GPU machine: what ``torch.cuda`` answers while simulating.

User code asks ``torch.cuda.is_available()`` before it chooses a device; if
that answered False, the device-selection idiom would pick the CPU and the
simulation would find nothing. So the machine replaces the ``torch.cuda`` and
``torch.accelerator`` queries with plausible answers, and a few places in
torch that would otherwise try to reach real CUDA memory (storages moved to
CUDA, which is how ``torch.load`` restores a checkpoint's tensors;
``torch.Generator(device="cuda")``; the DataLoader's pinning; custom autograd
functions' backward). ``Patches`` records every original and puts it back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import torch
import torch.serialization
import torch.storage
import torch.utils.data._utils.pin_memory as pin_memory_module
from torch.autograd.function import BackwardCFunction, Function

from .tags import CPU, MEMORY, device_of, place, place_storage, storage_device

_TOTAL_MEMORY = 80 * 1024**3
_RESERVE_BLOCK = 2 * 1024**2
_MISSING = object()


class SimulatedMachine:
    """``devices`` simulated CUDA devices and the current one."""

    name = "devlint simulated CUDA device"
    capability = (8, 0)

    def __init__(self, devices: int = 1) -> None:
        if devices < 1:
            raise ValueError(f"simulate_cuda needs at least one device, got devices={devices}")
        self.devices = devices
        self.current = 0
        self.seed = 0
        self._parsed: dict[Any, torch.device] = {}
        self.cuda = [torch.device("cuda", i) for i in range(devices)]

    # -- devices ----------------------------------------------------------

    def resolve(self, device: Any) -> torch.device:
        """The simulated device ``device`` names (``"cuda"`` is the current one)."""
        if isinstance(device, torch.device):
            parsed = device
        elif isinstance(device, int) and not isinstance(device, bool):
            parsed = torch.device("cuda", device)
        else:
            parsed = self._parsed.get(device)
            if parsed is None:
                parsed = self._parsed[device] = torch.device(device)
        if parsed.type != "cuda":
            return CPU if parsed.type == "cpu" else parsed
        index = self.current if parsed.index is None else parsed.index
        if not 0 <= index < self.devices:
            plural = "s" if self.devices > 1 else ""
            raise RuntimeError(
                f"CUDA error: invalid device ordinal: cuda:{index} does not exist "
                f"(the simulation has {self.devices} device{plural})"
            )
        return self.cuda[index]

    def index(self, device: Any = None) -> int:
        if device is None:
            return self.current
        resolved = self.resolve(device)
        return resolved.index if resolved.type == "cuda" else self.current

    # -- torch.cuda -------------------------------------------------------

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return self.devices

    def current_device(self) -> int:
        return self.current

    def set_device(self, device: Any) -> None:
        self.current = self.index(device)

    def get_device_name(self, device: Any = None) -> str:
        self.index(device)
        return self.name

    def get_device_capability(self, device: Any = None) -> tuple[int, int]:
        self.index(device)
        return self.capability

    def get_device_properties(self, device: Any = None) -> SimpleNamespace:
        self.index(device)
        return SimpleNamespace(
            name=self.name,
            major=self.capability[0],
            minor=self.capability[1],
            total_memory=_TOTAL_MEMORY,
            multi_processor_count=108,
            is_integrated=False,
            is_multi_gpu_board=False,
        )

    def synchronize(self, device: Any = None) -> None:
        self.index(device)

    def is_initialized(self) -> bool:
        return True

    def nothing(self, *args: Any, **kwargs: Any) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        self.seed = int(seed)

    def reseed(self) -> None:
        self.seed = int(torch.initial_seed())

    def initial_seed(self) -> int:
        return self.seed

    def get_rng_state(self, device: Any = "cuda") -> torch.Tensor:
        # Simulated CUDA draws from the CPU generator; the CPU state is what
        # fork_rng and checkpointing save and restore alongside this one.
        self.index(device)
        return torch.get_rng_state()

    def get_rng_state_all(self) -> list[torch.Tensor]:
        return [torch.get_rng_state() for _ in range(self.devices)]

    def memory_allocated(self, device: Any = None) -> int:
        return MEMORY.allocated[self.index(device)]

    def max_memory_allocated(self, device: Any = None) -> int:
        return MEMORY.peak[self.index(device)]

    def memory_reserved(self, device: Any = None) -> int:
        allocated = self.memory_allocated(device)
        return -(-allocated // _RESERVE_BLOCK) * _RESERVE_BLOCK

    def max_memory_reserved(self, device: Any = None) -> int:
        peak = self.max_memory_allocated(device)
        return -(-peak // _RESERVE_BLOCK) * _RESERVE_BLOCK

    def reset_peak_memory_stats(self, device: Any = None) -> None:
        MEMORY.reset_peak(self.index(device))

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        return _TOTAL_MEMORY - self.memory_reserved(device), _TOTAL_MEMORY

    def memory_stats(self, device: Any = None) -> dict[str, int]:
        return {
            "allocated_bytes.all.current": self.memory_allocated(device),
            "allocated_bytes.all.peak": self.max_memory_allocated(device),
            "reserved_bytes.all.current": self.memory_reserved(device),
            "reserved_bytes.all.peak": self.max_memory_reserved(device),
        }

    def memory_summary(self, device: Any = None, abbreviated: bool = False) -> str:
        stats = self.memory_stats(device)
        return "\n".join(f"{key}: {value}" for key, value in stats.items())

    def device_context(self) -> type:
        machine = self

        class device:  # noqa: N801 - stands in for torch.cuda.device
            def __init__(self, device: Any) -> None:
                self.idx = -1 if device is None else machine.index(device)
                self.prev_idx = -1

            def __enter__(self) -> None:
                self.prev_idx = machine.current
                if self.idx >= 0:
                    machine.current = self.idx

            def __exit__(self, *exc: object) -> bool:
                machine.current = self.prev_idx
                return False

        return device

    def device_of(self, tensor: torch.Tensor) -> Any:
        where = device_of(tensor)
        return self.device_context()(where.index if where.type == "cuda" else None)

    def current_stream(self, device: Any = None) -> SimulatedStream:
        return SimulatedStream(self.cuda[self.index(device)])

    def is_current_stream_capturing(self) -> bool:
        return False

    # -- torch.accelerator ------------------------------------------------

    def current_accelerator(self, check_available: bool = False) -> torch.device:
        return torch.device("cuda")


class SimulatedStream:
    """The default stream, enough for the questions torch asks of it.

    Streams are out of scope: work "on" a simulated GPU runs synchronously.
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.device_index = device.index
        self.device_type = device.type
        self.stream_id = 0

    def is_capturing(self) -> bool:
        return False

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait_stream(self, stream: Any) -> None:
        return None

    def wait_event(self, event: Any) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SimulatedStream) and other.device == self.device

    def __hash__(self) -> int:
        return hash(("devlint-stream", self.device))


class Patches:
    """Attributes replaced while simulating, with their originals."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        self._saved.append((owner, name, owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        while self._saved:
            owner, name, value = self._saved.pop()
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


def install(machine: SimulatedMachine, mode: Any, reenter: Callable[[], Any]) -> Patches:
    """Replace torch's CUDA queries for ``machine``; ``reenter()`` re-activates ``mode``."""
    # torch._dynamo indexes the torch.cuda functions the first time it is
    # imported (optimizers import it lazily); it must see the real ones.
    import torch._dynamo  # noqa: F401

    patches = Patches()
    cuda: ModuleType = torch.cuda
    answers: dict[str, Any] = {
        "is_available": machine.is_available,
        "device_count": machine.device_count,
        "current_device": machine.current_device,
        "set_device": machine.set_device,
        "get_device_name": machine.get_device_name,
        "get_device_capability": machine.get_device_capability,
        "get_device_properties": machine.get_device_properties,
        "synchronize": machine.synchronize,
        "is_initialized": machine.is_initialized,
        "init": machine.nothing,
        "_lazy_init": machine.nothing,
        "manual_seed": machine.manual_seed,
        "manual_seed_all": machine.manual_seed,
        "seed": machine.reseed,
        "seed_all": machine.reseed,
        "initial_seed": machine.initial_seed,
        "get_rng_state": machine.get_rng_state,
        "set_rng_state": machine.nothing,
        "get_rng_state_all": machine.get_rng_state_all,
        "set_rng_state_all": machine.nothing,
        "memory_allocated": machine.memory_allocated,
        "max_memory_allocated": machine.max_memory_allocated,
        "memory_reserved": machine.memory_reserved,
        "max_memory_reserved": machine.max_memory_reserved,
        "reset_peak_memory_stats": machine.reset_peak_memory_stats,
        "reset_max_memory_allocated": machine.reset_peak_memory_stats,
        "empty_cache": machine.nothing,
        "mem_get_info": machine.mem_get_info,
        "memory_stats": machine.memory_stats,
        "memory_summary": machine.memory_summary,
        "device": machine.device_context(),
        "device_of": machine.device_of,
        "is_bf16_supported": machine.is_available,
        "get_arch_list": lambda: ["sm_80"],
        "current_stream": machine.current_stream,
        "default_stream": machine.current_stream,
        "is_current_stream_capturing": machine.is_current_stream_capturing,
    }
    for name, value in answers.items():
        patches.set(cuda, name, value)
    accelerator = torch.accelerator
    for name, value in {
        "is_available": machine.is_available,
        "current_accelerator": machine.current_accelerator,
        "device_count": machine.device_count,
        "current_device_index": machine.current_device,
        "current_device_idx": machine.current_device,
        "set_device_index": machine.set_device,
        "set_device_idx": machine.set_device,
        "synchronize": machine.synchronize,
        "current_stream": machine.current_stream,
    }.items():
        patches.set(accelerator, name, value)

    # The DataLoader pins batches when an accelerator is present (also in its
    # pin-memory thread, where the mode is not active); a CPU-only build
    # cannot page-lock memory, and pinned memory is host memory anyway.
    patches.set(pin_memory_module, "pin_memory", lambda data, device=None: data)

    # RNNs ask whether cuDNN takes their (CUDA) weights; a CPU build warns
    # that it has no cuDNN. The simulated GPU has none either.
    patches.set(torch.backends.cudnn, "is_acceptable", lambda tensor: False)

    # torch.load restores each storage with storage.to(device=...), and a
    # callable map_location calls storage.cuda(); torch.save records each
    # storage's location_tag. A checkpoint saved inside the simulation so
    # says "cuda:0", as on a GPU, and comes back there (or, outside it, needs
    # a map_location, as a real GPU checkpoint does).
    storage_base = torch.storage._StorageBase
    patches.set(storage_base, "to", _simulated_storage_to(storage_base.__dict__["to"], machine))
    serialization = torch.serialization
    patches.set(serialization, "location_tag", _simulated_location_tag(serialization.location_tag))
    patches.set(torch, "Generator", simulated_generator_type(torch.Generator, machine))

    overrides = torch.overrides
    patches.set(overrides, "has_torch_function", _unseen_by_fast_paths(overrides.has_torch_function, mode))

    _install_autograd_functions(patches, reenter)
    return patches


def _unseen_by_fast_paths(has_torch_function: Callable[..., bool], mode: Any) -> Callable[..., bool]:
    """``torch.overrides.has_torch_function`` that does not count the simulation's mode.

    Modules choose their native fast path by asking it (TransformerEncoderLayer's
    ``_transformer_encoder_layer_fwd`` and MultiheadAttention's
    ``_native_multi_head_attention`` in eval mode under no_grad): any function
    mode answers True and sends them down the composite path, whose numbers
    differ from a plain CPU run in the last digits. On a real GPU no mode is
    on, so the fast path is what CUDA runs too. torch's own dispatch
    (``if has_torch_function(...): return handle_torch_function(...)``) binds
    the name at import and is not affected.
    """

    @functools.wraps(has_torch_function)
    def unseen(relevant_args: Any) -> bool:
        if torch._C._len_torch_function_stack() == 1 and torch._C._get_function_stack_at(0) is mode:
            ours = torch._C._pop_torch_function_stack()
            try:
                return has_torch_function(relevant_args)
            finally:
                torch._C._push_on_torch_function_stack(ours)
        return has_torch_function(relevant_args)

    return unseen


def _simulated_storage_to(to: Callable[..., Any], machine: SimulatedMachine) -> Callable[..., Any]:
    """``storage.to(device=...)`` for simulated devices: a CPU copy with the device's tag."""

    @functools.wraps(to)
    def simulated(storage: Any, *, device: Any, non_blocking: bool = False) -> Any:
        target = machine.resolve(device)
        source = storage_device(storage)
        if target.type != "cuda":
            if source is not None and target.type == "cpu":
                return storage.clone()  # a fresh storage: no tag
            return to(storage, device=device, non_blocking=non_blocking)
        if source == target:
            return storage
        copy = storage.clone()
        place_storage(getattr(copy, "_untyped_storage", copy), target)
        return copy

    return simulated


def _simulated_location_tag(location_tag: Callable[[Any], str]) -> Callable[[Any], str]:
    @functools.wraps(location_tag)
    def simulated(storage: Any) -> str:
        device = storage_device(storage)
        return str(device) if device is not None else location_tag(storage)

    return simulated


def simulated_generator_type(real: type, machine: SimulatedMachine) -> type:
    """``torch.Generator`` that accepts a simulated CUDA device.

    It is a CPU generator (simulated CUDA draws from the CPU's random
    streams) that reports ``cuda:N`` as its device. ``isinstance`` with it
    accepts every real generator too, so code that checks its argument is
    not surprised by the generators made before the simulation.
    """

    class _GeneratorType(type(real)):  # type: ignore[misc]
        def __instancecheck__(cls, obj: object) -> bool:
            return isinstance(obj, real)

        def __subclasscheck__(cls, sub: type) -> bool:
            return issubclass(sub, real)

    class Generator(real, metaclass=_GeneratorType):  # type: ignore[misc, valid-type]
        __doc__ = real.__doc__

        def __new__(cls, device: Any = "cpu") -> Any:
            where = machine.resolve(device if device is not None else "cpu")
            generator = real.__new__(cls, device="cpu" if where.type == "cuda" else device)
            generator._devlint_device = where
            return generator

        def __init__(self, device: Any = "cpu") -> None:
            pass  # the device was taken in __new__

        @property
        def device(self) -> torch.device:
            return self._devlint_device

    Generator.__module__ = real.__module__
    Generator.__qualname__ = real.__qualname__
    return Generator


def generator_device(generator: Any) -> torch.device:
    """The (simulated) device of a generator."""
    return getattr(generator, "_devlint_device", None) or generator.device


def _install_autograd_functions(patches: Patches, reenter: Callable[[], Any]) -> None:
    """Keep custom ``autograd.Function.backward`` inside the simulation.

    The autograd engine calls ``backward()`` with the function mode off and
    with gradients that carry no tag, so a backward that multiplies the
    incoming gradient by a saved CUDA tensor would look like a CPU/CUDA mix.
    The forward's output devices are recorded on the ``ctx`` node and given
    to the gradients, and the mode is re-entered for the user's code.
    """
    original_apply = Function.__dict__["apply"].__func__

    def apply(cls: type, *args: Any, **kwargs: Any) -> Any:
        result = original_apply(cls, *args, **kwargs)
        outputs = result if isinstance(result, tuple) else (result,)
        node = None
        devices = []
        for output in outputs:
            if isinstance(output, torch.Tensor):
                node = node or output.grad_fn
                devices.append(device_of(output))
            else:
                devices.append(None)
        if isinstance(node, BackwardCFunction):
            node._devlint_devices = devices  # type: ignore[attr-defined]
        return result

    patches.set(Function, "apply", classmethod(apply))

    for name in ("apply", "apply_boxed"):
        original = BackwardCFunction.__dict__.get(name)
        if original is None:
            continue

        def backward(ctx: Any, *grads: Any, _original: Callable[..., Any] = original) -> Any:
            devices = getattr(ctx, "_devlint_devices", ())
            flat = grads[0] if len(grads) == 1 and isinstance(grads[0], list) else grads
            for grad, device in zip(flat, devices):
                if isinstance(grad, torch.Tensor) and device is not None and device.type == "cuda":
                    if device_of(grad).type == "cpu":
                        place(grad, device)
            with reenter():
                return _original(ctx, *grads)

        patches.set(BackwardCFunction, name, backward)
