"""Jupyter notebooks: read the JSON, join the code cells into one analysed text, map
positions back to cells, and write edited cells back into the original JSON text.

The code cells are joined top to bottom because a notebook is one program run in
that order: a `device` chosen in cell 2 is the one cell 7 moves its batches to.
Each cell is preceded in the joined text by a marker comment of its own, so that
text edited by fixes can be split back into its cells without any bookkeeping.

IPython syntax (`%magic`, `!shell`, `?help`, `%%cell` magics) is not Python; it is
blanked character for character, so that every position in a cell is the same in
the joined text. A blanked statement becomes `...`, which keeps an indented block
that held only a magic a block.

Writing back splices only the `"source"` values of edited cells into the original
JSON text: indentation, key order, escapes, outputs and metadata stay byte for byte
what they were, whichever tool wrote the notebook.
"""

from __future__ import annotations

import bisect
import codecs
import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from devlint.finding import CellSpan, Edit, Finding, Fix, Position, Related
from devlint.ipython_syntax import blank_ipython
from devlint.json_spans import raw_length, source_spans
from devlint.source import SourceText, UnreadableSource

NOTEBOOK_SUFFIX = ".ipynb"
# The one nbformat major version read: version 3 (IPython 2, 2014) nests cells in "worksheets".
_NBFORMAT = 4
_MARKER = "# devlint: notebook cell {}\n"
_MARKER_LINE = re.compile(r"^# devlint: notebook cell (\d+)\n", re.MULTILINE)
_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst and CPython count as a line break
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")
_NON_ASCII_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", re.ASCII)


def is_notebook(path: object) -> bool:
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


class UnmappableEdit(ValueError):
    """Edited text that cannot be put back into the notebook's cells."""


@dataclass(frozen=True)
class Cell:
    """One code cell: its text as written, as analysed, and where its source lies in the JSON text."""

    number: int  # 1-based, counting every cell (markdown too), as the notebook lists them
    written: str
    analysed: str  # `written` with IPython syntax blanked: same length, same line breaks
    first_line: int  # the line of the joined text that holds the cell's first line
    start: int  # offset of the cell's first character in the joined text
    source_span: tuple[int, int]  # the `"source"` value in the JSON text (end exclusive)
    pieces: tuple[tuple[int, int], ...]  # each string of that value, a list's items or the one string
    listed: bool  # the source is a list of lines (nbformat's own way), not one string
    added_newline: bool  # the joined text ends the cell with a line break it does not have


@dataclass(frozen=True)
class NotebookSource(SourceText):
    """A notebook as the engine sees a file: `text` is the joined, analysed code cells."""

    document: str = ""  # the JSON text, decoded
    cells: tuple[Cell, ...] = ()
    _document_lines: list[int] = field(default_factory=list, compare=False, repr=False)

    def encode(self, text: str) -> bytes:
        """The notebook's bytes with the cells of `text` (this notebook's joined text, edited) put back."""
        if text == self.text:
            return self._bytes(self.document)
        return self._bytes(self._document_with(self._cell_texts(text)))

    def _bytes(self, document: str) -> bytes:
        data = document.encode("utf-8")
        return codecs.BOM_UTF8 + data if self.bom else data

    def _cell_texts(self, text: str) -> list[str]:
        """Each cell's new text as written (magics restored), split from edited joined text."""
        parts = _MARKER_LINE.split(text)
        numbers = [int(number) for number in parts[1::2]]
        if parts[0] or numbers != [cell.number for cell in self.cells]:
            raise UnmappableEdit("an edit crosses the boundary between two cells")
        return [_restored(cell, analysed) for cell, analysed in zip(self.cells, parts[2::2])]

    def _document_with(self, texts: Sequence[str]) -> str:
        document = self.document
        ensure_ascii: bool | None = None
        pieces: list[str] = []
        position = 0
        for cell, text in zip(self.cells, texts):
            if text == cell.written:
                continue
            if ensure_ascii is None:
                ensure_ascii = _writes_ascii(document)
            start, end = cell.source_span
            pieces += [document[position:start], _source_value(document, cell, text, ensure_ascii)]
            position = end
        pieces.append(document[position:])
        edited = "".join(pieces)
        _verify(self.document, edited, {cell.number: text for cell, text in zip(self.cells, texts) if text != cell.written})
        return edited

    def cell_diffs(self, display: str, text: str) -> str:
        """A unified diff of each cell `text` changes, headed `path:cell N` (as ruff heads them)."""
        out = []
        for cell, new in zip(self.cells, self._cell_texts(text)):
            if new == cell.written:
                continue
            name = f"{display}:cell {cell.number}"
            lines = difflib.unified_diff(cell.written.splitlines(keepends=True), new.splitlines(keepends=True), name, name)
            out.extend(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
        return "".join(out)

    # -- positions -------------------------------------------------------------
    def _cell_at(self, line: int) -> Cell | None:
        index = bisect.bisect_right([cell.first_line for cell in self.cells], line) - 1
        return self.cells[max(index, 0)] if self.cells else None

    def cell_position(self, position: Position) -> tuple[Cell, Position] | None:
        """The cell holding a position of the joined text, and the position within the cell."""
        cell = self._cell_at(position.line)
        if cell is None:
            return None
        line = position.line - cell.first_line + 1
        last = len(_line_starts(cell.written))
        if line < 1:
            return cell, Position(1, 1)
        if line > last:  # the line break the joined text adds, or the end of the text
            return cell, Position(last, len(cell.written) - _line_starts(cell.written)[-1] + 1)
        return cell, Position(line, position.column)

    def file_position(self, cell: Cell, position: Position) -> Position:
        """Where a position in a cell lies in the notebook file's JSON text."""
        offset = _line_starts(cell.written)[position.line - 1] + position.column - 1
        absolute = cell.source_span[0]
        for start, end in cell.pieces:
            length = len(json.loads(self.document[start:end]))
            if offset < length or (start, end) == cell.pieces[-1]:
                absolute = start + 1 + raw_length(self.document, start + 1, end - 1, offset)
                break
            offset -= length
        if not self._document_lines:
            self._document_lines.extend(m.end() for m in _NEWLINE.finditer(self.document))
        line = bisect.bisect_right(self._document_lines, absolute)
        line_start = self._document_lines[line - 1] if line else 0
        return Position(line + 1, absolute - line_start + 1)

    def located(self, findings: Sequence[Finding]) -> list[Finding]:
        """The findings with where the user sees them: the cell, the lines within it, the file's JSON text."""
        return [self._located(finding) for finding in findings]

    def _located(self, finding: Finding) -> Finding:
        start = self.cell_position(finding.start)
        end = self.cell_position(finding.end)
        if start is None or end is None:
            return finding
        cell, cell_start = start
        cell_end = end[1] if end[0] is cell else cell_start
        span = CellSpan(cell.number, cell_start, cell_end, self.file_position(cell, cell_start), self.file_position(cell, cell_end))
        return replace(
            finding,
            message=self._message(finding.message, cell),
            cell=span,
            fix=self._fix(finding.fix),
            related=tuple(self._related(item, cell) for item in finding.related),
        )

    def _message(self, message: str, cell: Cell) -> str:
        """`line 62` of the joined text, named as the user finds it: `line 5`, or `cell 3, line 5`."""

        def named(match: re.Match[str]) -> str:
            place = self.cell_position(Position(int(match.group(1)), 1))
            if place is None:
                return match.group(0)
            where, position = place
            return f"line {position.line}" if where is cell else f"cell {where.number}, line {position.line}"

        return _LINE_REFERENCE.sub(named, message) if "line " in message else message

    def _fix(self, fix: Fix | None) -> Fix | None:
        if fix is None:
            return None
        return replace(fix, edits=tuple(self._edit(edit) for edit in fix.edits))

    def _edit(self, edit: Edit) -> Edit:
        if edit.start_position is None or edit.end_position is None:
            return edit
        start, end = self.cell_position(edit.start_position), self.cell_position(edit.end_position)
        if start is None or end is None:
            return edit
        return replace(edit, start_position=start[1], end_position=end[1], cell=start[0].number)

    def _related(self, item: Related, cell: Cell) -> Related:
        start, end = self.cell_position(item.start), self.cell_position(item.end)
        if start is None or end is None:
            return item
        return replace(item, message=self._message(item.message, cell), start=start[1], end=end[1])


# -- reading -------------------------------------------------------------------

def read_notebook(data: bytes) -> NotebookSource:
    """The notebook in `data`; UnreadableSource (reported as DL000) when it is not one devlint reads."""
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        document = data[len(codecs.BOM_UTF8) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableSource(f"not a Jupyter notebook: not UTF-8 (byte {error.start})") from None
    try:
        notebook = json.loads(document)
    except json.JSONDecodeError as error:
        raise UnreadableSource(f"not a Jupyter notebook: invalid JSON ({error.msg})", error.lineno, error.colno) from None
    except RecursionError:
        raise UnreadableSource("not a Jupyter notebook: JSON nested too deeply") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells", notebook.get("worksheets")), list):
        raise UnreadableSource("not a Jupyter notebook: no list of cells")
    version = notebook.get("nbformat")
    if version != _NBFORMAT:
        raise UnreadableSource(
            f"notebook format {version!r} is not supported: devlint reads nbformat 4 "
            "(convert it with `jupyter nbconvert --to notebook --inplace`)"
        )
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise UnreadableSource("not a Jupyter notebook: `cells` is not a list")
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            raise UnreadableSource(f"not a Jupyter notebook: cell {number} is not an object")
        source = cell.get("source", "")
        if not isinstance(source, str) and not (isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise UnreadableSource(f"not a Jupyter notebook: the source of cell {number} is neither a string nor a list of strings")
    spans = source_spans(document)
    if not _is_python(notebook):
        return NotebookSource("", "utf-8", bom, document)  # an R or Julia notebook: nothing to analyse
    joined: list[str] = []
    length = 0
    line = 1
    kept: list[Cell] = []
    for number, cell in enumerate(cells, 1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        written = source if isinstance(source, str) else "".join(source)
        analysed = blank_ipython(written)
        added = bool(analysed) and not analysed.endswith(("\n", "\r"))
        marker = _MARKER.format(number)
        span, pieces = spans.get(number - 1, ((0, 0), ()))
        kept.append(Cell(number, written, analysed, line + 1, length + len(marker), span, pieces, isinstance(source, list), added))
        body = analysed + ("\n" if added else "")
        joined += [marker, body]
        length += len(marker) + len(body)
        line += 1 + len(_NEWLINE.findall(body))
    return NotebookSource("".join(joined), "utf-8", bom, document, tuple(kept))


def _is_python(notebook: dict[str, object]) -> bool:
    """A notebook whose kernel names another language is not Python; one that names none is."""
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, inner in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(inner), str):
            return value[inner].lower() == "python"
    return True


def _restored(cell: Cell, analysed: str) -> str:
    """A cell's edited analysed text as written: its IPython lines back, the added line break off."""
    if cell.added_newline and analysed.endswith("\n"):
        analysed = analysed[:-1]
    if analysed == cell.analysed:
        return cell.written
    if cell.analysed == cell.written:
        return analysed
    old = _NEWLINE.split(cell.analysed)
    written = _NEWLINE.split(cell.written)
    new = _NEWLINE.split(analysed)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            out += written[i1:i2]
            continue
        if any(old[i] != written[i] for i in range(i1, i2)):
            raise UnmappableEdit("an edit changes a line of IPython syntax")
        out += new[j1:j2]
    breaks = [m.group(0) for m in _NEWLINE.finditer(analysed)]
    return "".join(line + (breaks[i] if i < len(breaks) else "") for i, line in enumerate(out))


def _line_starts(text: str) -> list[int]:
    return [0] + [match.end() for match in _NEWLINE.finditer(text)]


# -- writing back -------------------------------------------------------------------

def _writes_ascii(document: str) -> bool:
    """Whether the notebook was written with json's ensure_ascii (non-ASCII as `\\u` escapes).

    nbformat writes non-ASCII as it is; a document that holds none, and no such
    escape either, is taken to be written that way.
    """
    if not document.isascii():
        return False
    return _NON_ASCII_ESCAPE.search(document) is not None


def _source_value(document: str, cell: Cell, text: str, ensure_ascii: bool) -> str:
    """The JSON text of a cell's new source, laid out as its old one was."""
    start, end = cell.source_span
    if not cell.listed:
        return json.dumps(text, ensure_ascii=ensure_ascii)
    raws = [document[s:e] for s, e in cell.pieces]
    old = [json.loads(raw) for raw in raws]
    new = re.findall(r"[^\n]*\n|[^\n]+$", text)
    items: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            items += raws[i1:i2]
        else:
            items += [json.dumps(line, ensure_ascii=ensure_ascii) for line in new[j1:j2]]
    if not cell.pieces:
        return json.dumps(new, ensure_ascii=ensure_ascii)
    lead = document[start + 1 : cell.pieces[0][0]]
    tail = document[cell.pieces[-1][1] : end - 1]
    separator = document[cell.pieces[0][1] : cell.pieces[1][0]] if len(cell.pieces) > 1 else "," + lead
    return "[" + lead + separator.join(items) + tail + "]"


def _verify(before: str, after: str, sources: dict[int, str]) -> None:
    """The edited JSON text reads as the old notebook with only these cells' sources changed."""
    old, new = json.loads(before), json.loads(after)
    for number, text in sources.items():
        old["cells"][number - 1]["source"] = text
        cell = new["cells"][number - 1]
        cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    if old != new:
        raise UnmappableEdit("the edited notebook would differ outside the edited cells")
