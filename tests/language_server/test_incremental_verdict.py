"""The language server's CPython verdict after an edit is the one a whole compile gives."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from devlint.server.incremental_verdict import IncrementalVerdict
from devlint.source import PythonVerdict, UnreadableSource, python_verdict

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))

SCRIPT = '''"""A script."""
import torch


@torch.no_grad()
def evaluate(model, loader):
    for x, y in loader:
        model(x)


def train(model, loader):
    for x, y in loader:
        model(x.cuda())


a = 1; b = 2
if __name__ == "__main__":
    train(torch.nn.Linear(2, 2), [])
'''


def _same(got: PythonVerdict, whole: PythonVerdict) -> None:
    assert (got.tree is None) == (whole.tree is None)
    if whole.tree is not None:
        assert ast.dump(got.tree, include_attributes=True) == ast.dump(whole.tree, include_attributes=True)
    assert _said(got.syntax_error) == _said(whole.syntax_error)
    assert _said(got.too_deep) == _said(whole.too_deep)


def _said(error: UnreadableSource | None) -> tuple[str, int | None, int | None] | None:
    return None if error is None else (str(error), error.line, error.column)


def _check(compiler: IncrementalVerdict, text: str) -> PythonVerdict:
    got = compiler.verdict(text)
    _same(got, python_verdict(text))
    return got


def test_an_edit_inside_a_line_compiles_only_the_statements_around_it() -> None:
    compiler = IncrementalVerdict()
    first = _check(compiler, SCRIPT)
    assert compiler.compiled_whole
    second = _check(compiler, SCRIPT.replace("x.cuda()", "x.cpu()"))
    assert not compiler.compiled_whole
    assert second.tree is not None and first.tree is not None
    # The statements before `evaluate` and after `train` are the first tree's own nodes.
    assert second.tree.body[0] is first.tree.body[0]
    assert second.tree.body[-1] is first.tree.body[-1]


def test_an_edit_that_adds_a_line_compiles_the_whole_text() -> None:
    compiler = IncrementalVerdict()
    compiler.verdict(SCRIPT)
    _check(compiler, SCRIPT.replace("model(x)\n", "model(x)\n        pass\n"))
    assert compiler.compiled_whole


def test_a_broken_edit_gets_the_whole_compiles_message_and_the_next_edit_splices_again() -> None:
    compiler = IncrementalVerdict()
    compiler.verdict(SCRIPT)
    broken = _check(compiler, SCRIPT.replace("model(x.cuda())", "model(x.cuda()"))
    assert broken.syntax_error is not None and compiler.compiled_whole
    _check(compiler, SCRIPT.replace("x.cuda()", "x.to(0)"))
    _check(compiler, SCRIPT.replace("x.cuda()", "x.to(1)"))
    assert not compiler.compiled_whole


def test_an_edit_beside_two_statements_on_one_line_compiles_the_whole_text() -> None:
    compiler = IncrementalVerdict()
    compiler.verdict(SCRIPT)
    _check(compiler, SCRIPT.replace('"__main__"', '"__mane__"'))
    assert compiler.compiled_whole


def test_an_edit_that_indents_a_top_level_statement_is_the_whole_compiles_error() -> None:
    compiler = IncrementalVerdict()
    compiler.verdict(SCRIPT)
    got = _check(compiler, SCRIPT.replace("\ndef train", "\n def train"))
    assert got.syntax_error is not None


def _edit_in_place(rng: random.Random, text: str) -> str:
    """One keystroke's worth of change that adds or removes no line."""
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    line = lines[k]
    at = rng.randrange(len(line) + 1)
    op = rng.random()
    if op < 0.4:
        line = line[:at] + rng.choice(["q", "1", "(", ")", "[", ":", " ", '"', "#", "\\"]) + line[at:]
    elif op < 0.7:
        line = line[:at] + line[at + 1 :]
    elif op < 0.85:
        names = [m.start() for m in re.finditer(r"[A-Za-z_]\w*", line)]
        if names:
            start = rng.choice(names)
            line = line[:start] + "renamed" + line[start:]
    else:
        line = rng.choice(["", "    ", "  "]) + line.lstrip()
    lines[k] = line
    return "\n".join(lines)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_random_edits_inside_lines_give_the_whole_compile(path: Path) -> None:
    rng = random.Random(path.name)
    text = path.read_text(encoding="utf-8")
    compiler = IncrementalVerdict()
    compiler.verdict(text)
    spliced = 0
    for _ in range(40):
        candidate = _edit_in_place(rng, text)
        got = _check(compiler, candidate)
        spliced += not compiler.compiled_whole
        if got.tree is not None:
            text = candidate  # go on from working code, as a user mostly does
    assert spliced > 5
