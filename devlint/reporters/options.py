"""How the findings are to be shown: what every reporter is told besides the findings."""

from __future__ import annotations

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
