"""`devlint server` with notebook documents: the cells are checked together, each finding
published on its cell's document (driven over stdio by a real LSP client)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from .session import WAIT_S, Session, session

SETUP = 'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nmodel = torch.nn.Linear(2, 2)\n'
NOTES = "# Training\nThe model goes to the GPU below.\n"
MOVE = "%matplotlib inline\nmodel = model.cuda()\n"


def _cell(lsp: Session, name: str) -> str:
    return lsp.uri("train.ipynb") + "#" + name  # vscode-notebook-cell URIs are the notebook's plus a fragment


async def _published(lsp: Session, uri: str, count: int) -> list[types.Diagnostic]:
    """The diagnostics of `uri`'s `count`th publication (1-based)."""
    while len(lsp.published[uri]) < count:
        lsp._arrived.clear()
        await asyncio.wait_for(lsp._arrived.wait(), WAIT_S)
    return list(lsp.published[uri][count - 1].diagnostics)


def _open(lsp: Session, cells: list[tuple[str, types.NotebookCellKind, str, str]]) -> str:
    uri = lsp.uri("train.ipynb")
    lsp.client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            types.NotebookDocument(uri, "jupyter-notebook", 1, [types.NotebookCell(kind, cell_uri) for cell_uri, kind, _, _ in cells]),
            [types.TextDocumentItem(cell_uri, language, 1, text) for cell_uri, _, language, text in cells],
        )
    )
    return uri


def test_a_notebook_is_checked_whole_and_each_finding_shown_in_its_cell(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            first, notes, second = _cell(lsp, "W0"), _cell(lsp, "W1"), _cell(lsp, "W2")
            uri = _open(
                lsp,
                [
                    (first, types.NotebookCellKind.Code, "python", SETUP),
                    (notes, types.NotebookCellKind.Markup, "markdown", NOTES),
                    (second, types.NotebookCellKind.Code, "python", MOVE),
                ],
            )
            # The model of cell 1 moved in cell 3 (the markdown cell counts), past an IPython magic.
            [diag] = await _published(lsp, second, 1)
            assert (diag.code, diag.range.start.line, diag.range.start.character) == ("DL101", 1, 8)
            assert diag.message.startswith("`model.cuda()` hardcodes a CUDA GPU")
            assert await _published(lsp, first, 1) == []
            assert await _published(lsp, notes, 1) == []

            # Its quick fixes, as a Python file's: the edit is in the cell's own lines.
            params = types.CodeActionParams(types.TextDocumentIdentifier(second), diag.range, types.CodeActionContext(diagnostics=[]))
            found = list(await lsp.client.text_document_code_action_async(params) or [])
            assert [a.title for a in found] == ["Use `.to(device)` (DL101)", "Silence DL101 on this line (# noqa: DL101)"]
            assert found[0].edit is not None and found[0].edit.document_changes is not None
            [change] = found[0].edit.document_changes
            assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == second
            [text_edit] = change.edits
            assert (text_edit.range.start.line, text_edit.range.start.character, text_edit.new_text) == (1, 14, "to(device)")

            # Editing cell 3 checks the notebook again: the finding goes.
            lsp.client.notebook_document_did_change(
                types.DidChangeNotebookDocumentParams(
                    types.VersionedNotebookDocumentIdentifier(2, uri),
                    types.NotebookDocumentChangeEvent(
                        cells=types.NotebookDocumentCellChanges(
                            text_content=[
                                types.NotebookDocumentCellContentChanges(
                                    types.VersionedTextDocumentIdentifier(version=2, uri=second),
                                    [types.TextDocumentContentChangeWholeDocument(text="model = model.to('cpu')\n")],
                                )
                            ]
                        )
                    ),
                )
            )
            assert await _published(lsp, second, 2) == []

            lsp.client.notebook_document_did_close(
                types.DidCloseNotebookDocumentParams(
                    types.NotebookDocumentIdentifier(uri), [types.TextDocumentIdentifier(c) for c in (first, notes, second)]
                )
            )
            assert await _published(lsp, second, 3) == []

    asyncio.run(scenario())


def test_a_cell_alone_is_never_checked_as_a_file(tmp_path: Path) -> None:
    # An editor without notebook support sends cells as Python documents of their own:
    # checked alone, `model` would be unknown and `%matplotlib` a syntax error.
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("train.ipynb", MOVE)
            other = lsp.open("other.py", "import torch\nx = torch.zeros(2).cuda()\n")
            [diag] = await lsp.diagnostics(other)
            assert diag.code == "DL101"
            assert lsp.published[uri] == []

    asyncio.run(scenario())
