"""The error and warning raised by the runtime device checks.

This module imports nothing from torch so that other parts of devlint (the
simulated-CUDA plugin, the pytest plugin) can name the exception cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Misplaced:
    """One tensor that is not on the device the module expects.

    ``where`` is a path such as ``args[0]``, ``kwargs["mask"]`` or
    ``param weight``; ``device``, ``shape`` and ``dtype`` are strings as
    PyTorch prints them (``cuda:0``, ``(8, 64)``, ``torch.float32``).
    """

    where: str
    device: str
    shape: str = ""
    dtype: str = ""


# repr=False and eq=False keep the exception's own repr (DeviceMismatchError('...'))
# and its identity semantics, which the traceback machinery relies on.
@dataclass(repr=False, eq=False)
class DeviceMismatchError(RuntimeError):
    """A module was called with tensors on more than one device.

    Construct it with the message alone, ``DeviceMismatchError("...")``; the
    other attributes are optional structured details for programs that catch
    the error:

    - ``module_path``: the module's path in the model, e.g. ``model.encoder.0``
    - ``module_type``: the module's class name, e.g. ``Linear``
    - ``expected``: the device the module's parameters (or first input) are on
    - ``offenders``: the tensors found elsewhere, as ``Misplaced`` records
    - ``call_site``: ``"file.py:12"``, the line of user code that made the call
    """

    message: str
    module_path: str = ""
    module_type: str = ""
    expected: str = ""
    offenders: tuple[Misplaced, ...] = field(default_factory=tuple)
    call_site: str = ""

    def __post_init__(self) -> None:
        RuntimeError.__init__(self, self.message)

    def __str__(self) -> str:
        return self.message


class DeviceMismatchWarning(RuntimeWarning):
    """Issued instead of DeviceMismatchError when the mode is ``"warn"``."""


class DeviceCheckSkippedWarning(RuntimeWarning):
    """The checks could not run somewhere (TorchScript, torch.compile); said once."""
