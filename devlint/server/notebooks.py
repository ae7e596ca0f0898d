"""Notebooks in the editor: LSP notebook documents, checked whole as `devlint check` checks a `.ipynb`.

An editor sends a notebook as a notebook document holding one text document
per cell. Checked alone, a cell would miss the cells before it (the `device`
chosen in cell 2 is the one cell 7 moves its batches to) and read IPython
magics as syntax errors. So the server checks the cells together: it writes
them as the notebook JSON the CLI reads (devlint.notebook joins the code cells,
blanks IPython syntax and says in which cell each finding lies) and publishes
each finding on its cell's document. Cell numbers count every cell, markdown
too, as the notebook file does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from lsprotocol import types

from devlint.finding import Finding, Position


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
            # Related places are lines of the joined cells: the message itself names their cells.
            found[cells[span.cell - 1].uri].append(_moved(finding, span.start, span.end))
        elif first_code is not None:
            found[first_code].append(_moved(finding, Position(1, 1), Position(1, 1)))
    return found


def _moved(finding: Finding, start: Position, end: Position) -> Finding:
    # No fix: a fix's edits are offsets in the joined cells (`devlint check --fix` writes them back).
    return replace(finding, start=start, end=end, related=(), cell=None, fix=None)
