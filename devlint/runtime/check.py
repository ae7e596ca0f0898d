"""The public switches: ``check_devices()``, ``enable()``, ``disable()``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar, overload

from torch import nn

from devlint.runtime import interception
from devlint.runtime.watch import Exemption, Watch

F = TypeVar("F", bound=Callable[..., Any])


class DeviceCheck:
    """Checks the devices of every module call while active.

    Use it as a context manager (``with check_devices(): ...``) or as a
    decorator (``@check_devices()``); each entry is independent, so the same
    object may decorate a function that recurses or runs in several threads.
    """

    def __init__(
        self,
        model: nn.Module | None = None,
        *,
        mode: str = "raise",
        exempt: Iterable[Exemption] | Exemption | None = None,
        check_parameterless: bool = True,
    ) -> None:
        if exempt is not None and not isinstance(exempt, (str, type)):
            exempt = tuple(exempt)  # a generator would be spent by the first entry
        # Validate now, so that a typo fails where it is written. Without a
        # model the watch never changes, so every entry reuses this one: a
        # block entered around every training step costs a few microseconds.
        self._fixed = Watch.build(None, mode, exempt, check_parameterless, owner=self)
        if model is not None and not isinstance(model, nn.Module):
            raise TypeError(f"check_devices() watches an nn.Module, not {type(model).__name__}")
        self.model = model
        self.mode = mode
        self.exempt = exempt
        self.check_parameterless = check_parameterless

    def _watch(self) -> Watch:
        if self.model is None:
            return self._fixed
        # The member list of a watched model is taken at entry: modules added
        # to it later inside the block are not watched.
        return Watch.build(self.model, self.mode, self.exempt, self.check_parameterless, owner=self)

    def __enter__(self) -> DeviceCheck:
        interception.push(self._watch())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # The innermost activation this object started in this thread.
        interception.pop_owned_by(self)

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            watch = self._watch()
            interception.push(watch)
            try:
                return func(*args, **kwargs)
            finally:
                interception.pop(watch)

        return checked  # type: ignore[return-value]

    def __repr__(self) -> str:
        model = "" if self.model is None else f"{type(self.model).__name__}, "
        return f"check_devices({model}mode={self.mode!r})"


@overload
def check_devices(
    model: nn.Module | None = None,
    *,
    mode: str = "raise",
    exempt: Iterable[Exemption] | Exemption | None = None,
    check_parameterless: bool = True,
) -> DeviceCheck: ...


@overload
def check_devices(model: F) -> F: ...


def check_devices(
    model: Any = None,
    *,
    mode: str = "raise",
    exempt: Iterable[Exemption] | Exemption | None = None,
    check_parameterless: bool = True,
) -> Any:
    """Check that each module call has its parameters, buffers and inputs on one device.

    - ``model``: watch only this model's modules (taken when the block is
      entered); by default every ``nn.Module`` call in the current thread.
    - ``mode``: ``"raise"`` raises ``DeviceMismatchError``; ``"warn"`` issues a
      ``DeviceMismatchWarning`` and lets the call go on.
    - ``exempt``: module types, and fnmatch patterns for module paths inside
      the outermost model (``"encoder.layers.*"``), for modules split across
      devices on purpose (pipeline or model parallel).
    - ``check_parameterless``: whether a module without parameters or buffers
      checks that its inputs agree with each other.

    Bare ``@check_devices`` (without parentheses) works as a decorator too.
    """
    if callable(model) and not isinstance(model, nn.Module):
        return DeviceCheck()(model)
    return DeviceCheck(model, mode=mode, exempt=exempt, check_parameterless=check_parameterless)


def enable(
    model: nn.Module | None = None,
    *,
    mode: str = "raise",
    exempt: Iterable[Exemption] | Exemption | None = None,
    check_parameterless: bool = True,
) -> None:
    """Check every module call in every thread until ``disable()``; a second call replaces the settings."""
    interception.start_session(Watch.build(model, mode, exempt, check_parameterless))


def disable() -> None:
    """Stop what ``enable()`` started; does nothing when it is not on."""
    interception.end_session()


def is_enabled() -> bool:
    """Whether ``enable()`` is on (``with`` blocks are not counted)."""
    return interception.session_on()
