"""Running devlint on snippets, for the tests of the rules and the engine."""

from __future__ import annotations

import textwrap
from pathlib import Path

from devlint.config import Settings
from devlint.engine import check_bytes
from devlint.finding import Finding

# The rules of issue 2; the dataflow rules (DL2xx/DL3xx) have their own tests.
ISSUE2 = Settings(select=("DL0", "DL1", "DL5", "DL9"))


def lint(source: str, settings: Settings = ISSUE2, name: str = "snippet.py") -> list[Finding]:
    text = textwrap.dedent(source).lstrip("\n")
    return check_bytes(text.encode(), Path(name), name, settings).findings


def positions(source: str, settings: Settings = ISSUE2) -> list[tuple[str, int, int]]:
    """(code, line, column) of every finding, 1-based."""
    return [(f.code, f.start.line, f.start.column) for f in lint(source, settings)]
