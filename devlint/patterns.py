"""Path patterns of `exclude` and `per-file-ignores`, matched as `.gitignore` lines are.

Each pattern is relative to the folder of the configuration that wrote it (the
working folder for one given on the command line), so a setting inherited
through `extend` keeps meaning what it meant where it was written. Matching
follows git's wildmatch, as ruff's globset does for the cases users write:
`**/tests/**` matches a top-level `tests/`, a pattern without a slash matches
a name at any depth, one with a slash is anchored to its folder, and a folder
that matches takes everything inside it along.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pathspec


class PathPattern(NamedTuple):
    pattern: str
    base: str  # the absolute, resolved folder the pattern is relative to


def anchored(patterns: Iterable[str], base: Path | str) -> tuple[PathPattern, ...]:
    folder = os.path.realpath(base)
    return tuple(PathPattern(pattern, folder) for pattern in patterns)


@lru_cache(maxsize=1024)
def _spec(patterns: tuple[str, ...]) -> "pathspec.GitIgnoreSpec":
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _relative(path: str, base: str) -> str | None:
    if path == base:
        return None
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")


def matches(patterns: Iterable[PathPattern], resolved: Path | str, is_dir: bool = False) -> bool:
    """Does any pattern match this resolved, absolute path (a folder when `is_dir`)?

    A path outside a pattern's folder is not matched by it.
    """
    path = str(resolved)
    for base, group in _by_base(tuple(patterns)):
        relative = _relative(path, base)
        if relative is None:
            continue
        if _spec(group).match_file(relative + "/" if is_dir else relative):
            return True
    return False


@lru_cache(maxsize=1024)
def _by_base(patterns: tuple[PathPattern, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    by_base: dict[str, list[str]] = {}
    for item in patterns:
        by_base.setdefault(item.base, []).append(item.pattern)
    return tuple((base, tuple(group)) for base, group in by_base.items())


def describe(pattern: PathPattern, root: Path) -> str:
    """The pattern as the user wrote it, with its folder when that is not `root`."""
    if pattern.base == os.path.realpath(root):
        return pattern.pattern
    return f"{pattern.pattern} (in {pattern.base})"
