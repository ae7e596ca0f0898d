"""What one activation of the mode watches, and how it reacts."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from torch import nn

Mode = Literal["raise", "warn"]
MODES: tuple[Mode, ...] = ("raise", "warn")

Exemption = type | str


@dataclass(frozen=True)
class Watch:
    """One ``check_devices(...)`` block or ``enable(...)`` call.

    ``model`` None watches every module. ``exempt`` holds module types and
    path patterns (fnmatch, matched against the path inside the outermost model
    such as ``encoder.layers.*``, and against the path with that model's name in
    front such as ``model.encoder.layers.*``). ``parameterless`` says whether a
    module with no parameters or buffers checks that its inputs agree.
    """

    model: nn.Module | None = None
    mode: Mode = "raise"
    exempt_types: tuple[type, ...] = ()
    exempt_patterns: tuple[str, ...] = ()
    parameterless: bool = True
    # ids of the watched model's modules, taken when the block is entered.
    members: frozenset[int] | None = field(default=None, compare=False)
    # The check_devices() object that started it, so that its exit ends its own.
    owner: object = field(default=None, compare=False, repr=False)

    @classmethod
    def build(
        cls,
        model: nn.Module | None,
        mode: str,
        exempt: Iterable[Exemption] | Exemption | None,
        parameterless: bool,
        owner: object = None,
    ) -> Watch:
        if mode not in MODES:
            raise ValueError(f"mode must be 'raise' or 'warn', not {mode!r}")
        if model is not None and not isinstance(model, nn.Module):
            raise TypeError(f"check_devices() watches an nn.Module, not {type(model).__name__}")
        if exempt is None:
            items: list[Exemption] = []
        elif isinstance(exempt, (str, type)):
            items = [exempt]
        else:
            items = list(exempt)
        types: list[type] = []
        patterns: list[str] = []
        for item in items:
            if isinstance(item, str):
                patterns.append(item)
            elif isinstance(item, type):
                types.append(item)
            else:
                raise TypeError(
                    f"exempt takes module types and path patterns (str), not {type(item).__name__}"
                )
        return cls(
            model=model,
            mode=mode,  # type: ignore[arg-type]
            exempt_types=tuple(types),
            exempt_patterns=tuple(patterns),
            parameterless=parameterless,
            members=None if model is None else frozenset(id(m) for m in model.modules()),
            owner=owner,
        )

    def covers(self, module: nn.Module) -> bool:
        return self.members is None or id(module) in self.members

    def exempts(self, module: nn.Module, relative_path: str | None, display_path: str) -> bool:
        if self.exempt_types and isinstance(module, self.exempt_types):
            return True
        for pattern in self.exempt_patterns:
            if relative_path is not None and fnmatch.fnmatchcase(relative_path, pattern):
                return True
            if fnmatch.fnmatchcase(display_path, pattern):
                return True
        return False
