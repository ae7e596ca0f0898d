"""`# noqa` comments, `# devlint: noqa: CODES` for a whole file, `# devlint: skip-file`,
the unused-noqa check (DL900) and `--add-noqa`.

As in ruff, a finding on a line that ends inside a multi-line string or on a
backslash continuation is suppressed by a `# noqa` at the end of that string
or continued line, where a comment can go; `--add-noqa` puts it there.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from devlint.finding import Edit, Finding, Fix, Position

_CODE = r"[A-Z]+[0-9]+"
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODE}(?:\s*,\s*{_CODE})*))?", re.IGNORECASE)
_SKIP_FILE = re.compile(r"^\s*#\s*devlint\s*:\s*skip-file\b", re.MULTILINE)
# `# devlint: noqa` alone skips the file (ruff's `# ruff: noqa`); with codes it silences them in the whole file.
_FILE_NOQA = re.compile(
    rf"^[ \t\f]*#\s*devlint\s*:\s*noqa(?::\s*(?P<codes>{_CODE}(?:\s*,\s*{_CODE})*))?[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)
_NEWLINE = re.compile(r"\r\n?|\n")  # the line breaks libcst and CPython count
OWN_PREFIX = "DL"  # codes in a `# noqa` that are devlint's; the others belong to other tools
UNUSED_NOQA = "DL900"


def _codes(text: str) -> tuple[str, ...]:
    return tuple(code.strip().upper() for code in text.split(","))


def skips_file(text: str) -> bool:
    if _SKIP_FILE.search(text) is not None:
        return True
    return any(match.group("codes") is None for match in _FILE_NOQA.finditer(text)) if "noqa" in text else False


def file_codes(text: str) -> frozenset[str]:
    """Codes silenced in the whole file by `# devlint: noqa: CODES` lines."""
    if "noqa" not in text:
        return frozenset()
    return frozenset(code for match in _FILE_NOQA.finditer(text) if match.group("codes") for code in _codes(match.group("codes")))


def split_lines(text: str) -> list[str]:
    """The physical lines without their line breaks, numbered as libcst numbers them."""
    return _NEWLINE.split(text)


def comment_lines(text: str) -> dict[int, tuple[int, str]] | None:
    """Line -> (column, text) of each real comment (not `#` inside a string); None if the file does not tokenize."""
    comments: dict[int, tuple[int, str]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = (token.start[1], token.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return comments


def comment_line_map(text: str) -> dict[int, int]:
    """Line -> the line where a comment for it can go, for lines that end inside a
    multi-line string or with a backslash continuation (ruff's noqa line mapping)."""
    mapping: dict[int, int] = {}
    lines = split_lines(text)
    in_string: set[int] = set()
    try:
        starts: list[tuple[int, int]] = []
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            name = tokenize.tok_name[token.type]
            if name == "FSTRING_START":
                starts.append(token.start)
            elif name == "FSTRING_END" and starts:
                first = starts.pop()[0]
                last = token.end[0]
                for line in range(first, last):
                    mapping[line] = last
                    in_string.add(line)
            elif token.type == tokenize.STRING and token.end[0] > token.start[0]:
                for line in range(token.start[0], token.end[0]):
                    mapping[line] = token.end[0]
                    in_string.add(line)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {}
    for number, line in enumerate(lines, 1):
        if number not in in_string and line.endswith("\\") and "#" not in line:
            mapping[number] = number + 1
    # Follow chains: a continued line whose next line ends inside a string, and so on.
    resolved = {}
    for line in mapping:
        target = mapping[line]
        for _ in range(len(lines)):
            if target not in mapping:
                break
            target = mapping[target]
        resolved[line] = target
    return resolved


@dataclass(frozen=True)
class Directive:
    line: int
    start: int  # 0-based column of `#`
    end: int  # 0-based column past the last code
    codes: tuple[str, ...] | None  # None: a bare `# noqa`


class NoqaMap:
    """Per line: the codes silenced there, or every code for a bare `# noqa`; and the file's own codes."""

    def __init__(self, text: str) -> None:
        self._text = text
        self.directives: dict[int, Directive] = {}
        self.file_codes = file_codes(text)
        self._map: dict[int, int] | None = None
        self.used: set[tuple[int, str | None]] = set()  # (line, code) pairs that silenced a finding
        if "noqa" not in text.lower():
            return
        for number, line in enumerate(split_lines(text), 1):
            match = _NOQA.search(line)
            if match is None:
                continue
            codes = match.group("codes")
            self.directives[number] = Directive(number, match.start(), match.end(), None if codes is None else _codes(codes))

    def _comment_line(self, line: int) -> int | None:
        if not any(number > line for number in self.directives):
            return None
        if self._map is None:
            self._map = comment_line_map(self._text)
        return self._map.get(line)

    def silences(self, code: str, *lines: int) -> bool:
        if code in self.file_codes:
            return True
        if not self.directives:
            return False
        for line in lines:
            for number in (line, self._comment_line(line)):
                directive = self.directives.get(number) if number is not None else None
                if directive is None:
                    continue
                if directive.codes is None:
                    self.used.add((number, None))  # type: ignore[arg-type]
                    return True
                if code in directive.codes:
                    self.used.add((number, code))  # type: ignore[arg-type]
                    return True
        return False

    def unused(self, path: str, enabled: frozenset[str], known: frozenset[str]) -> list[Finding]:
        """DL900 findings: devlint codes in `# noqa` comments that silenced nothing.

        Codes of other tools (not `DL...`) and bare `# noqa` are left alone:
        devlint cannot know what they silence for ruff or flake8.
        """
        candidates = [d for d in self.directives.values() if d.codes and any(c.startswith(OWN_PREFIX) for c in d.codes)]
        if not candidates:
            return []
        comments = comment_lines(self._text)
        if comments is None:
            return []
        findings = []
        lines = split_lines(self._text)
        for directive in sorted(candidates, key=lambda d: d.line):
            comment = comments.get(directive.line)
            if comment is None or not comment[0] <= directive.start < comment[0] + len(comment[1]):
                continue  # `# noqa` inside a string
            assert directive.codes is not None
            if UNUSED_NOQA in directive.codes:
                continue
            unused: dict[str, list[str]] = {}
            for code in directive.codes:
                if not code.startswith(OWN_PREFIX) or (directive.line, code) in self.used:
                    continue
                kind = "unknown" if code not in known else "non-enabled" if code not in enabled else "unused"
                unused.setdefault(kind, []).append(code)
            if not unused:
                continue
            detail = "; ".join(
                f"{kind}: {', '.join(f'`{c}`' for c in codes)}" for kind, codes in unused.items()
            )
            removed = {code for codes in unused.values() for code in codes}
            fix = _removal(self._text, lines, directive, removed)
            findings.append(
                Finding(
                    UNUSED_NOQA,
                    f"Unused `noqa` directive ({detail})",
                    path,
                    Position(directive.line, directive.start + 1),
                    Position(directive.line, directive.end + 1),
                    fix,
                )
            )
        return findings


def _line_offset(text: str, line: int) -> int:
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    return starts[line - 1]


def _removal(text: str, lines: Sequence[str], directive: Directive, removed: set[str]) -> Fix:
    assert directive.codes is not None
    kept = [code for code in directive.codes if code not in removed]
    line_start = _line_offset(text, directive.line)
    if kept:
        edit = Edit(line_start + directive.start, line_start + directive.end, f"# noqa: {', '.join(kept)}")
        return Fix((edit,), safe=True, title="Remove unused codes from the `noqa` directive")
    line = lines[directive.line - 1]
    before, after = line[: directive.start], line[directive.end :]
    code_end = len(before.rstrip(" \t"))
    if after.strip() == "":
        # `code  # noqa: DL101`: the directive goes with the blanks before it.
        edit = Edit(line_start + code_end, line_start + len(line), "")
    elif after.lstrip(" \t").startswith("#"):
        # `code  # noqa: DL101  # other`: the other comment stays, two spaces from the code.
        blanks = len(after) - len(after.lstrip(" \t"))
        edit = Edit(line_start + code_end, line_start + directive.end + blanks, "  " if code_end else "")
    else:
        # `# noqa: DL101 because ...`: the rest of the comment stays a comment.
        edit = Edit(line_start + directive.start, line_start + directive.end, "#")
    return Fix((edit,), safe=True, title="Remove unused `noqa` directive")


def add_noqa(text: str, findings: Iterable[Finding]) -> tuple[str, int]:
    """The text with `# noqa: CODES` on the line of each finding, and how many lines changed.

    An existing `# noqa: CODES` gets the missing codes added; other comments are
    kept; a line already silenced by a bare `# noqa` is left as it is. Lines that
    end inside a string get the comment where the string ends.
    """
    wanted: dict[int, set[str]] = {}
    mapping: dict[int, int] | None = None
    for finding in findings:
        line = finding.start.line
        if mapping is None:
            mapping = comment_line_map(text)
        wanted.setdefault(mapping.get(line, line), set()).add(finding.code)
    if not wanted:
        return text, 0
    comments = comment_lines(text) or {}
    pieces = _NEWLINE.split(text)
    breaks = _NEWLINE.findall(text)
    changed = 0
    for number, codes in sorted(wanted.items()):
        if number > len(pieces):
            continue
        line = pieces[number - 1]
        comment = comments.get(number)
        match = None
        if comment is not None:
            found = _NOQA.search(comment[1])
            if found is not None:
                match = (comment[0] + found.start(), comment[0] + found.end(), found.group("codes"))
        if match is not None:
            start, end, existing = match
            if existing is None:
                continue  # a bare `# noqa` already silences every code
            present = list(_codes(existing))
            missing = sorted(code for code in codes if code not in present)
            if not missing:
                continue
            pieces[number - 1] = line[:start] + f"# noqa: {', '.join([*present, *missing])}" + line[end:]
        else:
            pieces[number - 1] = line.rstrip(" \t") + f"  # noqa: {', '.join(sorted(codes))}"
        changed += 1
    out = []
    for index, piece in enumerate(pieces):
        out.append(piece)
        if index < len(breaks):
            out.append(breaks[index])
    return "".join(out), changed
