"""Applying the fixes that findings carry: passes until nothing changes, atomic writes.

A file is rewritten only when every pass produced text that parses and the
passes converged; otherwise it is left exactly as it was and the reason is
reported. `--diff` computes the same text and prints it instead of writing.
"""

from __future__ import annotations

import bisect
import difflib
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from devlint.atomic import ReadOnlyFile, rewrite
from devlint.config import Settings
from devlint.context import NOWHERE_IN_PARTICULAR
from devlint.engine import FileResult, check_bytes, selected_rules
from devlint.finding import Edit, Finding, Fix
from devlint.notebook import NotebookSource, UnmappableEdit
from devlint.reading import read_regular
from devlint.respelling import respelled
from devlint.source import python_verdict

# Fixes that overlap wait for the next pass; real files settle in two or three.
MAX_PASSES = 10


@dataclass
class FixOutcome:
    diff: str = ""
    stdin_text: str = ""
    fixed: int = 0
    remaining: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    fixed_by_file: dict[str, Counter[str]] = field(default_factory=dict)  # path -> code -> fixes applied


class FixFailed(Exception):
    """Why a file's fixes were not applied; the file is left untouched."""


def _wanted(finding: Finding, unsafe: bool) -> Fix | None:
    fix = finding.fix
    if fix is None or not fix.edits or (not fix.safe and not unsafe):
        return None
    return fix


def _overlaps(a: Edit, b: Edit) -> bool:
    return _spans_overlap(a.start, a.end, b.start, b.end)


def _spans_overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    if a_start == a_end or b_start == b_end:
        # An insertion touching another edit has no defined order: next pass.
        return a_start <= b_end and b_start <= a_end
    return a_start < b_end and b_start < a_end


def choose_fixes(findings: Sequence[Finding], unsafe: bool, length: int) -> list[Fix]:
    """Fixes of one pass: in source order, each one only if none of its edits
    overlaps an edit already chosen (the rest wait for the next pass)."""
    chosen: list[Fix] = []
    taken = _TakenEdits()
    candidates = [fix for finding in findings if (fix := _wanted(finding, unsafe)) is not None]
    candidates.sort(key=lambda fix: min((edit.start, edit.end) for edit in fix.edits))
    for fix in candidates:
        edits = fix.edits
        if any(edit.start < 0 or edit.end > length or edit.start > edit.end for edit in edits):
            continue  # a rule's bad offsets must not corrupt the file
        if any(_overlaps(a, b) for i, a in enumerate(edits) for b in edits[i + 1 :]):
            continue
        if any(taken.overlaps(edit) for edit in edits):
            continue
        chosen.append(fix)
        for edit in edits:
            taken.add(edit)
    return chosen


class _TakenEdits:
    """The edits chosen so far, in order, asked whether a new edit overlaps any of them.

    They overlap none of each other, so in order of their starts their ends
    never decrease either: an edit can only overlap those that start before it
    ends, and of those only the last few, back to the first that ends before
    it starts. A file with thousands of fixes is not compared pair by pair.
    """

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    def overlaps(self, edit: Edit) -> bool:
        index = bisect.bisect_right(self._spans, (edit.end, sys.maxsize))
        while index > 0:
            index -= 1
            start, end = self._spans[index]
            if end < edit.start:
                return False
            if _spans_overlap(edit.start, edit.end, start, end):
                return True
        return False

    def add(self, edit: Edit) -> None:
        bisect.insort(self._spans, (edit.start, edit.end))


def apply_edits(text: str, fixes: Sequence[Fix]) -> str:
    edits = sorted((edit for fix in fixes for edit in fix.edits), key=lambda edit: (edit.start, edit.end))
    out = []
    position = 0
    for edit in edits:
        out.append(text[position : edit.start])
        out.append(edit.replacement)
        position = edit.end
    out.append(text[position:])
    return "".join(out)


@dataclass
class _FileFix:
    text: str
    fixed: int
    findings: list[Finding]
    codes: Counter[str] = field(default_factory=Counter)


def fix_text(result: FileResult, settings: Settings, unsafe: bool) -> _FileFix:
    """The fixed text of one checked file and the findings left in it.

    Raises FixFailed when a pass produces text that does not parse or the
    passes do not settle.
    """
    assert result.source is not None
    source = result.source
    path = Path(result.path)
    place = NOWHERE_IN_PARTICULAR
    if result.checked_with is not None:
        settings, place = result.checked_with
        place = replace(place, summarise=False)
    enabled, rule_types = selected_rules(settings)
    text = source.text
    findings = result.findings
    fixed = 0
    codes: Counter[str] = Counter()
    for _ in range(MAX_PASSES):
        fixes = choose_fixes(findings, unsafe, len(text))
        if not fixes:
            return _FileFix(text, fixed, findings, codes)
        new_text = apply_edits(text, fixes)
        if new_text == text:
            return _FileFix(text, fixed, findings, codes)
        chosen = {id(fix) for fix in fixes}
        pass_codes = Counter(f.code for f in findings if f.fix is not None and id(f.fix) in chosen)
        error = _parse_error(new_text)
        if error is not None:
            titles = ", ".join(sorted({fix.title for fix in fixes if fix.title})) or "a fix"
            raise FixFailed(
                f"{result.path}: fixing would produce code that does not parse (line {error.raw_line}: {error.message}; "
                f"from: {titles}); file left unchanged, please report it"
            ) from None
        try:
            data = source.encode(new_text)
        except UnicodeEncodeError:
            raise FixFailed(f"{result.path}: the fixed text cannot be written as {source.encoding}; file left unchanged") from None
        except UnmappableEdit as error:
            raise FixFailed(f"{result.path}: {error}; file left unchanged, please report it") from None
        rechecked = check_bytes(data, path, result.path, settings, True, enabled, rule_types, place)
        fixed += len(fixes)
        codes += pass_codes
        text = new_text
        findings = rechecked.findings
    if choose_fixes(findings, unsafe, len(text)):
        raise FixFailed(f"{result.path}: fixes did not settle after {MAX_PASSES} passes; file left unchanged, please report it")
    return _FileFix(text, fixed, findings, codes)


def _parse_error(text: str) -> cst.ParserSyntaxError | None:
    """Why libcst cannot parse `text`, as the analysis parses it (respelled where it must be)."""
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        tree = python_verdict(text).tree
        if tree is None:
            return error
        try:
            cst.parse_module(respelled(text, tree))
        except cst.ParserSyntaxError:
            return error
    return None


def _unified_diff(display: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=display, tofile=display
    )
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _unchanged_on_disk(path: Path, original: bytes) -> bool:
    try:
        return read_regular(path)[0] == original
    except OSError:
        return False


def apply_fixes(results: Sequence[FileResult], settings: Settings, *, unsafe: bool, write: bool, stdin: bool) -> FixOutcome:
    """Fix every checked file; with `write`, rewrite the files that changed.

    With `stdin`, nothing is written: the (fixed) source is returned as
    `stdin_text` for the editor to take.
    """
    outcome = FixOutcome()
    diffs: list[str] = []
    for result in results:
        if result.source is None:
            outcome.remaining.extend(result.findings)
            if stdin:
                outcome.stdin_text = ""
            continue
        original = result.source.text
        try:
            fixed = fix_text(result, settings, unsafe)
        except FixFailed as error:
            outcome.errors.append(str(error))
            outcome.remaining.extend(result.findings)
            if stdin:
                outcome.stdin_text = original
            continue
        if stdin:
            outcome.stdin_text = fixed.text
        if fixed.text != original:
            if not write:  # only --diff prints it, and on a large file difflib takes a while
                if isinstance(result.source, NotebookSource):
                    diffs.append(result.source.cell_diffs(result.path, fixed.text))
                else:
                    diffs.append(_unified_diff(result.path, original, fixed.text))
            if write and not stdin:
                path = Path(result.path)
                if not _unchanged_on_disk(path, result.source.encode(original)):
                    outcome.errors.append(f"{result.path}: changed on disk while devlint ran; not fixed")
                    outcome.remaining.extend(result.findings)
                    continue
                try:
                    rewrite(path, result.source.encode(fixed.text))
                except ReadOnlyFile:
                    outcome.errors.append(f"{result.path}: the file is read-only; not fixed (make it writable to apply the fixes)")
                    outcome.remaining.extend(result.findings)
                    continue
                except OSError as error:
                    outcome.errors.append(f"{result.path}: cannot write the fixed file ({error.strerror or error}); file left unchanged")
                    outcome.remaining.extend(result.findings)
                    continue
        outcome.fixed += fixed.fixed
        if fixed.codes:
            outcome.fixed_by_file[result.path] = fixed.codes
        outcome.remaining.extend(fixed.findings)
    outcome.diff = "".join(diffs)
    outcome.remaining.sort(key=lambda finding: finding.sort_key)
    return outcome
