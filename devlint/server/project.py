"""Where project-wide knowledge will be kept warm between edits.

Issue 15 ("Project-wide knowledge") will let the analysis of one file use
facts from the files it imports: a project class deriving from `nn.Module`,
a device variable defined in another module. A language server must not
rebuild that index on every keystroke: the worker keeps one ProjectIndex for
its whole life and tells it which file changed before checking it. Until the
engine takes such an index, the worker holds NoProjectIndex, which knows
nothing and costs nothing.
"""

from __future__ import annotations

from typing import Protocol


class ProjectIndex(Protocol):
    def document_changed(self, path: str, text: str) -> None:
        """An open document now has this text (not yet saved): refresh what it defines."""

    def document_closed(self, path: str) -> None:
        """Back to what the file on disk says."""


class NoProjectIndex:
    def document_changed(self, path: str, text: str) -> None:
        return None

    def document_closed(self, path: str) -> None:
        return None
