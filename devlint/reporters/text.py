"""`path:line:col: CODE message`, then a summary line; statistics; the list of applied fixes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import click

from devlint.finding import Finding

if TYPE_CHECKING:
    from devlint.reporters.options import ReportOptions


def _plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else suffix}"


def _place(finding: Finding) -> str:
    """`line:col`, or `cell N:line:col` in a notebook (as ruff writes it)."""
    start = finding.shown_start
    where = f"{start.line}:{start.column}"
    return where if finding.cell is None else f"cell {finding.cell.cell}:{where}"


def render(findings: Sequence[Finding], options: "ReportOptions") -> str:
    lines = []
    for finding in findings:
        location = f"{finding.path}:{_place(finding)}:"
        code = finding.code
        applies = options.applies(finding)
        mark = " [*]" if applies else ""
        if options.color:
            location = click.style(location, bold=True)
            code = click.style(code, fg="red", bold=True)
            mark = click.style(mark, fg="cyan") if mark else ""
        lines.append(f"{location} {code}{mark} {finding.message}")
        if options.show_fixes and finding.fix is not None and finding.fix.title:
            unsafe = "" if finding.fix.safe else " (unsafe)"
            lines.append(f"  help: {finding.fix.title}{unsafe}")
    lines.append(summary(findings, options))
    return "\n".join(lines) + "\n"


def hidden_unsafe(findings: Sequence[Finding], options: "ReportOptions") -> int:
    """Fixes that only --unsafe-fixes would apply (none once it is given)."""
    if options.unsafe_fixes:
        return 0
    return sum(1 for f in findings if f.fix is not None and f.fix.edits and not f.fix.safe)


def summary(findings: Sequence[Finding], options: "ReportOptions") -> str:
    if not findings:
        return "All checks passed!"
    applicable = sum(1 for f in findings if options.applies(f))
    hidden = hidden_unsafe(findings, options)
    line = f"Found {_plural(len(findings), 'problem')}"
    if applicable and hidden:
        line += f" ({applicable} fixable with --fix, {hidden} more with --unsafe-fixes)"
    elif applicable:
        line += f" ({applicable} fixable with --fix)"
    elif hidden:
        # As ruff: say that none applies before saying what --unsafe-fixes would add.
        line += f" (no fixes available; {_plural(hidden, 'hidden fix', 'es')} can be enabled with --unsafe-fixes)"
    return line + "."


def diff_summary(fixed: int, remaining: Sequence[Finding], options: "ReportOptions") -> str:
    """The line `--diff` prints on standard error, as ruff's fix-only summary ("" when there is nothing to say)."""
    hidden = hidden_unsafe(remaining, options)
    if fixed and hidden:
        return f"Would fix {_plural(fixed, 'problem')} ({_plural(hidden, 'additional fix', 'es')} available with --unsafe-fixes)."
    if fixed:
        return f"Would fix {_plural(fixed, 'problem')}."
    if hidden:
        return f"No problems would be fixed ({_plural(hidden, 'fix', 'es')} available with --unsafe-fixes)."
    return ""


def fix_summary(fixed: Mapping[str, Counter[str]], names: Mapping[str, str], verb: str = "Fixed") -> str:
    """`--show-fixes`: each file and the codes whose fixes were applied, as ruff lists them."""
    total = sum(sum(counts.values()) for counts in fixed.values())
    if not total:
        return ""
    width = len(str(max(max(counts.values()) for counts in fixed.values() if counts)))
    lines = [f"{verb} {_plural(total, 'problem')}:"]
    for path in sorted(fixed):
        counts = fixed[path]
        if not counts:
            continue
        lines.append(f"- {path}:")
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"    {count:>{width}} × {code} ({names.get(code, '')})")
    return "\n".join(lines) + "\n"


def _groups(findings: Sequence[Finding], options: "ReportOptions") -> list[tuple[str, int, bool]]:
    counts: dict[str, list[Finding]] = {}
    for finding in findings:
        counts.setdefault(finding.code, []).append(finding)
    return [
        (code, len(group), any(options.applies(f) for f in group))
        for code, group in sorted(counts.items(), key=lambda item: (-len(item[1]), item[0]))
    ]


def statistics(findings: Sequence[Finding], options: "ReportOptions") -> str:
    from devlint.rules import all_infos

    names = {info.code: info.name for info in all_infos()}
    lines = []
    for code, count, fixable in _groups(findings, options):
        marker = "[*]" if fixable else "   "
        lines.append(f"{count:>5}\t{code}\t{marker} {names.get(code, '')}")
    lines.append(summary(findings, options))
    return "\n".join(lines) + "\n"


def statistics_json(findings: Sequence[Finding], options: "ReportOptions") -> str:
    """ruff's `--statistics --output-format json`: one object per code, most frequent first."""
    from devlint.rules import all_infos

    names = {info.code: info.name for info in all_infos()}
    rows = [
        {"code": code, "name": names.get(code, ""), "count": count, "fixable": fixable}
        for code, count, fixable in _groups(findings, options)
    ]
    return json.dumps(rows, indent=2) + "\n"
