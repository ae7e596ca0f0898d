"""The one place where module calls are intercepted.

devlint replaces ``torch.nn.Module.__call__`` while at least one activation is
live, and puts the original back when the last one ends. Why not hooks:

- the global ``register_module_forward_pre_hook`` never sees keyword arguments,
  and the global forward hook sees them only after forward has run;
- any hook, global or per module, sends the module down torch's slow call path
  (measured: Linear(64, 64) from 7.8 to 10.9 µs a call), whereas a wrapper
  around ``__call__`` costs well under a microsecond and keeps the fast path;
- nothing is stored on the user's modules, so a model pickled, deep-copied or
  scripted inside a checked block carries no trace of devlint.

Activations from ``with check_devices()`` belong to the thread that entered
them (two threads checking their own models do not see each other's settings);
``enable()`` holds one activation for every thread.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from devlint.runtime.callsite import CallSite, first_user_frame, frames_between, outermost_frame_of
from devlint.runtime.errors import DeviceCheckSkippedWarning, DeviceMismatchWarning
from devlint.runtime.mismatch import Mismatch, ModulePlace
from devlint.runtime.tensors import CallTensors, call_is_consistent
from devlint.runtime.watch import Watch


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.watches: list[Watch] = []
        # The outermost module whose call is under way in this thread.
        self.root: nn.Module | None = None


_thread = _ThreadState()
_session: Watch | None = None
_lock = threading.Lock()
_live = 0  # activations in all threads, the session's included
_original_call: Callable[..., Any] | None = None

# Module types whose inner calls devlint cannot see (TorchScript, torch.compile);
# None for ordinary types. Looked up by type on every call, so a dict.
_opaque_kinds: dict[type, str | None] = {}
_said_opaque: set[str] = set()


def _checked_call(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
    # Every nn.Module call in the process passes here while the mode is live,
    # so the path for "nothing to check" comes first and stays short.
    state = _thread
    watches = state.watches
    if (not watches and _session is None) or _compiling():
        return _original_call(self, *args, **kwargs)  # type: ignore[misc]
    if state.root is not None:
        _check(self, args, kwargs, watches)
        return _original_call(self, *args, **kwargs)  # type: ignore[misc]
    state.root = self
    try:
        _check(self, args, kwargs, watches)
        return _original_call(self, *args, **kwargs)  # type: ignore[misc]
    finally:
        state.root = None


def _compiling() -> bool:
    # Dynamo traces through Module.__call__; inside a compiled region the
    # modules' calls run as a graph, and only the compiled module's own call is
    # checked (see _opaque_kind). torch.compiler.is_compiling() is what Dynamo
    # understands as "constant True while tracing".
    return torch.compiler.is_compiling()


def _check(module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any], watches: list[Watch]) -> None:
    watch = None
    for candidate in reversed(watches):
        if candidate.members is None or id(module) in candidate.members:
            watch = candidate
            break
    else:
        session = _session
        if session is not None and session.covers(module):
            watch = session
    if watch is None:
        return
    cls = type(module)
    kind = _opaque_kinds.get(cls, "")
    if kind == "":
        kind = _opaque_kinds[cls] = _opaque_kind(cls)
    if kind is not None:
        _say_opaque(kind, cls)
    if not call_is_consistent(module, args, kwargs, watch.parameterless):
        _report(watch, module, args, kwargs)


def _opaque_kind(cls: type) -> str | None:
    if issubclass(cls, torch.jit.ScriptModule):
        return "TorchScript"
    dynamo = sys.modules.get("torch._dynamo.eval_frame")
    optimized = getattr(dynamo, "OptimizedModule", None)
    if optimized is not None and issubclass(cls, optimized):
        return "torch.compile"
    return None


def _say_opaque(kind: str, cls: type) -> None:
    if kind in _said_opaque:
        return
    _said_opaque.add(kind)
    frame = first_user_frame(sys._getframe(1))
    level = frames_between(sys._getframe(0), frame) + 1 if frame is not None else 2
    warnings.warn(
        f"devlint.runtime checks the inputs of {kind} modules such as {cls.__name__}, "
        f"but not the module calls inside them: {kind} runs those without Python. "
        "(Said once per process.)",
        DeviceCheckSkippedWarning,
        stacklevel=level,
    )


def _report(watch: Watch, module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    # accelerate's dispatch hooks (device_map="auto", CPU offload) wrap forward
    # and move weights and inputs only once forward starts: before that, a
    # split is expected and not a bug.
    if "_hf_hook" in module.__dict__:
        return
    if watch.exempt_types and isinstance(module, watch.exempt_types):
        return
    mismatch = Mismatch.judge(CallTensors.collect(module, args, kwargs))
    if mismatch is None:
        return
    here = sys._getframe(0)
    user = first_user_frame(here)
    outer = outermost_frame_of(_checked_call.__code__, here)
    root_user = first_user_frame(outer.f_back) if outer is not None else None
    place = ModulePlace.find(module, _thread.root, root_user)
    if watch.exempts(module, place.relative, place.display):
        return
    error = mismatch.error(
        module,
        place,
        CallSite.of(user) if user is not None else None,
        CallSite.of(root_user) if root_user is not None else None,
    )
    if watch.mode == "raise":
        raise error
    level = frames_between(here, user) + 1 if user is not None else 1
    warnings.warn(error.message, DeviceMismatchWarning, stacklevel=level)


def _install() -> None:
    global _original_call, _live
    with _lock:
        if _live == 0 and nn.Module.__call__ is not _checked_call:
            _original_call = nn.Module.__call__
            nn.Module.__call__ = _checked_call  # type: ignore[method-assign]
        _live += 1


def _uninstall() -> None:
    global _live
    with _lock:
        _live -= 1
        # If someone else replaced __call__ after us, theirs stays: taking it
        # away would break them, and ours is inert with nothing live.
        if _live == 0 and nn.Module.__call__ is _checked_call:
            nn.Module.__call__ = _original_call  # type: ignore[method-assign]


def push(watch: Watch) -> None:
    """Start a ``with`` activation in this thread."""
    _install()
    _thread.watches.append(watch)


def pop(watch: Watch) -> None:
    """End a ``with`` activation of this thread (the innermost, normally)."""
    watches = _thread.watches
    for i in range(len(watches) - 1, -1, -1):
        if watches[i] is watch:
            del watches[i]
            _uninstall()
            return


def start_session(watch: Watch) -> None:
    """``enable()``: one activation for every thread, replacing an earlier one."""
    global _session
    with _lock:
        had = _session is not None
        _session = watch
    if not had:
        _install()


def end_session() -> bool:
    """``disable()``; False when no session was on."""
    global _session
    with _lock:
        had = _session is not None
        _session = None
    if had:
        _uninstall()
    return had


def session_on() -> bool:
    return _session is not None


def is_installed() -> bool:
    """Whether module calls are intercepted right now (for tests)."""
    return nn.Module.__call__ is _checked_call


def active_watches() -> tuple[Watch, ...]:
    """This thread's activations, outermost first, then the session's (for tests)."""
    return (*_thread.watches, *(() if _session is None else (_session,)))
