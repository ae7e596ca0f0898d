"""The TorchFunctionMode that makes CPU tensors behave as if they lived on CUDA.

Every torch function, tensor method and tensor property getter goes through
``SimulatedCudaMode.__torch_function__`` before it runs. There the mode

1. turns ``device="cuda..."`` into the CPU and remembers the simulated device,
2. checks the devices of the tensors against the operation's rule
   (``rules.py``) and raises ``DeviceMismatchError`` where CUDA would raise,
3. runs the real operation on the CPU (PyTorch turns the mode off while its
   handler runs, so nothing inside is intercepted twice), and
4. tags the outputs with the device they would have on a GPU.

The hot path (the ``same`` rule) is written out by hand: it runs for every
operation of the user's model and sets the simulation's overhead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.overrides import TorchFunctionMode

from . import report
from .machine import generator_device
from .rules import BY_OP, SAME, DeviceRule, is_inplace, op_name
from .tags import CPU, TAG, device_of, place

if TYPE_CHECKING:
    from .machine import SimulatedMachine

Tensor = torch.Tensor
_PRESERVE = torch.preserve_format


@dataclass(frozen=True)
class _Op:
    name: str
    rule: DeviceRule
    inplace: bool
    handler: Callable[..., Any]


class SimulatedCudaMode(TorchFunctionMode):
    def __init__(self, machine: SimulatedMachine) -> None:
        super().__init__()
        self.machine = machine
        self._ops: dict[Any, _Op] = {}
        self._special: dict[str, Callable[..., Any]] = {
            "Tensor.device.__get__": self._get_device,
            "Tensor.is_cuda.__get__": self._get_is_cuda,
            "Tensor.is_cpu.__get__": self._get_is_cpu,
            "Tensor.grad.__get__": self._get_grad,
            "Tensor.get_device": self._get_device_index,
            "Tensor.register_hook": self._register_hook,
            "Tensor.register_post_accumulate_grad_hook": self._register_hook,
            "torch.autograd.grad": self._autograd_grad,
        }
        self._kinds: dict[str, Callable[..., Any]] = {
            "same": self._same,
            "strict": self._same,
            "self": self._self,
            "copy": self._self,
            "index": self._index,
            "factory": self._factory,
            "move": self._move,
            "host": self._host,
            "pin": self._pin,
            "meta": self._meta,
        }

    # -- dispatch ---------------------------------------------------------

    def __torch_function__(self, func, types, args=(), kwargs=None):
        __tracebackhide__ = True
        op = self._ops.get(func)
        if op is None:
            op = self._resolve(func)
        return op.handler(func, op, args, kwargs or {})

    def _resolve(self, func: Any) -> _Op:
        name = op_name(func)
        rule = BY_OP.get(name, SAME)
        handler = self._special.get(name) or self._kinds[rule.kind]
        op = _Op(name, rule, is_inplace(name), handler)
        try:
            self._ops[func] = op
        except TypeError:  # unhashable callables are rare; resolve them each time
            pass
        return op

    @contextmanager
    def active(self) -> Iterator[None]:
        """Run the block under this mode, pushing it if this thread lacks it.

        The autograd engine runs hooks and ``backward()`` with the function
        mode stack empty; re-entering the mode there keeps them checked.
        """
        stack_len = torch._C._len_torch_function_stack()
        if any(torch._C._get_function_stack_at(i) is self for i in range(stack_len)):
            yield
            return
        with self:
            yield

    # -- the default rule -------------------------------------------------

    def _same(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        generator = None
        if kwargs:
            device = kwargs.get("device")
            if device is not None:
                return self._explicit(func, op, args, kwargs, device)
            if kwargs.get("pin_memory"):
                kwargs = dict(kwargs, pin_memory=False)
            generator = kwargs.get("generator")
        common = None
        scalars = None
        free = op.rule.free
        position = 0
        writable = op.inplace
        for position, arg in enumerate(args):
            if isinstance(arg, Tensor):
                if free and position in free and _host_integers(arg):
                    continue
                storage = arg.untyped_storage()
                device = getattr(storage, TAG, None)
                if device is None:
                    if arg.is_cpu:
                        if arg.dim() == 0 and not (writable and position == 0) and op.rule.kind == "same":
                            scalars = (scalars or []) + [storage]
                            continue
                        device = CPU
                    else:
                        device = arg.device
                if common is None:
                    common = device
                elif device != common:
                    raise self._mismatch(func, op, args, kwargs)
            elif type(arg) is list or type(arg) is tuple:
                for item in arg:
                    if isinstance(item, Tensor):
                        storage = item.untyped_storage()
                        device = getattr(storage, TAG, None)
                        if device is None:
                            if item.is_cpu:
                                if item.dim() == 0 and not writable and op.rule.kind == "same":
                                    scalars = (scalars or []) + [storage]
                                    continue
                                device = CPU
                            else:
                                device = item.device
                        if common is None:
                            common = device
                        elif device != common:
                            raise self._mismatch(func, op, args, kwargs)
        if kwargs:
            for key, arg in kwargs.items():
                if isinstance(arg, Tensor):
                    if free and key in free and _host_integers(arg):
                        continue
                    storage = arg.untyped_storage()
                    device = getattr(storage, TAG, None)
                    if device is None:
                        if arg.is_cpu:
                            if arg.dim() == 0 and key != "out" and op.rule.kind == "same":
                                scalars = (scalars or []) + [storage]
                                continue
                            device = CPU
                        else:
                            device = arg.device
                    if common is None:
                        common = device
                    elif device != common:
                        raise self._mismatch(func, op, args, kwargs)
        if generator is not None:
            _check_generator(op, generator, common or CPU, args)
        result = func(*args, **kwargs)
        if common is not None and common.type == "cuda":
            self._tag(result, common, scalars, op.rule.cpu_outputs)
        return result

    @staticmethod
    def _tag(result: Any, device: torch.device, keep: list | None = None, cpu_outputs: tuple = ()) -> None:
        """Tag fresh outputs; views of CPU-scalar inputs keep their own device."""
        if isinstance(result, Tensor):
            if keep is None or not _shares(result, keep):
                place(result, device)
        elif isinstance(result, (tuple, list)):
            for i, item in enumerate(result):
                if isinstance(item, Tensor) and i not in cpu_outputs:
                    if keep is None or not _shares(item, keep):
                        place(item, device)

    def _mismatch(self, func, op: _Op, args, kwargs, expected: torch.device | None = None) -> Exception:
        tensors = [
            (label, t)
            for label, t in report.label_tensors(op.name, args, kwargs, func)
            if not (_is_free(op.rule, label.split("=")[-1]) and _host_integers(t))
        ]
        return report.mismatch(op.name, tensors, expected, op.rule.cuda_says)

    # -- device= ----------------------------------------------------------

    def _explicit(self, func, op: _Op, args, kwargs, device: Any):
        __tracebackhide__ = True
        target = self.machine.resolve(device)
        generator = kwargs.get("generator")
        if generator is not None:
            _check_generator(op, generator, target, args)
        if target.type == "cuda":
            kwargs = dict(kwargs, device=CPU)
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
        result = func(*args, **kwargs)
        if isinstance(result, Tensor):
            if target.type in ("cuda", "cpu") and _aliases_elsewhere(result, args, target):
                # as_tensor(t, device=...) returns t itself when it is
                # "already" on the CPU: on a GPU that would be a copy
                result = result.clone()
            if target.type == "cuda":
                place(result, target)
        elif target.type == "cuda":
            self._tag(result, target)
        return result

    def _factory(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        device = kwargs.get("device")
        if device is not None:
            return self._explicit(func, op, args, kwargs, device)
        if kwargs.get("generator") is not None:
            _check_generator(op, kwargs["generator"], CPU, args)
        result = func(*args, **kwargs)
        if args and isinstance(args[0], Tensor):
            source = device_of(args[0])
            if source.type == "cuda" and isinstance(result, Tensor):
                place(result, source)
        return result

    # -- exceptions from the table ----------------------------------------

    def _self(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        if kwargs.get("device") is not None:
            return self._explicit(func, op, args, kwargs, kwargs["device"])
        result = func(*args, **kwargs)
        if args and isinstance(args[0], Tensor):
            device = device_of(args[0])
            if device.type == "cuda" and result is not args[0]:
                self._tag(result, device)
        return result

    def _meta(self, func, op: _Op, args, kwargs):
        return func(*args, **kwargs)

    def _index(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        target = args[0]
        device = device_of(target)
        indices = args[1] if len(args) > 1 else kwargs.get("indices")
        values = args[2] if len(args) > 2 else kwargs.get("values")
        index_tensors = list(_tensors_in(indices))
        for index in index_tensors:
            where = device_of(index)
            if where != device and where.type != "cpu" and index.dim() > 0:
                raise report.mismatch(
                    op.name,
                    [("self", target), ("index", index)],
                    device,
                    op.rule.cuda_says,
                    headline=f"got an index on {where} for a tensor on {device}",
                )
        if isinstance(values, Tensor):
            where = device_of(values)
            advanced = bool(index_tensors) or op.name != "Tensor.__setitem__"
            scalar = values.dim() == 0 and where.type == "cpu"
            if advanced and where != device and not scalar:
                raise report.mismatch(
                    op.name,
                    [("self", target), ("values", values)],
                    device,
                    "Index put requires the source and destination to be on the same device",
                )
        result = func(*args, **kwargs)
        if device.type == "cuda" and isinstance(result, Tensor) and result is not target:
            place(result, device)
        return result

    def _host(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        device = device_of(args[0])
        if device.type != "cpu":
            raise report.mismatch(
                op.name,
                [("self", args[0])],
                CPU,
                op.rule.cuda_says,
                error=report.HostMemoryError,
                headline=f"needs a tensor in host memory, got one on {device}",
                said=op.rule.cuda_says.format(device=device),
            )
        return func(*args, **kwargs)

    def _pin(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        if device_of(args[0]).type != "cpu":
            raise report.mismatch(
                op.name,
                [("self", args[0])],
                CPU,
                op.rule.cuda_says,
                headline="can only pin tensors in host memory",
                said=op.rule.cuda_says.format(device=device_of(args[0])),
            )
        # a CPU-only build cannot page-lock memory; pinned memory is still
        # host memory, so a copy on the CPU is what the caller observes
        return args[0].clone()

    # -- moves ------------------------------------------------------------

    def _move(self, func, op: _Op, args, kwargs):
        __tracebackhide__ = True
        tensor: Tensor = args[0]
        source = device_of(tensor)
        short = op.name.rsplit(".", 1)[-1]
        dtype = None
        non_blocking = kwargs.get("non_blocking", False)
        copy = kwargs.get("copy", False)
        memory_format = kwargs.get("memory_format", _PRESERVE)
        if short == "cpu":
            target: torch.device | None = CPU
        elif short == "cuda":
            index = args[1] if len(args) > 1 else kwargs.get("device")
            target = self.machine.resolve("cuda" if index is None else index)
        elif short == "type_as":
            other = args[1] if len(args) > 1 else kwargs["other"]
            target, dtype = device_of(other), other.dtype
        elif short == "type":
            wanted = args[1] if len(args) > 1 else kwargs.get("dtype")
            if wanted is None:
                name = func(*args, **kwargs)
                return name.replace("torch.", "torch.cuda.", 1) if source.type == "cuda" else name
            if isinstance(wanted, str):
                wanted = _legacy_type(wanted)
            if isinstance(wanted, type):
                target = self.machine.resolve("cuda") if getattr(wanted, "is_cuda", False) else CPU
                dtype = wanted.dtype
            else:
                target, dtype = None, wanted
        else:
            target, dtype, non_blocking, copy = self._parse_to(args[1:], kwargs)
        if target is None or (target == source and dtype is None and not copy):
            if target is None:
                result = func(*args, **kwargs)
            else:
                result = tensor
            if source.type == "cuda" and result is not tensor:
                place(result, source)
            return result
        if target.type not in ("cpu", "cuda") or source.type not in ("cpu", "cuda"):
            real = target if target.type not in ("cpu", "cuda") else CPU
            return tensor.to(real, dtype, non_blocking=non_blocking, copy=copy, memory_format=memory_format)
        result = tensor.to(
            CPU,
            dtype,
            non_blocking=non_blocking,
            copy=copy or target != source,
            memory_format=memory_format,
        )
        if target.type == "cuda" and result is not tensor:
            place(result, target)
        return result

    def _parse_to(self, rest: tuple, kwargs: dict) -> tuple[torch.device | None, Any, bool, bool]:
        device = kwargs.get("device")
        dtype = kwargs.get("dtype")
        non_blocking = kwargs.get("non_blocking", False)
        copy = kwargs.get("copy", False)
        flags: list[bool] = []
        for value in rest:
            if isinstance(value, Tensor):
                device, dtype = device_of(value), value.dtype
            elif isinstance(value, torch.dtype):
                dtype = value
            elif isinstance(value, bool):
                flags.append(value)
            elif isinstance(value, (str, int, torch.device)):
                device = value
            elif value is None:
                continue
        if flags:
            non_blocking = flags[0]
        if len(flags) > 1:
            copy = flags[1]
        target = None if device is None else self.machine.resolve(device)
        return target, dtype, non_blocking, copy

    # -- properties and autograd ------------------------------------------

    def _get_device(self, func, op: _Op, args, kwargs):
        return device_of(args[0])

    def _get_is_cuda(self, func, op: _Op, args, kwargs):
        return device_of(args[0]).type == "cuda"

    def _get_is_cpu(self, func, op: _Op, args, kwargs):
        return device_of(args[0]).type == "cpu"

    def _get_device_index(self, func, op: _Op, args, kwargs):
        device = device_of(args[0])
        return device.index if device.type == "cuda" else func(*args, **kwargs)

    def _get_grad(self, func, op: _Op, args, kwargs):
        grad = func(*args, **kwargs)
        if grad is not None:
            device = device_of(args[0])
            # the autograd engine allocates gradients on the real (CPU) device
            if device.type == "cuda" and getattr(grad.untyped_storage(), TAG, None) is None:
                place(grad, device)
        return grad

    def _register_hook(self, func, op: _Op, args, kwargs):
        tensor, hook = args[0], args[1] if len(args) > 1 else kwargs.pop("hook")
        device = device_of(tensor)
        mode = self

        @functools.wraps(hook)
        def checked(value):
            if isinstance(value, Tensor) and device.type == "cuda" and value is not tensor:
                if getattr(value.untyped_storage(), TAG, None) is None:
                    place(value, device)
            with mode.active():
                return hook(value)

        return func(tensor, checked, *args[2:], **kwargs)

    def _autograd_grad(self, func, op: _Op, args, kwargs):
        inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
        result = func(*args, **kwargs)
        targets = [inputs] if isinstance(inputs, Tensor) else list(inputs or ())
        for grad, source in zip(result, targets):
            if isinstance(grad, Tensor) and isinstance(source, Tensor):
                device = device_of(source)
                if device.type == "cuda":
                    place(grad, device)
        return result


def _check_generator(op: _Op, generator: Any, device: torch.device, args: tuple) -> None:
    """A random operation runs on one device type, and its generator must be of that type."""
    where = generator_device(generator)
    if where.type != device.type:
        raise report.mismatch(
            op.name,
            [("self" if op.name.startswith("Tensor.") else "args[0]", t) for t in _tensors_in(args[0] if args else None)],
            device,
            "",
            headline=f"got a generator on {where} for an operation on {device}",
            said=f"Expected a '{device.type}' device type for generator but found '{where.type}'",
        )


def _aliases_elsewhere(result: Tensor, args: tuple, target: torch.device) -> bool:
    """Whether ``result`` shares memory with an argument that is not on ``target``."""
    storage = result.untyped_storage()
    for arg in _tensors_in(args[0] if args else None):
        if arg.untyped_storage() is storage and device_of(arg) != target:
            return True
    return False


def _host_integers(t: Tensor) -> bool:
    """Lengths, targets and batch sizes that CUDA kernels read from host memory."""
    return t.is_cpu and not t.is_floating_point() and getattr(t.untyped_storage(), TAG, None) is None


def _shares(t: Tensor, storages: list) -> bool:
    storage = t.untyped_storage()
    return any(storage is s for s in storages)


def _tensors_in(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, Tensor):
                yield item


def _is_free(rule: DeviceRule, label: str) -> bool:
    """Whether the tensor shown as ``label`` is one the rule lets be anywhere."""
    method = rule.op.startswith("Tensor.")
    for key in rule.free:
        if isinstance(key, str):
            if label == f'kwargs["{key}"]':
                return True
        elif label == ("self" if method and key == 0 else f"args[{key - 1 if method else key}]"):
            return True
    return False


def _legacy_type(name: str) -> type:
    parts = name.split(".")
    module: Any = torch.cuda if "cuda" in parts else torch
    return getattr(module, parts[-1])
