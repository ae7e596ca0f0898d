"""IPython's own syntax in a notebook cell, blanked so that the rest can be analysed as Python.

Every character keeps its place (a blanked statement becomes `...` padded with
spaces), so a position in the blanked text is the same position in the cell.
What IPython reads as a statement of its own is found as its input transformer
finds it: at the start of a logical line, outside strings and brackets.
"""

from __future__ import annotations

import re

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst and CPython count as a line break
# Cell magics whose body is Python that IPython runs (timed, captured, profiled): the body is analysed.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_CELL_MAGIC = re.compile(r"%%(\w*)")
# `files = !ls`, `result = %timeit -o f()`: the assigned name stays, the command goes.
_ASSIGNED_MAGIC = re.compile(r"[A-Za-z_][\w.]*\s*=\s*(?=[%!])")
# IPython's automagic: line magics and shell aliases it runs without the `%` (`cd ..`,
# `pip install onnx`), where the line is no Python of its own.
_AUTOMAGICS = frozenset(
    {"cd", "pwd", "ls", "ll", "pip", "conda", "mamba", "env", "cat", "mkdir", "rmdir", "rm", "cp", "mv", "ldir", "lf", "lk", "lx", "clear",
     "less", "more", "man", "load_ext", "reload_ext", "matplotlib", "autoreload", "config", "run", "who", "whos", "history", "set_env",
     "bookmark", "dhist", "pushd", "popd", "dirs", "alias", "unalias", "rehashx", "sx", "system", "xmode", "precision", "pdb"}
)
_FIRST_WORD = re.compile(r"([A-Za-z_]\w*)(?=\s|$)")


def blank_ipython(text: str) -> str:
    """`text` with IPython's own syntax blanked, every character keeping its place.

    Plain Python is returned as it is: any magic makes a cell invalid Python, so
    only a cell CPython refuses is looked at line by line.
    """
    if not text or _compiles(text):
        return text
    lines = _NEWLINE.split(text)
    breaks = [m.group(0) for m in _NEWLINE.finditer(text)] + [""]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        magic = _CELL_MAGIC.match(lines[first].lstrip())
        if magic is not None:
            if magic.group(1) not in PYTHON_CELL_MAGICS:
                # `%%bash`, `%%writefile`, `%%html`: not Python, nothing to analyse.
                return "".join(_spaces(line) + brk for line, brk in zip(lines, breaks))
            lines[first] = _spaces(lines[first])
    out = []
    state = _LineState()
    continued_magic = False
    for line, brk in zip(lines, breaks):
        if continued_magic:
            continued_magic = line.rstrip().endswith("\\")
            out.append(_spaces(line) + brk)
            continue
        if state.at_statement_start():
            blanked = _blank_statement(line, state.code_part(line))
            if blanked is not None:
                continued_magic = line.rstrip().endswith("\\")
                out.append(blanked + brk)
                continue
        state.feed(line)
        out.append(line + brk)
    return "".join(out)


def _compiles(text: str) -> bool:
    try:
        compile(text, "<cell>", "exec", 0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST: parse only
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _blank_statement(line: str, code: str) -> str | None:
    """The line with its IPython statement blanked, or None for a line of Python."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith(("%", "!", "?")) or (code.rstrip().endswith("?") and not stripped.startswith("#")):
        return indent + _placeholder(stripped)
    assigned = _ASSIGNED_MAGIC.match(stripped)
    if assigned is not None:
        return indent + assigned.group(0) + _placeholder(stripped[assigned.end() :])
    word = _FIRST_WORD.match(stripped)
    if word is not None and word.group(1) in _AUTOMAGICS and not _compiles(stripped):
        return indent + _placeholder(stripped)
    return None


def _placeholder(text: str) -> str:
    """An expression statement as long as `text` (`...`, or `0` where `text` is shorter)."""
    filler = "..." if len(text) >= 3 else "0"
    return filler + " " * (len(text) - len(filler))


def _spaces(text: str) -> str:
    return " " * len(text)


class _LineState:
    """Just enough of Python's tokenizer to tell where a statement starts: strings, brackets, backslashes."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""  # the open string's quote ("", '"', "'''", ...)
        self.continued = False

    def at_statement_start(self) -> bool:
        return not self.quote and self.depth == 0 and not self.continued

    def code_part(self, line: str) -> str:
        """The line up to its comment (for a line that starts outside any string)."""
        probe = _LineState()
        end = probe._scan(line)
        return line[:end]

    def feed(self, line: str) -> None:
        self._scan(line)

    def _scan(self, line: str) -> int:
        """Advance over one line; returns where its comment starts (its length if none)."""
        i = 0
        comment = len(line)
        self.continued = False
        while i < len(line):
            char = line[i]
            if self.quote:
                if char == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = ""
                    continue
                i += 1
                continue
            if char == "#":
                comment = i
                break
            if char in "\"'":
                triple = line[i : i + 3]
                self.quote = triple if triple in ('"""', "'''") else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            i += 1
        if self.quote in ('"', "'"):
            # A one-quote string goes on past the line only after a backslash.
            if not line.endswith("\\"):
                self.quote = ""
        elif not self.quote and comment == len(line) and line.endswith("\\"):
            self.continued = True
        return comment
