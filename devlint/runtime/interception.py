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
from devlint.runtime.errors import DeviceCheckSkippedWarning, DeviceMismatchError, DeviceMismatchWarning
from devlint.runtime.mismatch import Mismatch, ModulePlace
from devlint.runtime.tensors import CallTensors, call_is_consistent
from devlint.runtime.watch import Watch


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.watches: list[Watch] = []


_thread = _ThreadState()
_session: Watch | None = None
_lock = threading.Lock()
_live = 0  # activations in all threads, the session's included
_original_call: Callable[..., Any] | None = None

# Module types whose inner calls devlint cannot see (TorchScript, torch.compile)
# map to a name for them, ordinary types to None. Looked up on every call.
_opaque_kinds: dict[type, str | None] = {}
_said_once: set[str] = set()
_UNSEEN = "?"

# Dynamo traces through Module.__call__ and reads this as constant True while
# tracing, so a compiled region runs the modules' calls as a graph, unchecked
# (the compiled module's own call is checked, and _say_opaque says so).
# is_dynamo_compiling is a plain `return False` in eager code: 40 ns, where
# is_compiling() costs 140 ns on every module call.
# (torch < 2.3 has neither; there torch._dynamo.is_compiling is the same test.)
_compiling: Callable[[], bool] = getattr(torch.compiler, "is_dynamo_compiling", None) or getattr(
    torch.compiler, "is_compiling", None
) or (lambda: torch._dynamo.is_compiling())


def _checked_call(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
    # Every nn.Module call in the process passes here while the mode is live,
    # so this stays short: no bookkeeping per call, the outermost module and
    # the call sites are found from the stack only after a mismatch.
    watches = _thread.watches
    if watches:
        watch: Watch | None = watches[-1]
        if watch.members is not None and id(self) not in watch.members:  # type: ignore[union-attr]
            watch = _find_watch(self, watches)
    else:
        watch = _session
        if watch is not None and watch.members is not None and id(self) not in watch.members:
            watch = None
    if watch is not None and not _compiling():
        error = None
        try:
            kind = _opaque_kinds.get(type(self), _UNSEEN)
            if kind is not None:
                _opaque(type(self), kind)
            if not call_is_consistent(self, args, kwargs, watch.parameterless):
                error = _report(watch, self, args, kwargs)
        except Warning:
            raise  # mode="warn" under -W error: what the user asked for
        except Exception as bug:  # noqa: BLE001 - a devlint bug must not stop the model
            _say_failed(self, bug)
        if error is not None:
            __tracebackhide__ = True  # pytest: the traceback ends in user code
            raise error
    return _original_call(self, *args, **kwargs)  # type: ignore[misc]


def _say_failed(module: nn.Module, bug: Exception) -> None:
    if "failed" in _said_once:
        return
    _said_once.add("failed")
    warnings.warn(
        f"devlint.runtime could not check a call of {type(module).__name__} and let it run: "
        f"{type(bug).__name__}: {bug}. Please report this. (Said once per process.)",
        DeviceCheckSkippedWarning,
        stacklevel=3,
    )


def _find_watch(module: nn.Module, watches: list[Watch]) -> Watch | None:
    """The innermost activation of this thread that covers the module, else the session's."""
    for watch in reversed(watches):
        if watch.covers(module):
            return watch
    session = _session
    if session is not None and session.covers(module):
        return session
    return None


def _opaque(cls: type, kind: str) -> None:
    if kind == _UNSEEN:
        found = _opaque_kinds[cls] = _opaque_kind(cls)
        if found is None:
            return
        kind = found
    _say_opaque(kind, cls)


def _opaque_kind(cls: type) -> str | None:
    if issubclass(cls, torch.jit.ScriptModule):
        return "TorchScript"
    dynamo = sys.modules.get("torch._dynamo.eval_frame")
    optimized = getattr(dynamo, "OptimizedModule", None)
    if optimized is not None and issubclass(cls, optimized):
        return "torch.compile"
    return None


def _say_opaque(kind: str, cls: type) -> None:
    if kind in _said_once:
        return
    _said_once.add(kind)
    frame = first_user_frame(sys._getframe(1))
    level = frames_between(sys._getframe(0), frame) + 1 if frame is not None else 2
    warnings.warn(
        f"devlint.runtime checks the inputs of {kind} modules such as {cls.__name__}, "
        f"but not the module calls inside them: {kind} runs those without Python. "
        "(Said once per process.)",
        DeviceCheckSkippedWarning,
        stacklevel=level,
    )


def _report(
    watch: Watch, module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> DeviceMismatchError | None:
    """The error to raise, or None after warning (mode "warn") or when nothing is wrong after all."""
    # accelerate's dispatch hooks (device_map="auto", CPU offload) wrap forward
    # and move weights and inputs only once forward starts: before that, a
    # split is expected and not a bug.
    if "_hf_hook" in module.__dict__:
        return None
    if watch.exempt_types and isinstance(module, watch.exempt_types):
        return None
    mismatch = Mismatch.judge(CallTensors.collect(module, args, kwargs))
    if mismatch is None:
        return None
    here = sys._getframe(0)
    user = first_user_frame(here)
    # The outermost module call under way in this thread is the model the
    # user called; its frame in this wrapper holds it as `self`.
    outer = outermost_frame_of(_checked_call.__code__, here)
    root = outer.f_locals.get("self") if outer is not None else None
    root_user = first_user_frame(outer.f_back) if outer is not None else None
    place = ModulePlace.find(module, root if isinstance(root, nn.Module) else None, root_user)
    if watch.exempts(module, place.relative, place.display):
        return None
    error = mismatch.error(
        module,
        place,
        CallSite.of(user) if user is not None else None,
        CallSite.of(root_user) if root_user is not None else None,
    )
    if watch.mode == "raise":
        return error
    level = frames_between(here, user) + 1 if user is not None else 1
    warnings.warn(error.message, DeviceMismatchWarning, stacklevel=level)
    return None


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
            _forget_captured_wrapper()


def _forget_captured_wrapper() -> None:
    # Dynamo keeps the Module.__call__ it saw when first imported, to skip
    # straight to forward for modules that do not override __call__. Imported
    # inside a checked block, it saw this wrapper, and would compile every
    # module more slowly after the block ends.
    for name in ("torch._dynamo.utils", "torch._dynamo.variables.nn_module"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "unpatched_nn_module_call", None) is _checked_call:
            module.unpatched_nn_module_call = _original_call


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
