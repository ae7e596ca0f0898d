"""Notebooks in the editor: LSP notebook documents, checked whole as `devlint check` checks a `.ipynb`.

An editor sends a notebook as a notebook document holding one text document
per cell. Checked alone, a cell would miss the cells before it (the `device`
chosen in cell 2 is the one cell 7 moves its batches to) and read IPython
magics as syntax errors. So the server checks the cells together: it writes
them as the notebook JSON the CLI reads (devlint.notebook joins the code cells,
blanks IPython syntax and says in which cell each finding lies) and publishes
each finding on its cell's document, its fix's edits as offsets in that cell.
Cell numbers count every cell, markdown too, as the notebook file does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from lsprotocol import types

from devlint.finding import Edit, Finding, Fix, Position
from devlint.positions import line_starts


@dataclass(frozen=True)
class NotebookCell:
    uri: str  # the cell's own text document
    code: bool  # a code cell (a markdown cell is numbered but not checked)
    text: str


def notebook_text(cells: Sequence[NotebookCell]) -> str:
    """The cells as the JSON of an nbformat 4 notebook, for the engine's notebook reader."""
    document = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": cell.text}
            if cell.code
            else {"cell_type": "markdown", "metadata": {}, "source": cell.text}
            for cell in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1)


def cells_of(notebook: types.NotebookDocument, texts: dict[str, str]) -> tuple[NotebookCell, ...]:
    """The notebook's cells in order, with the text the editor last sent for each."""
    return tuple(
        NotebookCell(cell.document, cell.kind == types.NotebookCellKind.Code, texts.get(cell.document, "")) for cell in notebook.cells
    )


def by_cell(findings: Sequence[Finding], cells: Sequence[NotebookCell]) -> dict[str, list[Finding]]:
    """Each finding on its cell's document, at its place in the cell; every cell is listed (an
    empty list clears what was published before). A finding about the notebook as a whole (one
    with no cell) is shown at the start of the first code cell."""
    found: dict[str, list[Finding]] = {cell.uri: [] for cell in cells}
    first_code = next((cell.uri for cell in cells if cell.code), cells[0].uri if cells else None)
    for finding in findings:
        span = finding.cell
        if span is not None and 1 <= span.cell <= len(cells):
            cell = cells[span.cell - 1]
            # Related places are lines of the joined cells: the message itself names their cells.
            found[cell.uri].append(replace(finding, start=span.start, end=span.end, related=(), cell=None, fix=_in_cell(finding.fix, span.cell, cell.text)))
        elif first_code is not None:
            found[first_code].append(replace(finding, start=Position(1, 1), end=Position(1, 1), related=(), cell=None, fix=None))
    return found


def _in_cell(fix: Fix | None, number: int, text: str) -> Fix | None:
    """The fix with its edits as offsets in the cell's text; none where an edit lies in another
    cell or is not placed (`devlint check --fix` applies those)."""
    if fix is None:
        return None
    starts = line_starts(text)  # every line break a finding's position counts: \r\n, \r, \n
    edits = []
    for edit in fix.edits:
        if edit.cell != number or edit.start_position is None or edit.end_position is None:
            return None
        start, end = _offset(starts, edit.start_position, len(text)), _offset(starts, edit.end_position, len(text))
        if start is None or end is None:
            return None
        edits.append(Edit(start, end, edit.replacement, edit.start_position, edit.end_position))
    return replace(fix, edits=tuple(edits))


def _offset(starts: list[int], position: Position, length: int) -> int | None:
    if not 1 <= position.line <= len(starts):
        return None
    offset = starts[position.line - 1] + position.column - 1
    return offset if offset <= length else None
