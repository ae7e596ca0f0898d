"""Findings of a notebook document, placed on its cells (devlint.server.notebooks)."""

from __future__ import annotations

import json

from devlint.finding import CellSpan, Edit, Finding, Fix, Position
from devlint.server.notebooks import NotebookCell, by_cell, notebook_text

CELLS = (
    NotebookCell("nb#a", True, "import torch\rx = torch.zeros(2)\r"),
    NotebookCell("nb#b", False, "# notes"),
    NotebookCell("nb#c", True, "y = x.cuda()\n"),
)


def _finding(cell: int, line: int, edits: tuple[Edit, ...] = ()) -> Finding:
    span = CellSpan(cell, Position(line, 5), Position(line, 13), Position(1, 1), Position(1, 1))
    fix = Fix(edits, safe=True, title="Use `.to(device)`") if edits else None
    return Finding("DL101", "m", "nb.ipynb", Position(9, 5), Position(9, 13), fix=fix, cell=span)


def test_the_cells_are_written_as_the_notebook_json_the_cli_reads() -> None:
    document = json.loads(notebook_text(CELLS))
    assert [(c["cell_type"], c["source"]) for c in document["cells"]] == [
        ("code", CELLS[0].text),
        ("markdown", "# notes"),
        ("code", "y = x.cuda()\n"),
    ]
    assert document["nbformat"] == 4


def test_a_finding_goes_to_its_cell_with_its_fix_as_offsets_in_that_cell() -> None:
    # The first cell's lines end with a lone \r, a line break to Python: its second line starts at 13.
    inside = Edit(100, 106, "to(device)", Position(2, 5), Position(2, 11), cell=1)
    found = by_cell([_finding(1, 2, (inside,))], CELLS)
    assert [len(found[c.uri]) for c in CELLS] == [1, 0, 0]
    [finding] = found["nb#a"]
    assert (finding.start, finding.end, finding.cell) == (Position(2, 5), Position(2, 13), None)
    assert finding.fix is not None and [(e.start, e.end, e.replacement) for e in finding.fix.edits] == [(17, 23, "to(device)")]


def test_a_fix_reaching_into_another_cell_is_not_offered_and_a_finding_without_a_cell_goes_to_the_first_code_cell() -> None:
    elsewhere = Edit(0, 1, "z", Position(1, 1), Position(1, 2), cell=3)
    found = by_cell([_finding(1, 2, (elsewhere,)), Finding("DL000", "m", "nb.ipynb", Position(1, 1), Position(1, 1))], CELLS)
    first, unplaced = found["nb#a"]
    assert first.fix is None
    assert (unplaced.code, unplaced.start) == ("DL000", Position(1, 1))
