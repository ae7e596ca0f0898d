"""libcst's parser, with the node constructors trimmed to what a parse needs.

libcst's native parser builds every node by calling its class, so a parse
spends a third of its time in the dataclass `__init__`s and the checks they
run. Two things in them are needless for a tree the parser builds:

- `__post_init__` validates the fields (that a Name is an identifier, that
  whitespace is whitespace...). That guards trees people build by hand; the
  parser only builds valid ones (libcst's own comment on
  `CSTNode.__post_init__` says as much).
- A frozen dataclass stores each field through `object.__setattr__`, looked up
  anew per field; the node classes keep their fields in slots, whose setters
  can be bound once.

While devlint's parser runs, each node class gets a constructor that stores
the same values in the same slots and nothing else; nodes built anywhere else,
fixes included, go through libcst's own. A test pins that trees come out
identical either way.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
import types
from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst._nodes.base import CSTNode

_lock = threading.Lock()
_VALIDATING_POST_INIT = CSTNode.__post_init__


def _skip_validation(self: CSTNode) -> None:
    return None


@functools.cache
def _template(arity: int) -> types.CodeType:
    """Code storing `arity` arguments through setters `_s<i>`, calling factory `_f<i>` for an omitted one."""
    params = "".join(f", p{i}" for i in range(arity))
    body = [f"    _s{i}(self, _f{i}() if p{i} is _MISSING else p{i})" for i in range(arity)] or ["    pass"]
    namespace: dict[str, Any] = {}
    exec(f"def __init__(self{params}):\n" + "\n".join(body) + "\n", namespace)  # noqa: S102 - fixed text
    return namespace["__init__"].__code__


def _slot_init(cls: type[CSTNode]) -> Callable[..., None] | None:
    """A constructor for `cls` storing what its dataclass one stores, or None when its layout is unexpected.

    One compiled template per number of fields serves every class: its
    parameters are renamed to the class's fields, and its globals hold that
    class's slot setters and default factories.
    """
    fields = dataclasses.fields(cls)
    scope: dict[str, Any] = {"_MISSING": dataclasses.MISSING, "__builtins__": {}}
    defaults: list[object] = []
    for number, field in enumerate(fields):
        slot = getattr(cls, field.name, None)
        if not field.init or type(slot).__name__ != "member_descriptor":
            return None
        scope[f"_s{number}"] = slot.__set__
        if field.default is not dataclasses.MISSING:
            defaults.append(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            scope[f"_f{number}"] = field.default_factory
            defaults.append(dataclasses.MISSING)
        elif defaults:
            return None  # a required field after a defaulted one: not a dataclass layout
    code = _template(len(fields)).replace(co_varnames=("self", *(field.name for field in fields)))
    init = types.FunctionType(code, scope, "__init__", tuple(defaults) or None)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _node_classes() -> dict[type[CSTNode], tuple[Callable[..., None], Callable[..., None]]]:
    """Each concrete node class the parser builds, with its own and its trimmed constructor."""
    pairs: dict[type[CSTNode], tuple[Callable[..., None], Callable[..., None]]] = {}
    for value in vars(cst).values():
        if isinstance(value, type) and issubclass(value, CSTNode) and "__init__" in value.__dict__ and not inspect.isabstract(value):
            trimmed = _slot_init(value)
            if trimmed is not None:
                pairs[value] = (value.__dict__["__init__"], trimmed)
    return pairs


_CONSTRUCTORS = _node_classes()


def parse_module(text: str) -> cst.Module:
    with _lock:  # one parse at a time, so libcst's constructors always come back
        try:
            CSTNode.__post_init__ = _skip_validation  # type: ignore[method-assign]
            for cls, (_, trimmed) in _CONSTRUCTORS.items():
                cls.__init__ = trimmed  # type: ignore[method-assign]
            return cst.parse_module(text)
        finally:
            for cls, (own, _) in _CONSTRUCTORS.items():
                cls.__init__ = own  # type: ignore[method-assign]
            CSTNode.__post_init__ = _VALIDATING_POST_INIT  # type: ignore[method-assign]
