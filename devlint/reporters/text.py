"""`path:line:col: CODE message`, then a summary line."""

from __future__ import annotations

from collections.abc import Sequence

import click

from devlint.finding import Finding


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def render(findings: Sequence[Finding], color: bool) -> str:
    lines = []
    for finding in findings:
        location = f"{finding.path}:{finding.start.line}:{finding.start.column}:"
        code = finding.code
        mark = " [*]" if finding.fixable else ""
        if color:
            location = click.style(location, bold=True)
            code = click.style(code, fg="red", bold=True)
            mark = click.style(mark, fg="cyan") if mark else ""
        lines.append(f"{location} {code}{mark} {finding.message}")
    lines.append(summary(findings))
    return "\n".join(lines) + "\n"


def summary(findings: Sequence[Finding]) -> str:
    if not findings:
        return "All checks passed!"
    safe = sum(1 for f in findings if f.fixable)
    unsafe = sum(1 for f in findings if f.fix is not None and not f.fix.safe)
    line = f"Found {_plural(len(findings), 'problem')}"
    extras = []
    if safe:
        extras.append(f"{safe} fixable with --fix")
    if unsafe:
        extras.append(f"{unsafe} more with --unsafe-fixes")
    if extras:
        line += f" ({', '.join(extras)})"
    return line + "."


def statistics(findings: Sequence[Finding], color: bool) -> str:
    counts: dict[str, list[Finding]] = {}
    for finding in findings:
        counts.setdefault(finding.code, []).append(finding)
    from devlint.rules import all_infos

    names = {info.code: info.name for info in all_infos()}
    lines = []
    for code, group in sorted(counts.items(), key=lambda item: (-len(item[1]), item[0])):
        fixable = "[*]" if any(f.fixable for f in group) else "   "
        lines.append(f"{len(group):>5}\t{code}\t{fixable} {names.get(code, '')}")
    lines.append(summary(findings))
    return "\n".join(lines) + "\n"
