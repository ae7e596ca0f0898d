"""`[tool.devlint]` settings: loading, validation and rule selection."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """A bad configuration: the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    strict: bool = False
    # Names that teach the analysis a project's own vocabulary.
    device_variables: tuple[str, ...] = ()
    loaders: tuple[str, ...] = ()
    move_helpers: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the pyproject.toml the settings came from

    def fingerprint(self) -> str:
        """What about these settings changes findings: keys the cache."""
        return repr(
            (self.strict, self.device_variables, self.loaders, self.move_helpers)
        )


_LIST_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "extend-select": "extend_select",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
    "device-variables": "device_variables",
    "loaders": "loaders",
    "move-helpers": "move_helpers",
}
KNOWN_KEYS = frozenset({*_LIST_KEYS, "per-file-ignores", "strict"})


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.devlint] table, walking up from start."""
    start = Path(os.path.realpath(start))
    directory = start if start.is_dir() else start.parent
    for candidate in (directory, *directory.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            try:
                data = _read_toml(path)
            except ConfigError:
                # A broken pyproject on the way up is reported when it is the one in use.
                return path
            if "devlint" in data.get("tool", {}):
                return path
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def load_settings(path: Path | None, *, explicit: bool = False) -> Settings:
    """Settings from a pyproject.toml (or a devlint.toml given with --config)."""
    if path is None:
        return Settings()
    data = _read_toml(path)
    table = data.get("tool", {}).get("devlint")
    if table is None:
        # A file given with --config may be a bare table of devlint keys.
        table = data if explicit and path.name != "pyproject.toml" else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.devlint] must be a table")
    return settings_from_table(table, origin=path)


def settings_from_table(table: Mapping[str, Any], origin: Path) -> Settings:
    values: dict[str, Any] = {"root": origin.parent, "source": origin}
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{origin}: unknown key {key!r} in [tool.devlint] (known: {', '.join(sorted(KNOWN_KEYS))})")
        if key in _LIST_KEYS:
            values[_LIST_KEYS[key]] = _string_list(origin, key, value)
        elif key == "strict":
            if not isinstance(value, bool):
                raise ConfigError(f"{origin}: 'strict' must be true or false, not {value!r}")
            values["strict"] = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: 'per-file-ignores' must be a table of pattern = [codes]")
            values["per_file_ignores"] = tuple(
                (pattern, _string_list(origin, f"per-file-ignores.{pattern}", codes)) for pattern, codes in value.items()
            )
    settings = Settings(**values)
    for key, codes in (("select", settings.select), ("ignore", settings.ignore), ("extend-select", settings.extend_select)):
        validate_selectors(codes, f"{origin}: {key!r}")
    for pattern, codes in settings.per_file_ignores:
        validate_selectors(codes, f"{origin}: 'per-file-ignores.{pattern}'")
    return settings


def _string_list(origin: Path, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{origin}: {key!r} must be a list of strings, not {value!r}")
    return tuple(value)


def known_codes() -> tuple[str, ...]:
    from devlint.rules import all_infos

    return tuple(info.code for info in all_infos())


def validate_selectors(selectors: Iterable[str], where: str) -> None:
    codes = known_codes()
    for selector in selectors:
        if selector.upper() == "ALL":
            continue
        if not any(code.startswith(selector.upper()) for code in codes):
            raise ConfigError(f"{where}: unknown rule code {selector!r} (see `devlint rules`)")


def with_cli(settings: Settings, **overrides: Any) -> Settings:
    """Command-line options override the file; None means 'not given'."""
    given = {key: value for key, value in overrides.items() if value is not None}
    return replace(settings, **given)


def selector_match(code: str, selectors: Iterable[str]) -> int:
    """Length of the most specific selector matching code (0: none), as ruff resolves overlaps."""
    best = 0
    for selector in selectors:
        selector = selector.upper()
        if selector == "ALL":
            best = max(best, 1)
        elif code.startswith(selector):
            best = max(best, len(selector) + 1)
    return best


def enabled_codes(settings: Settings, defaults: Mapping[str, bool]) -> frozenset[str]:
    enabled = set()
    for code, on_by_default in defaults.items():
        if settings.select:
            chosen = selector_match(code, settings.select) > 0
        else:
            chosen = on_by_default
        chosen = chosen or selector_match(code, settings.extend_select) > 0
        ignored = selector_match(code, settings.ignore)
        if ignored and ignored >= max(selector_match(code, settings.select), selector_match(code, settings.extend_select)):
            chosen = False
        if chosen:
            enabled.add(code)
    return frozenset(enabled)


def ignored_for_file(settings: Settings, path: Path) -> tuple[str, ...]:
    """Codes per-file-ignores silences for one file (patterns relative to the config's folder)."""
    if not settings.per_file_ignores:
        return ()
    try:
        relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(settings.root)).as_posix()
    except ValueError:
        relative = path.as_posix()
    codes: list[str] = []
    for pattern, selected in settings.per_file_ignores:
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(path.name, pattern):
            codes.extend(selected)
    return tuple(codes)
