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

    def _excluded_by_config(self, path: Path) -> bool:
        name = path.name
        try:
            relative = real_path(path).relative_to(self.root).as_posix()
        except ValueError:
            relative = path.as_posix()
        for pattern in self.exclude:
            pattern = pattern.rstrip("/")
            if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, f"{pattern}/*"):
                return True
        return False

    def _ignored_by_git(self, path: Path, is_dir: bool) -> bool:
        resolved = real_path(path)
        top = _git_root(resolved.parent) or resolved.parent
        ignored = False
        for folder in (*reversed(resolved.parents), resolved.parent):
            if folder != top and top not in folder.parents:
                continue
            for pattern in _gitignore(folder):
                if pattern.directory_only and not is_dir:
                    continue
                relative = resolved.relative_to(folder).as_posix()
                if pattern.regex.match(relative):
                    ignored = not pattern.negated
        return ignored

    def files(self, paths: Sequence[Path]) -> Iterator[tuple[Path, str]]:
        """(path, display name) for every file to check; named files are always checked."""
        seen: set[Path] = set()
        for given in paths:
            if given.is_dir():
                for found in self._walk(given):
                    key = real_path(found)
                    if key not in seen:
                        seen.add(key)
                        yield found, str(found)
            else:
                # A file named explicitly is always checked, even if missing (DL000 says so).
                key = real_path(given)
                if key not in seen:
                    seen.add(key)
                    yield given, str(given)

    def _walk(self, top: Path) -> Iterator[Path]:
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
            kept = []
            for name in sorted(dirnames):
                child = current / name
                if name in DEFAULT_EXCLUDES or name.endswith(".egg-info") or self._excluded_by_config(child):
                    continue
                if self._ignored_by_git(child, True):
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                child = current / name
                if self._excluded_by_config(child) or self._ignored_by_git(child, False):
                    continue
                yield child


@lru_cache(maxsize=None)
def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None
