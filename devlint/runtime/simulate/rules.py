"""Per-operation device rules: what CUDA accepts and where the result lives.

Every operation not listed here follows ``same``, the rule of PyTorch's
``TensorIterator`` (``aten/src/ATen/TensorIterator.cpp``): all tensors on one
device, except that a 0-dim CPU tensor may be an *input* of a CUDA kernel
(never its output: ``cpu_scalar += cuda_scalar`` fails on a GPU). The entries
below are the exceptions the feasibility study found, each with what CUDA
does; ``tests/simulate/test_rules.py`` checks every entry against that
behaviour, and a test fails if an entry has no example there.

Kinds:

- ``same``: the default described above; ``free`` names arguments (positions
  in the call, or keywords) that CUDA accepts as integer tensors in host
  memory (lengths, targets, batch sizes) whatever the other tensors' device;
  ``cpu_outputs`` the outputs that live on the CPU.
- ``strict``: all tensors on one device, no CPU-scalar exception.
- ``self``: the result is on ``self``'s device; other tensor arguments only
  lend a shape or data to copy, so their device does not matter.
- ``copy``: in-place copy from any device into ``self``.
- ``index``: index tensors may be on the CPU or on the indexed tensor's
  device; the assigned values follow ``same`` for advanced indexing and
  ``copy`` for basic slicing.
- ``factory``: the result is on ``device=`` (or on the CPU); a tensor given as
  data is copied from wherever it is.
- ``move``: ``to`` / ``cuda`` / ``cpu`` / ``type`` / ``type_as``: a move to
  another device is a copy, a move to the same device returns the tensor.
- ``host``: the operation needs CPU memory (``numpy``).
- ``pin``: page-locking, which only CPU tensors accept.
- ``meta``: reads only metadata (types, shapes); any devices, nothing computed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceRule:
    op: str
    kind: str
    cuda_says: str
    free: tuple[int | str, ...] = ()
    cpu_outputs: tuple[int, ...] = ()


SAME = DeviceRule(
    op="*",
    kind="same",
    cuda_says=(
        "Expected all tensors to be on the same device, but found at least two devices, {devices}!"
    ),
)

_INDEX_SAYS = "indices should be either on cpu or on the same device as the indexed tensor ({device})"

RULES: tuple[DeviceRule, ...] = (
    # metadata queries compute nothing on the device
    DeviceRule("torch._has_compatible_shallow_copy_type", "meta", "compares tensor types only"),
    DeviceRule("torch.is_same_size", "meta", "compares shapes only"),
    DeviceRule("torch.result_type", "meta", "compares dtypes only"),
    DeviceRule("Tensor.is_set_to", "meta", "compares storages only"),
    # shape and type donors: CUDA reads only the metadata of ``other``
    DeviceRule("Tensor.expand_as", "self", "other only gives the shape"),
    DeviceRule("Tensor.view_as", "self", "other only gives the shape"),
    DeviceRule("Tensor.reshape_as", "self", "other only gives the shape"),
    DeviceRule("Tensor.new_tensor", "self", "data is copied to self's device"),
    DeviceRule("Tensor.new_empty", "self", "the result is on self's device"),
    DeviceRule("Tensor.new_zeros", "self", "the result is on self's device"),
    DeviceRule("Tensor.new_ones", "self", "the result is on self's device"),
    DeviceRule("Tensor.new_full", "self", "the result is on self's device"),
    # ``p.data = t`` is how Module.to moves parameters: any device is accepted
    DeviceRule("Tensor.data.__set__", "self", "swaps the storage, device included"),
    # moves
    DeviceRule("Tensor.to", "move", "copies across devices"),
    DeviceRule("Tensor.cuda", "move", "copies to the current CUDA device"),
    DeviceRule("Tensor.cpu", "move", "copies to host memory"),
    DeviceRule("Tensor.type_as", "move", "casts to other's type, device included"),
    DeviceRule("Tensor.type", "move", "a torch.cuda.* type moves to the GPU"),
    DeviceRule("Tensor.copy_", "copy", "copies from any device"),
    # indexing
    DeviceRule("Tensor.__getitem__", "index", _INDEX_SAYS),
    DeviceRule("Tensor.__setitem__", "index", _INDEX_SAYS),
    DeviceRule("Tensor.index_put_", "index", _INDEX_SAYS),
    DeviceRule("Tensor.index_put", "index", _INDEX_SAYS),
    DeviceRule("torch.index_put_", "index", _INDEX_SAYS),
    DeviceRule("torch.index_put", "index", _INDEX_SAYS),
    # no CPU-scalar exception: these kernels check every tensor's device
    DeviceRule("torch.cat", "strict", SAME.cuda_says),
    DeviceRule("torch.concat", "strict", SAME.cuda_says),
    DeviceRule("torch.concatenate", "strict", SAME.cuda_says),
    DeviceRule("torch.stack", "strict", SAME.cuda_says),
    DeviceRule("torch.hstack", "strict", SAME.cuda_says),
    DeviceRule("torch.vstack", "strict", SAME.cuda_says),
    DeviceRule("torch.index_select", "strict", SAME.cuda_says),
    DeviceRule("Tensor.index_select", "strict", SAME.cuda_says),
    DeviceRule("torch.embedding", "strict", SAME.cuda_says),
    # factories taking data
    DeviceRule("torch.tensor", "factory", "copies data to device="),
    DeviceRule("torch.as_tensor", "factory", "copies data to device= when it is elsewhere"),
    DeviceRule("torch.asarray", "factory", "copies data to device= when it is elsewhere"),
    # host memory
    DeviceRule(
        "Tensor.numpy",
        "host",
        "can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
    ),
    DeviceRule(
        "Tensor.__array__",
        "host",
        "can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
    ),
    DeviceRule("Tensor.pin_memory", "pin", "cannot pin '{device}' memory: only dense CPU tensors can be pinned"),
    # packed sequences: lengths and batch_sizes must be CPU tensors, even with CUDA data
    DeviceRule(
        "torch._pack_padded_sequence",
        "same",
        SAME.cuda_says,
        free=(1, "lengths"),
        cpu_outputs=(1,),
    ),
    DeviceRule(
        "torch._pad_packed_sequence",
        "same",
        SAME.cuda_says,
        free=(1, "batch_sizes"),
        cpu_outputs=(1,),
    ),
    DeviceRule("torch.lstm", "same", SAME.cuda_says, free=(1,)),
    DeviceRule("torch.gru", "same", SAME.cuda_says, free=(1,)),
    DeviceRule("torch.rnn_tanh", "same", SAME.cuda_says, free=(1,)),
    DeviceRule("torch.rnn_relu", "same", SAME.cuda_says, free=(1,)),
    # cuDNN's CTC wants its targets and lengths on the CPU; the native kernel moves them
    DeviceRule(
        "torch.nn.functional.ctc_loss",
        "same",
        SAME.cuda_says,
        free=(1, 2, 3, "targets", "input_lengths", "target_lengths"),
    ),
)

BY_OP: dict[str, DeviceRule] = {rule.op: rule for rule in RULES}


def op_name(func: object) -> str:
    """A readable, stable name for what ``__torch_function__`` was handed.

    ``torch.cat``, ``Tensor.add_``, ``Tensor.device.__get__``,
    ``torch.nn.functional.linear``.
    """
    qualname = getattr(func, "__qualname__", "") or ""
    name = getattr(func, "__name__", "") or ""
    owner = getattr(func, "__self__", None)
    if qualname.startswith("getset_descriptor.") and owner is not None:
        return f"Tensor.{owner.__name__}.{name}"
    if qualname.startswith(("TensorBase.", "Tensor.")):
        return "Tensor." + qualname.split(".", 1)[1]
    if qualname.startswith("_VariableFunctionsClass."):
        return "torch." + name
    module = getattr(func, "__module__", None) or ""
    if module == "torch._C._nn":
        return "torch.nn.functional." + name
    if module == "torch._C._linalg":
        return "torch.linalg." + name
    if module == "torch._C._special":
        return "torch.special." + name
    if module == "torch._C._fft":
        return "torch.fft." + name
    if module and qualname:
        return f"{module}.{qualname}"
    return name or repr(func)


def is_inplace(name: str) -> bool:
    """``add_``, ``__iadd__``: the first tensor is written, so it is an output."""
    last = name.rsplit(".", 1)[-1]
    if last in _INPLACE_DUNDERS:
        return True
    return last.endswith("_") and not last.endswith("__")


_INPLACE_DUNDERS = frozenset(
    f"__i{op}__"
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift", "matmul")
)
