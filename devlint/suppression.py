"""`# noqa` comments and `# devlint: skip-file`."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_SKIP_FILE = re.compile(r"^\s*#\s*devlint\s*:\s*skip-file\b", re.MULTILINE)


def skips_file(text: str) -> bool:
    return _SKIP_FILE.search(text) is not None


class NoqaMap:
    """Per line: the codes silenced there, or every code for a bare `# noqa`."""

    def __init__(self, text: str) -> None:
        self._lines: dict[int, frozenset[str] | None] = {}
        if "noqa" not in text.lower():
            return
        for number, line in enumerate(text.splitlines(), 1):
            match = _NOQA.search(line)
            if match is None:
                continue
            codes = match.group("codes")
            self._lines[number] = None if codes is None else frozenset(c.strip().upper() for c in codes.split(","))

    def silences(self, code: str, *lines: int) -> bool:
        for line in lines:
            if line in self._lines:
                codes = self._lines[line]
                if codes is None or code in codes:
                    return True
        return False
