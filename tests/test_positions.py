"""devlint's own position index must agree with libcst's PositionProvider on every node."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from devlint.positions import Positions
from devlint.tree import descendants

REPO = Path(__file__).resolve().parent.parent

TRICKY = {
    "crlf": "import torch\r\nx = torch.zeros(3)\r\nif x:\r\n    y = x.cuda()  # c\r\n",
    "lone_cr": "a = 1\rb = (2,\r     3)\r",
    "tabs_and_unicode": "def f(ß):\n\tif ß:\n\t\treturn 'é' + \"ü\"\n\treturn None\n",
    "decorators_and_comments": "# head\n\n@a.b(1)\n# between\n@c\nclass K(  # x\n    Base):\n    '''doc'''\n\n    def m(self, *, k=1): ...\n",
    "no_trailing_newline": "x = [1,\n     2]",
    "continuation": "y = 1 + \\\n    2\nz = f(\n    a,\n)  # end\n",
    "fstring_and_walrus": "if (n := len(x)) > 1:\n    print(f'{n!r:>{w}}')\n",
    "empty": "",
    "semicolons_and_async": "import a; import b\n\n\nasync def f():\n    await g(); return 1\n# tail\n",
    "decorated_first": "@dec\n# note\n@other(1,\n  2)\ndef f(): pass\n\n# c\n@dec\nclass C: pass\n",
    "header_and_match": "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\nmatch x:\n    case 1:\n        y = f(1)\n    case _:\n        pass\n",
}


def _reference(module: cst.Module) -> dict[cst.CSTNode, object]:
    return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


def _line_starts(text: str) -> list[int]:
    starts = [0]
    i = 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            i += 1
        if text[i] in "\r\n":
            starts.append(i + 1)
        i += 1
    return starts


@pytest.mark.parametrize("with_tree", [False, True], ids=["whole module", "by statement"])
def test_both_ways_agree_on_tricky_texts(with_tree: bool) -> None:
    for text in TRICKY.values():
        _assert_same(text, with_tree)


def _assert_same(text: str, with_tree: bool = True) -> None:
    module = cst.parse_module(text)
    reference = _reference(module)
    # Without CPython's tree every position comes from one pass over the module;
    # with it, each node's statement is generated on its own when first asked about.
    ours = Positions(module, text, ast.parse(text) if with_tree else None)
    # libcst ends a last line without a newline as if it had one
    starts = _line_starts(text if module.has_trailing_newline or not module.body else text + module.default_newline)
    checked = 0
    for node in descendants(module):
        expected = reference[node]
        assert ours.range(node) == expected, (type(node).__name__, module.code_for_node(node))
        start, end = ours.offsets(node)
        assert (start, end) == (
            starts[expected.start.line - 1] + expected.start.column,
            starts[expected.end.line - 1] + expected.end.column,
        )
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_texts_match_libcst(name: str) -> None:
    _assert_same(TRICKY[name])


@pytest.mark.parametrize("path", sorted((REPO / "fixtures").glob("*.py")), ids=lambda p: p.name)
def test_fixtures_match_libcst(path: Path) -> None:
    _assert_same(path.read_text(encoding="utf-8"))


def test_offsets_slice_the_node_text() -> None:
    text = "import torch\r\nx = torch.ones(2,\r\n    device='cuda')\r\n"
    module = cst.parse_module(text)
    positions = Positions(module, text)
    for node in descendants(module):
        if isinstance(node, cst.Call):
            start, end = positions.offsets(node)
            assert text[start:end] == "torch.ones(2,\r\n    device='cuda')"
            return
    raise AssertionError("no call found")


def test_only_the_statement_asked_about_is_generated() -> None:
    text = "import torch\n\n\n@decorator\ndef f():\n    return 1\n\n\nx = torch.ones(2).cuda()  # here\n"
    module = cst.parse_module(text)
    positions = Positions(module, text, ast.parse(text))
    call = next(n for n in descendants(module.body[-1]) if isinstance(n, cst.Call))
    start, end = positions.offsets(call)
    assert text[start:end] == "torch.ones(2).cuda()"
    assert positions.range(call) == _reference(module)[call]
    assert set(positions._bases) == {2} and not positions._whole_module


def test_a_statement_that_is_not_where_the_tree_says_falls_back_to_the_whole_module() -> None:
    text = "a = 1\nb = f(2)\n"
    module = cst.parse_module(text)
    wrong_tree = ast.parse("a = 1\n\nb = f(2)\n")  # b one line too low
    positions = Positions(module, text, wrong_tree)
    call = next(n for n in descendants(module) if isinstance(n, cst.Call))
    assert positions.range(call) == _reference(module)[call]
    assert positions._whole_module


def test_a_statement_left_alone_by_an_edit_is_generated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The language server's incremental parser hands the next version the same
    # node for every statement the edit left alone: its spans are reused, shifted.
    from devlint.statement_facts import StatementFacts

    before = "import torch\n\n\ndef f(x):\n    return x.cuda()\n"
    after = "import torch\nimport os\n\n\ndef f(x):\n    return x.cuda()\n"
    first = cst.parse_module(before)
    kept = first.body[1]
    second = first.with_changes(body=[first.body[0], cst.parse_statement("import os\n"), kept])
    assert second.code == after
    facts = StatementFacts()
    call = next(n for n in descendants(kept) if isinstance(n, cst.Call))
    assert Positions(first, before, ast.parse(before), facts).range(call) == _reference(first)[call]
    generated: list[cst.CSTNode] = []
    original = cst.FunctionDef._codegen

    def spy(node: cst.FunctionDef, state: object) -> None:
        generated.append(node)
        original(node, state)  # type: ignore[arg-type]

    monkeypatch.setattr(cst.FunctionDef, "_codegen", spy)
    positions = Positions(second, after, ast.parse(after), facts)
    start, end = positions.offsets(call)
    assert after[start:end] == "x.cuda()"
    assert generated == []
    monkeypatch.undo()
    assert positions.range(call) == _reference(second)[call]
