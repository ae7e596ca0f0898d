"""`[tool.devlint]` settings: loading, validation, rule selection, and which configuration governs each file.

As in ruff, each file is checked under the nearest `pyproject.toml` above it
that has a `[tool.devlint]` table (a monorepo's sub-projects keep their own
settings), `extend` inherits another configuration, `--config FILE` puts one
file in charge of every path, `--isolated` ignores them all, and
`--config KEY=VALUE` and the command-line options apply on top of whichever
configuration governs a file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from devlint.codes import known_codes
from devlint.patterns import PathPattern, anchored, matches


class ConfigError(Exception):
    """A bad configuration: the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    # Patterns given as plain strings are relative to `root`.
    per_file_ignores: tuple[tuple[PathPattern, tuple[str, ...]], ...] = ()
    exclude: tuple[PathPattern, ...] = ()
    extend_exclude: tuple[PathPattern, ...] = ()
    force_exclude: bool = False
    strict: bool = False
    # Names that teach the analysis a project's own vocabulary.
    device_variables: tuple[str, ...] = ()
    loaders: tuple[str, ...] = ()
    move_helpers: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the configuration file the settings came from

    def __post_init__(self) -> None:
        base = os.path.realpath(self.root)

        def rooted(pattern: PathPattern | str) -> PathPattern:
            return pattern if isinstance(pattern, PathPattern) else PathPattern(pattern, base)

        object.__setattr__(self, "exclude", tuple(rooted(p) for p in self.exclude))
        object.__setattr__(self, "extend_exclude", tuple(rooted(p) for p in self.extend_exclude))
        object.__setattr__(
            self, "per_file_ignores", tuple((rooted(pattern), tuple(codes)) for pattern, codes in self.per_file_ignores)
        )

    def fingerprint(self) -> str:
        """What about these settings changes the analysis: keys the cache."""
        return repr(
            (self.strict, self.device_variables, self.loaders, self.move_helpers)
        )

    def excludes(self, resolved: Path | str, is_dir: bool = False) -> bool:
        """Do `exclude` or `extend-exclude` match this resolved path?"""
        return matches((*self.exclude, *self.extend_exclude), resolved, is_dir)


# Keys as written in [tool.devlint] -> Settings fields.
_LIST_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "extend-select": "extend_select",
    "extend-ignore": "extend_ignore",
    "device-variables": "device_variables",
    "loaders": "loaders",
    "move-helpers": "move_helpers",
}
_PATTERN_KEYS = {"exclude": "exclude", "extend-exclude": "extend_exclude"}
_BOOL_KEYS = {"strict": "strict", "force-exclude": "force_exclude"}
# An inheriting configuration adds to these instead of replacing them.
_ACCUMULATED = frozenset({"extend_select", "extend_ignore", "extend_exclude"})
_SELECTOR_KEYS = ("select", "ignore", "extend-select", "extend-ignore")
KNOWN_KEYS = frozenset({*_LIST_KEYS, *_PATTERN_KEYS, *_BOOL_KEYS, "per-file-ignores", "extend"})


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def _devlint_table(path: Path, *, bare_allowed: bool) -> dict[str, Any] | None:
    """The [tool.devlint] table of a file (None: a pyproject.toml without one).

    Any other file may be a bare table of devlint keys (`devlint.toml`).
    """
    data = _read_toml(path)
    table = data.get("tool", {}).get("devlint") if isinstance(data.get("tool"), dict) else None
    if table is None:
        if not bare_allowed or path.name == "pyproject.toml":
            return None
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.devlint] must be a table")
    return table


def has_devlint_table(path: Path) -> bool:
    """Does this pyproject.toml configure devlint? A broken one counts: it is reported when used."""
    try:
        return _devlint_table(path, bare_allowed=False) is not None
    except ConfigError:
        return True


def _is_file(path: Path) -> bool:
    """`path.is_file()`, False inside a folder this user may not look into (Python 3.11 raises there)."""
    try:
        return path.is_file()
    except OSError:
        return False


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.devlint] table, walking up from start."""
    start = Path(os.path.realpath(start))
    directory = start if start.is_dir() else start.parent
    for candidate in (directory, *directory.parents):
        path = candidate / "pyproject.toml"
        if _is_file(path) and has_devlint_table(path):
            return path
    return None


# -- one table -> the fields it sets -------------------------------------------------
def _string_list(origin: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{origin}: {key!r} must be a list of strings, not {value!r}")
    return tuple(value)


def _layer(table: Mapping[str, Any], origin: str, base: Path) -> dict[str, Any]:
    """The Settings fields a table sets, validated; patterns anchored at `base`."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{origin}: unknown key {key!r} in [tool.devlint] (known: {', '.join(sorted(KNOWN_KEYS))})")
        if key in _LIST_KEYS:
            values[_LIST_KEYS[key]] = _string_list(origin, key, value)
        elif key in _PATTERN_KEYS:
            values[_PATTERN_KEYS[key]] = anchored(_string_list(origin, key, value), base)
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{origin}: {key!r} must be true or false, not {value!r}")
            values[_BOOL_KEYS[key]] = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: 'per-file-ignores' must be a table of pattern = [codes]")
            pairs = []
            for pattern, codes in value.items():
                selected = _string_list(origin, f"per-file-ignores.{pattern}", codes)
                validate_selectors(selected, f"{origin}: 'per-file-ignores.{pattern}'")
                pairs.append((anchored([pattern], base)[0], selected))
            values["per_file_ignores"] = tuple(pairs)
        elif key == "extend" and not isinstance(value, str):
            raise ConfigError(f"{origin}: 'extend' must be the path of a configuration file, not {value!r}")
    for key in _SELECTOR_KEYS:
        if key in table:
            validate_selectors(values[_LIST_KEYS[key]], f"{origin}: {key!r}")
    return values


def _merged(under: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over`'s values replace `under`'s; the extend-* lists add up."""
    out = dict(under)
    for name, value in over.items():
        out[name] = (*out.get(name, ()), *value) if name in _ACCUMULATED else value
    return out


def _file_layer(path: Path, *, explicit: bool, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A configuration file's fields, with what it `extend`s underneath."""
    if path in seen:
        chain = " -> ".join(str(p) for p in (*seen, path))
        raise ConfigError(f"{seen[-1]}: 'extend' makes a circle: {chain}")
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    table = _devlint_table(path, bare_allowed=explicit or bool(seen))
    if table is None:
        table = {}
    values = _layer(table, str(path), path.parent)
    if "extend" not in table:
        return values
    target = Path(os.path.expandvars(os.path.expanduser(table["extend"])))
    if not target.is_absolute():
        target = path.parent / target
    target = Path(os.path.abspath(target))
    if not target.is_file():
        raise ConfigError(f"{path}: 'extend' names {table['extend']!r}, which is not a file")
    return _merged(_file_layer(target, explicit=True, seen=(*seen, path)), values)


def load_settings(path: Path | None, *, explicit: bool = False) -> Settings:
    """Settings from a pyproject.toml (or a devlint.toml given with --config)."""
    if path is None:
        return Settings()
    path = Path(os.path.abspath(path))
    return Settings(**_file_layer(path, explicit=explicit), root=path.parent, source=path)


def settings_from_table(table: Mapping[str, Any], origin: Path) -> Settings:
    return Settings(**_layer(table, str(origin), origin.parent), root=origin.parent, source=origin)


# -- the command line on top ------------------------------------------------------
@dataclass(frozen=True)
class CommandLine:
    """What the command line says about settings; None: not given."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    extend_ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] | None = None
    strict: bool | None = None
    force_exclude: bool | None = None
    # `--config KEY=VALUE` overrides, as one [tool.devlint] table.
    values: Mapping[str, Any] = field(default_factory=dict)

    def layers(self, cwd: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        """The `--config KEY=VALUE` layer, then the options' (patterns relative to `cwd`)."""
        if "extend" in self.values:
            raise ConfigError("--config: 'extend' names a file; give that file with --config PATH instead")
        inline = _layer(self.values, "--config", cwd) if self.values else {}
        options: dict[str, Any] = {}
        for name in ("select", "ignore", "extend_select", "extend_ignore", "strict", "force_exclude"):
            value = getattr(self, name)
            if value is not None:
                options[name] = value
        for name in ("exclude", "extend_exclude"):
            value = getattr(self, name)
            if value is not None:
                options[name] = anchored(value, cwd)
        return inline, options


def parse_override(text: str) -> dict[str, Any]:
    """`--config 'select = ["DL1"]'`: one TOML `key = value` line as a [tool.devlint] table."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {text!r}: neither a configuration file nor a TOML `key = value` pair ({error})") from None
    if len(table) != 1:
        raise ConfigError(f"--config {text!r}: give exactly one `key = value` pair")
    return table


def with_cli(settings: Settings, **overrides: Any) -> Settings:
    """Command-line values replace the file's; None means 'not given'."""
    given = {key: value for key, value in overrides.items() if value is not None}
    return replace(settings, **given)


_UNRESOLVED = object()


class SettingsResolver:
    """The settings of each path: the nearest configuration above it, with the command line on top.

    Each folder is resolved once and each pyproject.toml read once, so a walk
    over thousands of files costs a dictionary look-up per file.
    """

    def __init__(
        self,
        command_line: CommandLine | None = None,
        *,
        config_file: Path | None = None,
        isolated: bool = False,
        cwd: Path | None = None,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd or Path.cwd()))
        self.isolated = isolated
        self._inline, self._options = (command_line or CommandLine()).layers(self.cwd)
        self._by_config: dict[Path | None, Settings] = {}
        self._by_folder: dict[str, Settings | None] = {}
        self._fixed: Settings | None = None
        if isolated:
            self._fixed = self._finish({}, self.cwd, None)
        elif config_file is not None:
            path = Path(os.path.abspath(config_file))
            if not path.is_file():
                raise ConfigError(f"{config_file}: no such configuration file")
            self._fixed = self._finish(_file_layer(path, explicit=True), path.parent, path)

    def _finish(self, layer: Mapping[str, Any], root: Path, source: Path | None) -> Settings:
        values = _merged(_merged(layer, self._inline), self._options)
        return Settings(**values, root=root, source=source)

    def _of_config(self, path: Path | None) -> Settings:
        settings = self._by_config.get(path)
        if settings is None:
            if path is None:
                settings = self._finish({}, self.cwd, None)
            else:
                settings = self._finish(_file_layer(path, explicit=False), path.parent, path)
            self._by_config[path] = settings
        return settings

    def _nearest(self, folder: str) -> Settings | None:
        """The settings of the nearest configured folder at or above `folder` (None: none)."""
        visited = []
        current = folder
        found: Settings | None = None
        while True:
            cached = self._by_folder.get(current, _UNRESOLVED)
            if cached is not _UNRESOLVED:
                found = cached  # type: ignore[assignment]
                break
            visited.append(current)
            candidate = Path(current, "pyproject.toml")
            if _is_file(candidate) and has_devlint_table(candidate):
                found = self._of_config(candidate)
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for name in visited:
            self._by_folder[name] = found
        return found

    def for_folder(self, folder: Path | str) -> Settings:
        """The settings of the entries of a folder."""
        if self._fixed is not None:
            return self._fixed
        settings = self._nearest(os.path.realpath(folder))
        if settings is None:
            # No configuration above the file: the working folder's, as ruff falls back.
            settings = self._nearest(str(self.cwd)) or self._of_config(None)
        return settings

    def for_path(self, path: Path | str) -> Settings:
        """The settings of a file (or of a folder named on the command line: its own configuration counts)."""
        path = Path(path)
        if os.path.isdir(path):  # False, not an error, where this user may not look
            return self.for_folder(path)
        return self.for_folder(path.parent if str(path.parent) else Path("."))


# -- rule selection ------------------------------------------------------------------
def validate_selectors(selectors: Iterable[str], where: str) -> None:
    codes = known_codes()
    for selector in selectors:
        if selector.upper() == "ALL":
            continue
        if not any(code.startswith(selector.upper()) for code in codes):
            raise ConfigError(f"{where}: unknown rule code {selector!r} (see `devlint rules`)")


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
    ignore = (*settings.ignore, *settings.extend_ignore)
    for code, on_by_default in defaults.items():
        if settings.select:
            chosen = selector_match(code, settings.select) > 0
        else:
            chosen = on_by_default
        chosen = chosen or selector_match(code, settings.extend_select) > 0
        ignored = selector_match(code, ignore)
        if ignored and ignored >= max(selector_match(code, settings.select), selector_match(code, settings.extend_select)):
            chosen = False
        if chosen:
            enabled.add(code)
    return frozenset(enabled)


def ignored_for_file(settings: Settings, path: Path) -> tuple[str, ...]:
    """Codes per-file-ignores silences for one file (patterns relative to their configuration's folder)."""
    if not settings.per_file_ignores:
        return ()
    resolved = os.path.realpath(path)
    codes: list[str] = []
    for pattern, selected in settings.per_file_ignores:
        if matches((pattern,), resolved):
            codes.extend(selected)
    return tuple(codes)
