"""The settings that apply to a document, resolved as `devlint check --stdin-filename` resolves them.

The nearest configuration above the document (a pyproject.toml with a
`[tool.devlint]` table, its `extend` chain, the workspace folder's as the
fallback) is read anew for every check: a few `stat`s and the reading of one
small file, so an edited, new or moved configuration counts at once, with or
without the editor's file-change events.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from devlint.config import ConfigError, Settings, SettingsResolver


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    error: str | None = None  # a broken configuration: the defaults apply meanwhile
    excluded: bool = False  # `force-exclude` and the document matches `exclude`: not checked, as the CLI does


class WorkspaceConfig:
    def __init__(self, root: Path) -> None:
        self.root = root

    def for_document(self, path: Path | None) -> Resolved:
        """Settings for the document at `path` (None: an unsaved buffer, judged from the workspace root)."""
        try:
            resolver = SettingsResolver(cwd=self.root)
            if path is None:
                return Resolved(resolver.for_folder(self.root))
            settings = resolver.for_path(path)
        except ConfigError as error:
            return Resolved(Settings(root=self.root), str(error))
        if settings.force_exclude:
            from devlint.discovery import FileFinder

            if FileFinder(resolver=resolver).force_excluded(path, settings):
                return Resolved(settings, excluded=True)
        return Resolved(settings)
