"""Code actions: a finding's own fix, a `# noqa` for it, and every safe fix in the file at once."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from devlint.finding import Finding
from devlint.server.diagnostics import diagnostic
from devlint.server.text_diff import changed_span
from devlint.server.text_positions import TextLines
from devlint.suppression import add_noqa

FIX_ALL_KIND = "source.fixAll.devlint"
KINDS = (types.CodeActionKind.QuickFix, FIX_ALL_KIND)
# About the file as a whole, not a line: a `# noqa` cannot silence them.
_NOT_SILENCEABLE = frozenset({"DL000", "DL999"})


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether the client asked for this kind (kinds are hierarchical: `source.fixAll` covers ours)."""
    return only is None or any(kind == asked or kind.startswith(f"{asked}.") for asked in only)


def _edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return p.line, p.character

    return not (key(a.end) < key(b.start) or key(b.end) < key(a.start))


def quick_fixes(
    findings: Sequence[Finding], lines: TextLines, uri: str, version: int | None, within: types.Range
) -> list[types.CodeAction]:
    """For each finding touching `within`: its fix (marked when unsafe), then a `# noqa` for it."""
    actions: list[types.CodeAction] = []
    for finding in findings:
        diag = diagnostic(finding, lines, uri)
        if not _overlaps(diag.range, within):
            continue
        fix = finding.fix
        if fix is not None and fix.edits:
            edits = [types.TextEdit(types.Range(lines.at_offset(e.start), lines.at_offset(e.end)), e.replacement) for e in fix.edits]
            title = f"{fix.title or 'Fix'} ({finding.code})"
            if not fix.safe:
                title += " — unsafe fix: may change behaviour, review it"
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=fix.safe,
                    edit=_edit(uri, version, edits),
                )
            )
        if finding.code in _NOT_SILENCEABLE:
            continue
        # As `devlint check --add-noqa` writes it: extends a `# noqa:` list, and puts the
        # comment where a string that the line opens ends.
        silenced, changed = add_noqa(lines.text, [finding])
        if not changed:
            continue
        start, old_end, new_end = changed_span(lines.text, silenced)
        noqa = types.TextEdit(types.Range(lines.at_offset(start), lines.at_offset(old_end)), silenced[start:new_end])
        actions.append(
            types.CodeAction(
                title=f"Silence {finding.code} on this line (# noqa: {finding.code})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                edit=_edit(uri, version, [noqa]),
            )
        )
    return actions


def fix_all(lines: TextLines, fixed_text: str, uri: str, version: int | None) -> types.CodeAction:
    """One edit replacing only the span that changed: the editor keeps the cursor and folds elsewhere."""
    start, old_end, new_end = changed_span(lines.text, fixed_text)
    edit = types.TextEdit(types.Range(lines.at_offset(start), lines.at_offset(old_end)), fixed_text[start:new_end])
    edits = [edit] if (start, start) != (old_end, new_end) else []
    return types.CodeAction(title="devlint: fix all safe problems", kind=FIX_ALL_KIND, edit=_edit(uri, version, edits))
