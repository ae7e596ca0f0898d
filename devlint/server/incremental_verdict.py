"""CPython's verdict on a document again after an edit: only the top-level statements around it.

The engine has CPython compile every file before libcst parses it
(devlint.source.python_verdict): for CPython's own syntax errors, and for its
tree, which places each top-level statement on its line. Compiling a
1,000-line script takes 8 ms, a tenth of the editor's budget per keystroke.

With `PyCF_ONLY_AST` CPython checks the grammar and nothing else (a
`from __future__` import or a `return` out of place is the compiler's concern,
a later stage), and its grammar reads a run of whole top-level statements
alone as it reads them in their file. So after an edit that adds or removes
no line (most keystrokes), only the statements the edit touches are compiled
again, with one unchanged statement before them, on as many blank lines as
keep every line number what it is in the file; every other statement is the
previous tree's node, already on its line. Where the piece does not compile,
or a statement it borders shares a line with another (`a = 1; b = 2`), the
whole text is compiled instead, so that a broken file gets the verdict and
the message a whole compile gives. An edit that adds or removes a line moves
every statement after it: the whole text is compiled then too.
"""

from __future__ import annotations

import ast
import bisect

from devlint.positions import line_starts
from devlint.server.text_diff import changed_span
from devlint.source import PythonVerdict, python_verdict


class IncrementalVerdict:
    """One document's latest text and CPython tree; `verdict(text)` compiles what the edit changed."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._tree: ast.Module | None = None
        self.compiled_whole: bool = True  # whether the last call compiled the whole text

    def verdict(self, text: str) -> PythonVerdict:
        """What `python_verdict(text)` says."""
        if self._tree is not None and text == self._text:
            self.compiled_whole = False
            return PythonVerdict(tree=self._tree)
        tree = self._splice(text) if self._tree is not None else None
        if tree is None:
            verdict = python_verdict(text)
            self._text, self._tree = text, verdict.tree
            self.compiled_whole = True
            return verdict
        self._text, self._tree = text, tree
        self.compiled_whole = False
        return PythonVerdict(tree=tree)

    def _splice(self, new: str) -> ast.Module | None:
        old, tree = self._text, self._tree
        assert old is not None and tree is not None
        body = tree.body
        if not body or "\r" in new or "\r" in old or new.count("\n") != old.count("\n"):
            return None
        prefix, old_end, new_end = changed_span(old, new)
        # The edit holds as many line breaks in both versions: it spans the same lines in each.
        first_line = old.count("\n", 0, prefix) + 1
        last_line = first_line + old.count("\n", prefix, old_end)
        starts = [_first_line(statement) for statement in body]
        ends = [statement.end_lineno or statement.lineno for statement in body]
        touched = bisect.bisect_right(starts, first_line) - 1  # the statement the edit starts in (or after)
        begin = touched - 1  # one unchanged statement before it
        after = bisect.bisect_right(starts, last_line)  # the first statement starting after the edit
        if begin > 0 and starts[begin] <= ends[begin - 1] or 0 < after < len(body) and starts[after] <= ends[after - 1]:
            return None  # the piece would start or end inside a line that holds two statements
        piece_first = starts[begin] if begin >= 0 else 1
        offsets = line_starts(new)
        chunk_start = offsets[piece_first - 1]
        chunk_end = offsets[starts[after] - 1] if after < len(body) else len(new)
        # Compiled as the whole text is (the same recursion limit), on blank lines that keep its lines.
        piece = python_verdict("\n" * (piece_first - 1) + new[chunk_start:chunk_end]).tree
        if piece is None:
            return None  # a whole compile says what is wrong, and where
        kept_before = body[: max(begin, 0)]
        return ast.Module(body=[*kept_before, *piece.body, *body[after:]], type_ignores=[])


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    return min(d.lineno for d in decorators) if decorators else statement.lineno
