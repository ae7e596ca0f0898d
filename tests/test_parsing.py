"""devlint's parse skips libcst's node checks: trees must come out exactly as libcst's own."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import libcst as cst
import pytest

from libcst._nodes.base import CSTNode

from devlint.parsing import _CONSTRUCTORS, parse_module

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


def _comparable(value: object) -> object:
    """libcst nodes compare by identity: a node stands for its type and code."""
    if isinstance(value, cst.CSTNode):
        return type(value), cst.Module([]).code_for_node(value)
    if isinstance(value, (list, tuple)):
        return type(value), [_comparable(item) for item in value]
    return value


def _field_values(node: cst.CSTNode) -> dict[str, object]:
    return {field.name: _comparable(getattr(node, field.name)) for field in dataclasses.fields(node)}


@pytest.mark.parametrize("cls", list(_CONSTRUCTORS), ids=lambda cls: cls.__name__)
def test_trimmed_constructors_store_what_libcsts_store(cls: type[cst.CSTNode], monkeypatch: pytest.MonkeyPatch) -> None:
    own, trimmed = _CONSTRUCTORS[cls]
    assert own is cls.__init__  # libcst's own constructor is back outside a parse
    monkeypatch.setattr(CSTNode, "__post_init__", lambda self: None)  # placeholders are not valid fields
    fields = dataclasses.fields(cls)
    required = {f.name: object() for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    every = {f.name: object() for f in fields}
    for kwargs in (required, every):
        reference, ours = object.__new__(cls), object.__new__(cls)
        own(reference, **kwargs)
        trimmed(ours, **kwargs)
        assert _field_values(ours) == _field_values(reference)
        assert [name for name in inspect.signature(trimmed).parameters] == [name for name in inspect.signature(own).parameters]
    factories = [f.name for f in fields if f.default_factory is not dataclasses.MISSING]
    made = []
    for constructor in (own, own, trimmed, trimmed):
        node = object.__new__(cls)
        constructor(node, *required.values())
        made.append(node)
    for name in factories:  # a fresh default per node wherever libcst makes one
        fresh = getattr(made[0], name) is not getattr(made[1], name)
        assert (getattr(made[2], name) is not getattr(made[3], name)) == fresh


def test_every_node_class_the_parser_builds_has_a_trimmed_constructor() -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in SOURCES[:40])
    seen: set[type[cst.CSTNode]] = set()
    stack: list[cst.CSTNode] = [parse_module(text)]
    while stack:
        node = stack.pop()
        seen.add(type(node))
        stack.extend(node.children)
    assert seen - set(_CONSTRUCTORS) == set()
