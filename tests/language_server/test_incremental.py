"""The incremental parser gives exactly the tree a whole parse gives, reusing what an edit left alone."""

from __future__ import annotations

import random
import re
from pathlib import Path

import libcst as cst
import pytest

from devlint.parsing import parse_module
from devlint.server.incremental import IncrementalParser

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))

SCRIPT = '''"""A script."""

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


def train(model, loader):
    for x, y in loader:
        model(x)


def evaluate(model, loader):
    for x, y in loader:
        model(x)


if __name__ == "__main__":
    train(Net().cuda(), [])
'''


def _check(parser: IncrementalParser, text: str) -> cst.Module:
    got = parser.parse(text)
    whole = parse_module(text)
    assert got.code == text
    assert got.deep_equals(whole)
    assert (got.default_indent, got.default_newline, got.has_trailing_newline) == (
        whole.default_indent,
        whole.default_newline,
        whole.has_trailing_newline,
    )
    return got


def test_an_edit_inside_one_function_parses_that_function_only() -> None:
    parser = IncrementalParser()
    before = parser.parse(SCRIPT)
    assert parser.reparsed is None  # the first parse is a whole one
    after = _check(parser, SCRIPT.replace("    for x, y in loader:\n        model(x)\n\n\ndef evaluate", "    for x, y in loader:\n        model(x + 1)\n\n\ndef evaluate"))
    assert parser.reparsed == 1
    kept = [a is b for a, b in zip(before.body, after.body)]
    assert kept == [True, True, True, True, False, True, True]


def test_an_edit_at_a_statements_first_line_or_before_a_comment_parses_the_neighbour_there_too() -> None:
    # The leading lines of a statement belong to it or to the block before it depending on
    # both; a comment after a block may be the block's: the neighbour is parsed with the edit.
    commented = SCRIPT.replace("\n\ndef evaluate", "\n# evaluation\ndef evaluate")
    parser = IncrementalParser()
    before = parser.parse(commented)
    after = _check(parser, commented.replace("model(x)\n\n# evaluation", "model(x + 1)\n\n# evaluation"))
    assert parser.reparsed == 2
    assert [a is b for a, b in zip(before.body, after.body)] == [True, True, True, True, False, False, True]
    parser = IncrementalParser()
    before = parser.parse(SCRIPT)
    after = _check(parser, SCRIPT.replace("def train(", "async def train("))
    assert parser.reparsed == 2
    assert [a is b for a, b in zip(before.body, after.body)] == [True, True, True, False, False, True, True]


def test_the_same_text_returns_the_same_tree() -> None:
    parser = IncrementalParser()
    tree = parser.parse(SCRIPT)
    assert parser.parse(SCRIPT) is tree
    assert parser.reparsed == 0


@pytest.mark.parametrize(
    "edit",
    [
        ("import torch\n", "# leading comment\nimport torch\n"),  # the header
        ('"""A script."""\n', '"""A script, renamed."""\n'),  # the first statement
        ("        model(x)\n\n\ndef evaluate", "        model(x)\n        # indented comment after the block\n\n\ndef evaluate"),
        ("        model(x)\n\n\ndef evaluate", "        model(x)\n\n    # half-indented, after a blank line\n\ndef evaluate"),
        ("        model(x)\n\n\ndef evaluate", "        model(x)\n# a comment at column 0\ndef evaluate"),
        ("    train(Net().cuda(), [])\n", "    train(Net().cuda(), [])\n# trailing comment\n\n"),  # the footer
        ("def train(model, loader):\n    for", "def train(model, loader):\n  for"),  # another indentation in one block
        ("class Net(nn.Module):\n", "class Net(nn.Module):\n    pass\n\n\nclass Other(nn.Module):\n"),
        ("def evaluate(model, loader):\n    for x, y in loader:\n        model(x)\n", ""),  # a function removed
    ],
)
def test_edits_at_statement_boundaries_give_the_whole_parse(edit: tuple[str, str]) -> None:
    parser = IncrementalParser()
    parser.parse(SCRIPT)
    before, after = edit
    assert before in SCRIPT
    _check(parser, SCRIPT.replace(before, after, 1))


def test_changing_the_first_blocks_indentation_is_seen_by_every_block() -> None:
    parser = IncrementalParser()
    parser.parse(SCRIPT)
    two_spaces = re.sub(r"^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), SCRIPT, flags=re.MULTILINE)
    _check(parser, two_spaces)


def test_a_syntax_error_raises_as_a_whole_parse_does_and_the_next_text_still_splices() -> None:
    parser = IncrementalParser()
    parser.parse(SCRIPT)
    broken = SCRIPT.replace("def evaluate(model, loader):", "def evaluate(model, loader:")
    with pytest.raises(cst.ParserSyntaxError):
        parser.parse(broken)
    _check(parser, SCRIPT.replace("model(x)\n\n\ndef evaluate", "model(x * 2)\n\n\ndef evaluate"))
    assert parser.reparsed == 1


def test_text_libcst_does_not_give_back_is_never_spliced() -> None:
    # libcst drops a line holding only a backslash: offsets would be wrong after it.
    text = SCRIPT.replace("import torch.nn as nn\n", "import torch.nn as nn\n\\\nimport os\n")
    assert parse_module(text).code != text
    parser = IncrementalParser()
    parser.parse(text)
    parser.parse(text.replace("model(x)\n\n\ndef evaluate", "model(x * 2)\n\n\ndef evaluate"))
    assert parser.reparsed is None


def _random_edit(rng: random.Random, text: str) -> str:
    lines = text.splitlines(True)
    k = rng.randrange(len(lines))
    op = rng.random()
    if op < 0.4:
        names = [m.start() for m in re.finditer(r"[A-Za-z_]\w*", lines[k])]
        if names:
            at = rng.choice(names)
            lines[k] = lines[k][:at] + rng.choice(["q", "zz", ""]) + lines[k][at + 1 :]
    elif op < 0.55:
        indent = re.match(r"[ \t]*", lines[k]).group()  # type: ignore[union-attr]
        lines.insert(k, indent + rng.choice(["y = 1\n", "pass\n", "x.cuda()\n"]))
    elif op < 0.75:
        lines.insert(k, rng.choice(["", "  ", "    ", "        "]) + rng.choice(["# note\n", "\n"]))
    elif op < 0.85:
        del lines[k]
    else:
        lines.insert(k, rng.choice(["def h():\n    return 1\n", "class C:\n  a = 1\n\n", "if x:\n    y = 2\nelse:\n    y = 3\n"]))
    return "".join(lines)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_random_edits_of_the_fixtures_give_the_whole_parse(path: Path) -> None:
    rng = random.Random(path.name)
    text = path.read_text(encoding="utf-8")
    parser = IncrementalParser()
    parser.parse(text)
    spliced = 0
    for _ in range(35):
        candidate = _random_edit(rng, text)
        try:
            whole = parse_module(candidate)
        except cst.ParserSyntaxError:
            with pytest.raises(cst.ParserSyntaxError):
                parser.parse(candidate)
            continue
        if whole.code != candidate:
            continue  # libcst cannot round-trip it: nothing to compare against
        _check(parser, candidate)
        spliced += parser.reparsed is not None
        text = candidate
    assert spliced > 5


@pytest.mark.parametrize("path", FIXTURES[:6], ids=lambda p: p.name)
def test_the_worker_finds_after_each_edit_what_a_fresh_check_finds(path: Path) -> None:
    # The worker keeps each statement's positions and parents between versions
    # (devlint.statement_facts): findings, their positions and fixes must not differ.
    from devlint.config import Settings
    from devlint.engine import check_bytes
    from devlint.server.jobs import Job
    from devlint.server.worker import Worker

    rng = random.Random("worker" + path.name)
    text = path.read_text(encoding="utf-8")
    worker = Worker()
    reported = 0
    for _ in range(25):
        text = _random_edit(rng, text)
        got = worker.handle(Job("check", "doc", "f.py", text, Settings())).findings
        fresh = check_bytes(text.encode(), Path("f.py"), "f.py", Settings()).findings
        assert got == tuple(fresh)
        reported += len(fresh)
    assert reported > 0
