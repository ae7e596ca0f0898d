"""Which files a run checks: directory walks, default excludes, .gitignore, `exclude`.

Each entry is judged by the settings of the folder it is in (the nearest
configuration above it), as ruff does.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from devlint.config import Settings, SettingsResolver
from devlint.reading import read_regular

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".devlint_cache",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "__pypackages__",
    ".eggs",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of the notebooks beside it
)
# Python files, and Jupyter notebooks (their code cells are checked: devlint/notebook.py).
CHECKED_SUFFIXES = (".py", ".ipynb")


def never_walked(name: str) -> bool:
    """A folder no run walks into, whatever the settings: virtual environments, caches, builds."""
    return name in DEFAULT_EXCLUDES or name.endswith(".egg-info")


def real_path(path: Path) -> Path:
    """The absolute path with symlinks resolved; unlike Path.resolve(), never raises on a symlink loop."""
    return Path(os.path.realpath(path))


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool
    base: Path  # the folder whose .gitignore holds it


def _translate(pattern: str) -> tuple[str, bool]:
    """A gitignore glob as a regex over a path relative to the .gitignore's folder."""
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i)
            if end == -1:
                out.append(re.escape(char))
            else:
                out.append(pattern[i : end + 1])
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    body = "".join(out)
    return (body if anchored else f"(?:.*/)?{body}"), anchored


@lru_cache(maxsize=None)
def _gitignore(folder: Path) -> tuple[_Pattern, ...]:
    path = folder / ".gitignore"
    try:
        lines = read_regular(path)[0].decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ()
    patterns = []
    for raw in lines:
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        directory_only = line.endswith("/")
        regex, _ = _translate(line.rstrip("/"))
        try:
            # Exact match only: the walk prunes an ignored folder, so its contents never
            # come up, while a folder the user names inside an ignored one (a venv's
            # site-packages) is still walked, as they asked.
            compiled = re.compile(f"^{regex}$")
        except re.error:
            continue
        patterns.append(_Pattern(compiled, negated, directory_only, folder))
    return tuple(patterns)


class FileFinder:
    def __init__(self, exclude: Sequence[str] = (), root: Path | None = None, *, resolver: SettingsResolver | None = None) -> None:
        self.root = real_path(root or Path.cwd())
        self.resolver = resolver
        self._fixed = Settings(exclude=tuple(exclude), root=self.root) if resolver is None else None
        # Per resolved folder: the .gitignore files that apply to its entries.
        self._ignore_rules: dict[Path, tuple[tuple[str, tuple[_Pattern, ...]], ...]] = {}
        # Folders the walk could not list, with their settings and why: each is reported, not skipped.
        self.unreadable: list[tuple[Path, Settings, OSError]] = []

    def _settings_in(self, resolved_folder: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        assert self.resolver is not None
        return self.resolver.for_folder(resolved_folder)

    def settings_for(self, path: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        assert self.resolver is not None
        return self.resolver.for_path(path)

    def force_excluded(self, path: Path, settings: Settings) -> bool:
        """A path named on the command line that `--force-exclude` drops: matched by
        `exclude`, or inside a folder devlint never walks (`.venv`, `build`, ...)."""
        resolved = real_path(path)
        try:
            parts = resolved.relative_to(real_path(settings.root)).parts
        except ValueError:
            parts = Path(os.path.abspath(path)).parts[1:]
        is_dir = os.path.isdir(path)
        folders = parts if is_dir else parts[:-1]
        if any(never_walked(name) for name in folders):
            return True
        return settings.excludes(resolved, is_dir)

    def _rules_for(self, folder: Path) -> tuple[tuple[str, tuple[_Pattern, ...]], ...]:
        """(folder prefix, patterns) of every .gitignore from the repository root down to `folder`.

        Outside a repository only the folder's own file applies.
        """
        rules = self._ignore_rules.get(folder)
        if rules is None:
            top = _git_root(folder)
            inherited = self._rules_for(folder.parent) if top is not None and folder != top else ()
            patterns = _gitignore(folder)
            own = ((folder.as_posix().rstrip("/") + "/", patterns),) if patterns else ()
            rules = self._ignore_rules[folder] = inherited + own
        return rules

    def _ignored_by_git(self, path: Path, is_dir: bool, resolved: Path | None = None) -> bool:
        resolved = resolved or real_path(path)
        text = resolved.as_posix()
        ignored = False
        for prefix, patterns in self._rules_for(resolved.parent):
            relative = text[len(prefix) :]
            for pattern in patterns:
                if pattern.directory_only and not is_dir:
                    continue
                if pattern.regex.match(relative):
                    ignored = not pattern.negated
        return ignored

    def files(self, paths: Sequence[Path]) -> Iterator[tuple[Path, str]]:
        """(path, display name) for every file to check."""
        for path, display, _ in self.files_with_settings(paths):
            yield path, display

    def files_with_settings(self, paths: Sequence[Path]) -> Iterator[tuple[Path, str, Settings]]:
        """(path, display name, its settings) for every file to check.

        A path named explicitly is always checked, unless its settings ask for
        `force-exclude` and it is excluded (what pre-commit needs: it names files).
        """
        seen: set[Path] = set()
        for given in paths:
            settings = self.settings_for(given)
            if settings.force_exclude and self.force_excluded(given, settings):
                continue
            if os.path.isdir(given):  # False, not an error, where this user may not look: the check says why
                for found, key, found_settings in self._walk(given):
                    if key not in seen:
                        seen.add(key)
                        yield found, str(found), found_settings
            else:
                # A file named explicitly is checked even if missing (DL000 says so).
                key = real_path(given)
                if key not in seen:
                    seen.add(key)
                    yield given, str(given), settings

    def _walk(self, top: Path) -> Iterator[tuple[Path, Path, Settings]]:
        """(path, resolved path, settings) of each Python file and notebook under `top`."""
        visited: set[tuple[int, int]] = set()

        def unlisted(error: OSError) -> None:
            folder = Path(error.filename) if error.filename is not None else top
            self.unreadable.append((folder, self._settings_in(real_path(folder).parent), error))

        for folder, dirnames, filenames in os.walk(top, followlinks=True, onerror=unlisted):
            current = Path(folder)
            try:
                # `folder/.`: a folder that may be listed but not entered (mode r--) has files no one can read.
                stat = os.stat(os.path.join(folder, os.curdir))
            except OSError as error:
                unlisted(OSError(error.errno, error.strerror, folder))
                dirnames[:] = []
                continue
            # Symlink loops: a folder reached twice is walked once.
            if (stat.st_dev, stat.st_ino) in visited:
                dirnames[:] = []
                continue
            visited.add((stat.st_dev, stat.st_ino))
            # Resolving each entry's whole path costs a system call per path component;
            # an entry that is not itself a link resolves to the folder's resolution.
            resolved_folder = real_path(current)
            settings = self._settings_in(resolved_folder)
            kept = []
            for name in sorted(dirnames):
                child = current / name
                if never_walked(name):
                    continue
                resolved = real_path(child) if os.path.islink(child) else resolved_folder / name
                if settings.excludes(resolved, True) or self._ignored_by_git(child, True, resolved):
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                if not name.endswith(CHECKED_SUFFIXES):
                    continue
                child = current / name
                resolved = real_path(child) if os.path.islink(child) else resolved_folder / name
                if settings.excludes(resolved) or self._ignored_by_git(child, False, resolved):
                    continue
                if _special(child):
                    continue  # a named pipe, a device or a socket: never read (reading may block)
                yield child, resolved, settings


def _special(path: Path) -> bool:
    """Whether `path` exists and is not a regular file; one that cannot be looked at is left
    to the check, which reports why it cannot be read (a dangling link, a loop)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


@lru_cache(maxsize=None)
def _git_root(start: Path) -> Path | None:
    if os.path.exists(start / ".git"):
        return start
    return None if start.parent == start else _git_root(start.parent)
