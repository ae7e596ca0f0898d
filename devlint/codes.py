"""Every code devlint can report, known without importing the rules (configuration checks
selectors against them before any rule runs)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    default_enabled: bool
    fix: str  # "safe", "unsafe" or "" (no fix)


# Codes the engine itself emits: they have no visitor, but users select and
# ignore them like any other.
ENGINE_CODES = (
    RuleInfo("DL000", "unreadable-file", "A file that cannot be read, decoded or parsed.", True, ""),
    RuleInfo("DL999", "internal-error", "devlint itself failed on a file.", True, ""),
    # Off by default, as ruff's RUF100: it judges the suppressions, not the code.
    RuleInfo("DL900", "unused-noqa", "A `# noqa` code of devlint's that silences nothing on its line.", False, "safe"),
)


@cache
def known_codes() -> tuple[str, ...]:
    """The engine's codes and the rules': each rule lives in `rules/dl<code>_<name>.py`
    (a test holds every rule to that)."""
    rules = Path(__file__).parent / "rules"
    found = {path.name.split("_", 1)[0].upper() for path in rules.glob("dl[0-9][0-9][0-9]_*.py")}
    return tuple(sorted({info.code for info in ENGINE_CODES} | found))
