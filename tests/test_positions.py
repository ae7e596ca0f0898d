"""devlint's own position index must agree with libcst's PositionProvider on every node."""

from __future__ import annotations

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


def _assert_same(text: str) -> None:
    module = cst.parse_module(text)
    reference = _reference(module)
    ours = Positions(module, text)
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
