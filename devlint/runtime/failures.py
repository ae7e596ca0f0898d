"""PyTorch's own errors that say two devices met in one operation.

devlint lets a module's code run and names the module when PyTorch refuses an
operation inside it; these are the messages that mean a device mismatch (and
not, say, a shape or dtype error), as the CPU, CUDA, MPS and meta kernels word
them. Imports nothing from torch.
"""

from __future__ import annotations

import re

_DEVICE_WORDING = re.compile(
    "|".join(
        (
            r"on the same device",  # TensorIterator and most kernels; "as the indexed tensor" too
            r"found at least two devices",
            r"Expected object of device type",
            r"is not on the expected device",  # meta against a real device
            r"but expected it to be on",  # "Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU"
            r"are not at the same device",  # RNNs: input and parameter / hidden tensors
            r"to be on the same device",
        )
    )
)

# Convolutions word a device mismatch as a type mismatch:
# "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same"
_TYPE_PAIR = re.compile(r"Input type \(([^)]*)\) and (?:weight|bias) type \(([^)]*)\) should be the same")


def _backend(type_name: str) -> str:
    lowered = type_name.lower()
    for backend in ("cuda", "mps", "xpu", "meta"):
        if backend in lowered:
            return backend
    return "cpu"


def is_device_error(message: str) -> bool:
    """Whether an error PyTorch raised says that tensors on two devices met."""
    if _DEVICE_WORDING.search(message):
        return True
    pair = _TYPE_PAIR.search(message)
    return pair is not None and _backend(pair[1]) != _backend(pair[2])


def first_line(message: str) -> str:
    """The line of a (possibly TorchScript-wrapped) message that names the mismatch."""
    for line in message.splitlines():
        if is_device_error(line):
            return line.strip()
    return message.strip().splitlines()[0] if message.strip() else ""
