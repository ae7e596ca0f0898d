"""devlint's parse skips libcst's node checks: trees must come out exactly as libcst's own."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from devlint.parsing import parse_module

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted((REPO / "fixtures").glob("*.py")) + sorted((REPO / "devlint").rglob("*.py"))
PUBLIC = REPO.parent / "shared" / "eval" / "public"
if PUBLIC.is_dir():
    SOURCES += sorted(PUBLIC.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_trees_are_identical_to_libcsts(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    ours = parse_module(text)
    reference = cst.parse_module(text)
    assert ours.deep_equals(reference)
    assert ours.code == text


def test_node_checks_are_back_after_a_parse_and_after_a_failed_one() -> None:
    parse_module("x = 1\n")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("x = (\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")
