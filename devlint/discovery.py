"""Which files a run checks: directory walks, default excludes, .gitignore."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

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
)


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
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
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
    def __init__(self, exclude: Sequence[str] = (), root: Path | None = None) -> None:
        self.exclude = tuple(exclude)
        self.root = real_path(root or Path.cwd())
        self.git_root = _git_root(self.root)
        # Per resolved folder: the .gitignore files that apply to its entries.
        self._ignore_rules: dict[Path, tuple[tuple[str, tuple[_Pattern, ...]], ...]] = {}

    def _excluded_by_config(self, path: Path, resolved: Path | None = None) -> bool:
        if not self.exclude:
            return False
        name = path.name
        try:
            relative = (resolved or real_path(path)).relative_to(self.root).as_posix()
        except ValueError:
            relative = path.as_posix()
        for pattern in self.exclude:
            pattern = pattern.rstrip("/")
            if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, f"{pattern}/*"):
                return True
        return False

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
        """(path, display name) for every file to check; named files are always checked."""
        seen: set[Path] = set()
        for given in paths:
            if given.is_dir():
                for found, key in self._walk(given):
                    if key not in seen:
                        seen.add(key)
                        yield found, str(found)
            else:
                # A file named explicitly is always checked, even if missing (DL000 says so).
                key = real_path(given)
                if key not in seen:
                    seen.add(key)
                    yield given, str(given)

    def _walk(self, top: Path) -> Iterator[tuple[Path, Path]]:
        """(path, resolved path) of each Python file under `top`."""
        visited: set[tuple[int, int]] = set()
        for folder, dirnames, filenames in os.walk(top, followlinks=True, onerror=None):
            current = Path(folder)
            try:
                stat = current.stat()
            except OSError:
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
            kept = []
            for name in sorted(dirnames):
                child = current / name
                if name in DEFAULT_EXCLUDES or name.endswith(".egg-info"):
                    continue
                resolved = real_path(child) if os.path.islink(child) else resolved_folder / name
                if self._excluded_by_config(child, resolved) or self._ignored_by_git(child, True, resolved):
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                child = current / name
                resolved = real_path(child) if os.path.islink(child) else resolved_folder / name
                if self._excluded_by_config(child, resolved) or self._ignored_by_git(child, False, resolved):
                    continue
                yield child, resolved


@lru_cache(maxsize=None)
def _git_root(start: Path) -> Path | None:
    if (start / ".git").exists():
        return start
    return None if start.parent == start else _git_root(start.parent)
