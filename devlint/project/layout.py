"""Where a file sits in its project: the project's root, and the module name Python imports it by.

The root is the folder holding the nearest `pyproject.toml` or `.git` above a
file (or, for a file in neither, its own folder). Modules are named from the
import roots Python would search for them: the importing script's own folder
(Python puts it first on `sys.path`), the root, and the root's `src/` (the src
layout). Folders without `__init__.py` are namespace packages and name
modules all the same. What no root holds is not resolved: it is a library,
or beyond what the files show.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

_ROOT_MARKERS = ("pyproject.toml", ".git")


@functools.lru_cache(maxsize=4096)
def project_root(folder: Path) -> Path:
    """The nearest folder at or above `folder` holding a `pyproject.toml` or `.git` (without
    one, `folder` itself)."""
    return marked_root(folder) or folder


def marked_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding a `pyproject.toml` or `.git`, if any."""
    current = folder
    while True:
        if any(os.path.exists(current / marker) for marker in _ROOT_MARKERS):
            return current
        if current.parent == current:
            return None
        current = current.parent


def real(path: Path) -> Path:
    """The path with symlinks resolved; a symlink loop stays as it is (`Path.resolve` raises there)."""
    return Path(os.path.realpath(path))


def import_roots(root: Path) -> tuple[Path, ...]:
    src = root / "src"
    return (root, src) if os.path.isdir(src) else (root,)  # False where this user may not look


def module_name(path: Path, root: Path) -> str | None:
    """`pkg.models.base` for `<root>/pkg/models/base.py` (or under `<root>/src/`); a package's
    `__init__.py` names the package. None for a file outside the project's import roots."""
    path = real(path)
    for base in reversed(import_roots(root)):  # `src/` first: it is deeper
        try:
            relative = path.relative_to(real(base))
        except ValueError:
            continue
        parts = list(relative.with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() for part in parts):
            return ".".join(parts)
    return None


def absolute_import(module: str, level: int, importer: str | None, is_package: bool) -> str | None:
    """The module a `from ..x import y` names, from the importing module's name: `level` dots
    count packages up from the importer's own package."""
    if level == 0:
        return module
    if importer is None:
        return None
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    if level - 1 >= len(package):
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, *([module] if module else [])]) or None


def module_file(name: str, roots: tuple[Path, ...]) -> Path | None:
    """The file that defines module `name`, searching `roots` in order."""
    parts = name.split(".")
    for root in roots:
        candidate = root.joinpath(*parts)
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if os.path.isfile(path):
                return path
    return None
