"""The DeviceMismatchError that simulated CUDA raises, with its context.

Built only on the error path, so it may be slow: it walks the Python stack to
find the module whose ``forward`` was running and the user's line, and looks
up the names the user gave to the tensors involved.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

import torch

from devlint.runtime.errors import DeviceMismatchError, Misplaced

from .tags import device_of

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_DEVLINT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_LIBRARY_DIRS = (_TORCH_DIR, _DEVLINT_DIR, os.path.dirname(os.__file__) + os.sep)


class HostMemoryError(DeviceMismatchError, TypeError):
    """``.numpy()`` on a (simulated) CUDA tensor: real PyTorch raises TypeError here."""

    __hash__ = DeviceMismatchError.__hash__


def is_user_frame(frame: FrameType) -> bool:
    filename = frame.f_code.co_filename
    if filename.startswith("<"):
        # "<string>" and "<stdin>" are the user's; "<frozen importlib...>" is not
        return not filename.startswith("<frozen")
    if "site-packages" in filename or "dist-packages" in filename:
        return False
    return not os.path.abspath(filename).startswith(_LIBRARY_DIRS)


def _frames() -> Iterator[FrameType]:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        yield frame
        frame = frame.f_back


def user_frames() -> list[FrameType]:
    """User-code frames, innermost first."""
    return [f for f in _frames() if is_user_frame(f)]


def _where(frame: FrameType) -> str:
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _located(frame: FrameType) -> str:
    line = _source_line(frame)
    return f"{_where(frame)}: {line}" if line else _where(frame)


def _source_line(frame: FrameType) -> str:
    import linecache

    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()


def forward_modules() -> list[tuple[torch.nn.Module, FrameType]]:
    """Modules whose ``forward`` is on the stack, outermost first."""
    found = []
    for frame in _frames():
        if frame.f_code.co_name != "forward":
            continue
        module = frame.f_locals.get("self")
        if isinstance(module, torch.nn.Module):
            found.append((module, frame))
    found.reverse()
    return found


def _name_in(frame: FrameType, target: object) -> str | None:
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in scope.items():
            if value is target and not name.startswith("__"):
                return name
    return None


def module_path() -> tuple[str, str, dict[int, str]]:
    """(path, class name, {id(tensor): qualified parameter name}) of the running module."""
    stack = forward_modules()
    if not stack:
        return "", "", {}
    root, root_frame = stack[0]
    inner = stack[-1][0]
    root_name = None
    frame = root_frame.f_back
    while frame is not None and root_name is None:
        if is_user_frame(frame):
            root_name = _name_in(frame, root)
            break
        frame = frame.f_back
    root_name = root_name or type(root).__name__
    path = root_name
    for name, sub in root.named_modules():
        if sub is inner:
            path = f"{root_name}.{name}" if name else root_name
            break
    owned: dict[int, str] = {}
    for prefix_module, prefix in ((inner, path),):
        for name, tensor in prefix_module.named_parameters(recurse=False):
            owned[id(tensor)] = f"{prefix}.{name}"
        for name, tensor in prefix_module.named_buffers(recurse=False):
            owned[id(tensor)] = f"{prefix}.{name}"
        for name, value in vars(prefix_module).items():
            if isinstance(value, torch.Tensor) and id(value) not in owned:
                owned[id(value)] = f"{prefix}.{name}"
    return path, type(inner).__name__, owned


def describe(t: torch.Tensor) -> tuple[str, str, str]:
    return str(device_of(t)), str(tuple(t.shape)), str(t.dtype)


def mismatch(
    op: str,
    tensors: list[tuple[str, torch.Tensor]],
    expected: torch.device | None,
    cuda_says: str,
    *,
    error: type[DeviceMismatchError] = DeviceMismatchError,
    headline: str = "",
    said: str = "",
) -> DeviceMismatchError:
    """The error for ``op`` called with ``tensors`` (label, tensor) that do not fit.

    ``expected`` is the device the others should have been on; when None it
    is chosen: the running module's parameters' device, else the accelerator.
    """
    path, module_type, owned = module_path()
    frames = user_frames()
    devices: list[torch.device] = []
    for _, t in tensors:
        d = device_of(t)
        if d not in devices:
            devices.append(d)
    if expected is None:
        # the simulation's premise: the code means to run on the GPU, so the
        # tensors left elsewhere are the strays
        accelerators = [d for d in devices if d.type == "cuda"]
        expected = (accelerators or devices)[0]
    inner = frames[0] if frames else None
    rows = []
    offenders = []
    for label, t in tensors:
        device, shape, dtype = describe(t)
        name = owned.get(id(t)) or (_name_in(inner, t) if inner is not None else None)
        shown = f"{label} ({name})" if name and name != label else label
        odd = device_of(t) != expected
        rows.append((shown, device, f"shape {shape}", dtype, "<- not on " + str(expected) if odd else ""))
        if odd:
            offenders.append(Misplaced(shown, device, shape, dtype))
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(4)]
    headline = headline or f"got tensors on different devices ({', '.join(map(str, devices))})"
    lines = [f"simulated CUDA: {op} {headline}"]
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(4)]
        lines.append(("  " + "  ".join(cells) + ("  " + row[4] if row[4] else "")).rstrip())
    if path:
        lines.append(f"  in module {path} ({module_type})")
    if inner is not None:
        lines.append(f"  at {_located(inner)}")
        for outer in frames[1:3]:
            lines.append(f"  called from {_located(outer)}")
    if not said:
        shown_devices = " and ".join(str(d) for d in sorted(devices, key=lambda d: d.type != "cuda"))
        said = cuda_says.format(devices=shown_devices, device=expected)
    lines.append(f"On a real GPU PyTorch raises: {said}")
    return error(
        "\n".join(lines),
        module_path=path,
        module_type=module_type,
        expected=str(expected),
        offenders=tuple(offenders),
        call_site=_where(inner) if inner is not None else "",
    )


_PARAMETERS: dict[Any, list[str]] | None = None


def parameter_names(func: Any) -> list[str]:
    """The parameter names of a torch function, from torch's own override table."""
    global _PARAMETERS
    if _PARAMETERS is None:
        import inspect

        _PARAMETERS = {}
        try:
            overrides = torch.overrides.get_testing_overrides()
        except Exception:  # the table is a test aid; names are a nicety
            overrides = {}
        for key, fake in overrides.items():
            try:
                _PARAMETERS[key] = list(inspect.signature(fake).parameters)
            except (TypeError, ValueError):
                continue
    try:
        return _PARAMETERS.get(func, [])
    except TypeError:
        return []


def label_tensors(
    op: str, args: tuple[Any, ...], kwargs: dict[str, Any], func: Any = None
) -> list[tuple[str, torch.Tensor]]:
    """Every tensor in a call, labelled as the user would read it."""
    method = op.startswith("Tensor.")
    names = parameter_names(func) if func is not None else []
    found: list[tuple[str, torch.Tensor]] = []

    def visit(label: str, value: Any, depth: int) -> None:
        if isinstance(value, torch.Tensor):
            found.append((label, value))
        elif isinstance(value, (list, tuple)) and depth < 2:
            for i, item in enumerate(value):
                visit(f"{label}[{i}]", item, depth + 1)

    for i, value in enumerate(args):
        label = "self" if method and i == 0 else (f"args[{i - 1}]" if method else f"args[{i}]")
        if i < len(names) and names[i] not in ("self", "args", "kwargs") and not names[i].startswith("*"):
            label = f"{names[i]}={label}" if label != "self" else label
        visit(label, value, 0)
    for key, value in kwargs.items():
        visit(f'kwargs["{key}"]', value, 0)
    return found
