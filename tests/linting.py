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


# The dataflow rules' tests look at their own codes only: a `.cuda()` in a
# snippet is DL101's business, not theirs.
DATAFLOW_CODES = frozenset({"DL201", "DL202", "DL301", "DL302", "DL303"})


def dataflow_findings(source: str, settings: Settings | None = None) -> list[tuple[str, int, int]]:
    """(code, line, column) of every dataflow finding, 1-based."""
    return [(f.code, f.start.line, f.start.column) for f in lint(source, settings or Settings()) if f.code in DATAFLOW_CODES]


def dataflow_messages(source: str, settings: Settings | None = None) -> list[str]:
    return [f.message for f in lint(source, settings or Settings()) if f.code in DATAFLOW_CODES]
