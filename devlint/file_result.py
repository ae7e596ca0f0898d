"""What checking one file produced: kept apart so that the cache and the engine share it
without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from devlint.analysis.imported import FilePlace
from devlint.analysis.summary import ModuleSummary
from devlint.finding import Finding
from devlint.source import SourceText

if TYPE_CHECKING:
    from devlint.config import Settings


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    source: SourceText | None = None  # kept only when fixes are wanted
    summary: ModuleSummary | None = None  # what the file tells its importers, when asked
    facts: str = ""  # the digest of the project facts the findings were computed with ("": none)
    # Kept with the source: --fix checks the fixed text again under the file's own settings
    # (its `--select`) and the project facts its findings were computed with.
    checked_with: tuple[Settings, FilePlace] | None = None
