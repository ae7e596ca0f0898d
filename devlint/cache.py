"""Placeholder until the cache lands (issue 7): every lookup misses."""

from __future__ import annotations

from pathlib import Path


class Cache:
    @classmethod
    def for_root(cls, root: Path) -> "Cache":
        return cls()

    def lookup(self, path, display):  # noqa: ANN001
        return None

    def store(self, path, result) -> None:  # noqa: ANN001
        return None

    def flush(self) -> None:
        return None
