"""Turn findings into text for people and machines. Reporters know nothing of analysis."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from devlint.finding import Finding


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False
    # --unsafe-fixes: unsafe fixes are applied too, so they count as fixable (ruff's applicability).
    unsafe_fixes: bool = False
    # --show-fixes: the fix of each finding is named under it.
    show_fixes: bool = False

    def applies(self, finding: Finding) -> bool:
        """Would `--fix`, with these options, apply this finding's fix?"""
        fix = finding.fix
        return fix is not None and bool(fix.edits) and (fix.safe or self.unsafe_fixes)


Reporter = Callable[[Sequence[Finding], ReportOptions], str]


def _reporters() -> dict[str, Reporter]:
    from devlint.reporters import github, json_format, sarif, text

    return {"text": text.render, "json": json_format.render, "sarif": sarif.render, "github": github.render}


FORMATS = ("text", "json", "sarif", "github")


def render(output_format: str, findings: Sequence[Finding], options: ReportOptions) -> str:
    return _reporters()[output_format](findings, options)
