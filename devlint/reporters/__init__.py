"""Turn findings into text for people and machines. Reporters know nothing of analysis."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from devlint.finding import Finding
from devlint.reporters import github, json_format, sarif, text

Reporter = Callable[[Sequence[Finding], bool], str]

REPORTERS: dict[str, Reporter] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
