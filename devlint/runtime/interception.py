"""The one place where module calls are intercepted.

While at least one activation is live, every ``nn.Module`` call passes through
``_checked_call``. Two kinds of module are treated differently:

- torch.nn's own layers (``Linear``, ``Conv2d``, ``Embedding``, the losses...)
  combine their inputs with their parameters as soon as they run, so a
  mismatch among them is checked *before* the call: PyTorch does not raise
  for every device pair (CPU with meta, for one), and the message can name
  each tensor;
- every other module (yours, a library's) runs code that may move its inputs
  itself (transformers moves CPU ``labels`` to the logits' device), so its
  inputs are not judged; when an operation in its code fails because two
  devices met, the innermost module under way is named instead.

How calls are intercepted: the code of ``nn.Module.__call__`` is swapped for a
two-line trampoline while the mode is live. Replacing the attribute itself
(``nn.Module.__call__ = wrapper``) would invalidate Python's method caches of
every Module subclass in the process, which costs 60 µs with torch alone and
about 0.5 ms with timm and transformers imported, on every block entered and
left, and makes the next step re-specialise all of its bytecode. Swapping a
function's code touches no type. Hooks are no alternative: the global
pre-hook never sees keyword arguments, and any hook sends each module down
torch's slower call path. Nothing is stored on the user's modules.

Activations from ``with check_devices()`` belong to the thread that entered
them (two threads checking their own models do not see each other's settings);
``enable()`` holds one activation for every thread.
"""

from __future__ import annotations

import sys
import threading
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from devlint.runtime.callsite import CallSite, first_user_frame, frames_between, is_internal, outermost_frame_of
from devlint.runtime.errors import DeviceCheckSkippedWarning, DeviceMismatchError, DeviceMismatchWarning
from devlint.runtime.failures import first_line, is_device_error
from devlint.runtime.mismatch import Mismatch, ModulePlace
from devlint.runtime.tensors import CallTensors, call_is_consistent, paths_of, without_host_arguments
from devlint.runtime.watch import Watch


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.watches: list[Watch] = []


_thread = _ThreadState()
_session: Watch | None = None
_lock = threading.Lock()
_live = 0  # activations in all threads, the session's included

# nn.Module.__call__ itself (its identity never changes), a copy of it to call
# while its code is swapped, and the trampoline swapped in.
_CALL: types.FunctionType = nn.Module.__call__  # type: ignore[assignment]
_ORIGINAL_CODE = _CALL.__code__
_original_call: Callable[..., Any] = types.FunctionType(
    _ORIGINAL_CODE, _CALL.__globals__, _CALL.__name__, _CALL.__defaults__, _CALL.__closure__
)
_original_call.__kwdefaults__ = _CALL.__kwdefaults__
# The trampoline runs with torch.nn.modules.module's globals, where it finds
# the checked call under this name. The name stays after the mode ends: a
# thread already inside the trampoline at that moment still reaches it, and
# with nothing live it only calls the original.
_GLOBAL = "_devlint_checked_call"
_TRAMPOLINE = compile(
    f"def {_CALL.__name__}(self, *args, **kwargs):\n"
    "    __tracebackhide__ = True  # pytest: the traceback ends in user code\n"
    f"    return {_GLOBAL}(self, args, kwargs)\n",
    __file__,
    "exec",
).co_consts[0]

# What to do before a call of each module type; looked up on every call.
_LAYER = "layer"  # torch.nn's own layer: its inputs meet its tensors at once
_CODE = "code"  # anything else: its inputs are judged only where they meet
_kinds: dict[type, str] = {}
_said_once: set[str] = set()

# Dynamo traces through Module.__call__ and reads this as constant True while
# tracing, so a compiled region runs the modules' calls as a graph, unchecked
# (the compiled module's own call is checked, and _say_opaque says so).
# is_dynamo_compiling is a plain `return False` in eager code: 40 ns, where
# is_compiling() costs 140 ns on every module call.
# (torch < 2.3 has neither; there torch._dynamo.is_compiling is the same test.)
_compiling: Callable[[], bool] = getattr(torch.compiler, "is_dynamo_compiling", None) or getattr(
    torch.compiler, "is_compiling", None
) or (lambda: torch._dynamo.is_compiling())


def _checked_call(self: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
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
    if watch is None or _compiling():
        return _original_call(self, *args, **kwargs)
    kind = _kinds.get(type(self))
    if kind is None:
        kind = _classify(type(self))
    if kind is _LAYER:
        error = None
        try:
            if not call_is_consistent(self, args, kwargs, watch.parameterless):
                error = _report(watch, self, args, kwargs)
        except Warning:
            raise  # mode="warn" under -W error: what the user asked for
        except Exception as bug:  # noqa: BLE001 - a devlint bug must not stop the model
            _say_failed(self, bug)
        if error is not None:
            __tracebackhide__ = True  # pytest: the traceback ends in user code
            raise error
    elif kind is not _CODE:
        _say_opaque(kind, type(self))
    try:
        return _original_call(self, *args, **kwargs)
    except RuntimeError as failure:
        __tracebackhide__ = True
        if kind is _LAYER and watch.mode == "warn" and not _agrees(self, args, kwargs, watch):
            raise  # the mismatch was warned about before the call
        explained = _explain(watch, self, args, kwargs, failure)
        if explained is None:
            raise
        # The traceback still leads to the operation that failed.
        raise explained.with_traceback(failure.__traceback__) from None


def _agrees(module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any], watch: Watch) -> bool:
    try:
        return call_is_consistent(module, args, kwargs, watch.parameterless)
    except Exception:  # noqa: BLE001 - said once already, before the call
        return True


def _classify(cls: type) -> str:
    kind = _opaque_kind(cls)
    if kind is None:
        forward = getattr(cls, "forward", None)
        kind = _LAYER if getattr(forward, "__module__", "").startswith("torch.nn.modules.") else _CODE
    _kinds[cls] = kind
    return kind


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
        f"devlint.runtime names the {kind} modules such as {cls.__name__} where a device "
        f"mismatch happens, but not the module calls inside them: {kind} runs those without Python. "
        "(Said once per process.)",
        DeviceCheckSkippedWarning,
        stacklevel=level,
    )


def _report(
    watch: Watch, module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> DeviceMismatchError | None:
    """The error to raise before a layer's call, or None after warning (mode "warn") or when nothing is wrong."""
    # accelerate's dispatch hooks (device_map="auto", CPU offload) wrap forward
    # and move weights and inputs only once forward starts: before that, a
    # split is expected and not a bug.
    if "_hf_hook" in module.__dict__:
        return None
    if watch.exempt_types and isinstance(module, watch.exempt_types):
        return None
    args, kwargs = without_host_arguments(module, args, kwargs)
    mismatch = Mismatch.judge(CallTensors.collect(module, args, kwargs))
    if mismatch is None:
        return None
    return _raise_or_warn(watch, module, mismatch, sys._getframe(0))


def _explain(
    watch: Watch, module: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any], failure: RuntimeError
) -> DeviceMismatchError | None:
    """The error naming this module for a device error PyTorch raised in its code, or None to let it pass.

    Only the innermost watched module explains a failure: the others see it
    marked, or already a DeviceMismatchError (devlint's or the simulation's).
    """
    if isinstance(failure, DeviceMismatchError) or getattr(failure, "_devlint_seen", False):
        return None
    try:
        failure._devlint_seen = True  # type: ignore[attr-defined]
        message = str(failure)
        if not is_device_error(message):
            return None
        if "_hf_hook" in module.__dict__ or (watch.exempt_types and isinstance(module, watch.exempt_types)):
            return None
        args, kwargs = without_host_arguments(module, args, kwargs)
        tensors = CallTensors.collect(module, args, kwargs)
        mismatch = Mismatch.judge(tensors) or Mismatch.unexplained(tensors)
        failed_at = _failing_line(failure)
        return _raise_or_warn(watch, module, mismatch, sys._getframe(0), first_line(message), failed_at)
    except Warning:
        raise
    except Exception as bug:  # noqa: BLE001 - the user's own error must come through
        _say_failed(module, bug)
        return None


def _failing_line(failure: BaseException) -> CallSite | None:
    """The innermost line outside torch and devlint in the failure's traceback."""
    tb = failure.__traceback__
    found = None
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            found = tb
        tb = tb.tb_next
    if found is None:
        return None
    return CallSite.at(found.tb_frame, found.tb_lineno)


def _raise_or_warn(
    watch: Watch,
    module: nn.Module,
    mismatch: Mismatch,
    here: Any,
    failure: str | None = None,
    failed_at: CallSite | None = None,
) -> DeviceMismatchError | None:
    user = first_user_frame(here)
    # The outermost module call under way in this thread is the model the
    # user called; its frame in this wrapper holds it as `self`, and its inputs.
    outer = outermost_frame_of(_checked_call.__code__, here)
    root = outer.f_locals.get("self") if outer is not None else None
    root_user = first_user_frame(outer.f_back) if outer is not None else None
    place = ModulePlace.find(module, root if isinstance(root, nn.Module) else None, root_user)
    if watch.exempts(module, place.relative, place.display):
        return None
    root_inputs: tuple[str, ...] = ()
    if outer is not None and root is not module:
        root_inputs = paths_of(
            (p.tensor for p in mismatch.offenders if p.kind == "input"),
            outer.f_locals.get("args", ()),
            outer.f_locals.get("kwargs", {}),
        )
    error = mismatch.error(
        module,
        place,
        CallSite.of(user) if user is not None else None,
        CallSite.of(root_user) if root_user is not None else None,
        root_inputs=root_inputs,
        failure=failure,
        failed_at=failed_at,
    )
    if watch.mode == "raise":
        return error
    level = frames_between(sys._getframe(0), user) + 1 if user is not None else 1
    warnings.warn(error.message, DeviceMismatchWarning, stacklevel=level)
    return None


def _install() -> None:
    global _live
    with _lock:
        if _live == 0:
            _CALL.__globals__[_GLOBAL] = _checked_call
            _CALL.__code__ = _TRAMPOLINE
        _live += 1


def _uninstall() -> None:
    global _live
    with _lock:
        _live -= 1
        if _live == 0:
            _CALL.__code__ = _ORIGINAL_CODE


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


def pop_owned_by(owner: object) -> None:
    """End this thread's innermost activation started by ``owner`` (a ``check_devices()`` object)."""
    watches = _thread.watches
    for i in range(len(watches) - 1, -1, -1):
        if watches[i].owner is owner:
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
    return _CALL.__code__ is _TRAMPOLINE


def active_watches() -> tuple[Watch, ...]:
    """This thread's activations, outermost first, then the session's (for tests)."""
    return (*_thread.watches, *(() if _session is None else (_session,)))
