"""Turn findings into text for people and machines. Reporters know nothing of analysis."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from devlint.finding import Finding
from devlint.reporters.options import ReportOptions

__all__ = ["FORMATS", "ReportOptions", "Reporter", "render"]


Reporter = Callable[[Sequence[Finding], ReportOptions], str]


def _reporters() -> dict[str, Reporter]:
    from devlint.reporters import github, json_format, sarif, text

    return {"text": text.render, "json": json_format.render, "sarif": sarif.render, "github": github.render}


FORMATS = ("text", "json", "sarif", "github")


def render(output_format: str, findings: Sequence[Finding], options: ReportOptions) -> str:
    return _reporters()[output_format](findings, options)
