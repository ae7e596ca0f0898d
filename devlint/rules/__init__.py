"""Every rule lives in its own module here; importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from devlint.codes import ENGINE_CODES, RuleInfo
from devlint.rule import Rule

@cache
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                found.append(value)
    found.sort(key=lambda rule: rule.code)
    codes = [rule.code for rule in found]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(found)


def all_infos() -> tuple[RuleInfo, ...]:
    return tuple(sorted((*ENGINE_CODES, *(rule.info() for rule in all_rules())), key=lambda info: info.code))
