"""The rule pages (rules/DLxxx.md), shipped inside the wheel as devlint/_pages."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def _candidates(code: str) -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here / "_pages" / f"{code}.md", here.parent / "rules" / f"{code}.md"]


def rule_page(code: str) -> str | None:
    try:
        packaged = resources.files("devlint").joinpath("_pages", f"{code}.md")
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, NotADirectoryError):
        pass
    for path in _candidates(code):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


# Where the pages are read online (editors link a finding's code there).
PAGES_URL = "https://github.com/devlint/devlint/blob/main/rules/"


def page_url(code: str) -> str:
    return f"{PAGES_URL}{code}.md"
