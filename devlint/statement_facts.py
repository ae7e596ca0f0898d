"""Facts about one top-level statement that depend on nothing but the statement itself,
and facts about any node below one that depend on nothing but the node and a stated context.

libcst nodes are immutable, so which nodes a statement holds, each one's
parent, and where code generation puts each node relative to the statement's
start are fixed once the statement exists. The language server's incremental
parser hands the next version of a document the very same node for every
statement an edit left alone (devlint.server.incremental): kept here, these
facts are computed once per statement instead of once per keystroke. A run of
`devlint check` starts each file with an empty table, so both pay the same
for a statement seen the first time.

The table holds each statement it describes, so every node below one stays
alive and the `id()`s recorded for it cannot be taken by another object.
`remember` keeps the node it describes for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import libcst as cst

from devlint.tree import descendants, parent_table

T = TypeVar("T")
_Remembered = tuple[cst.CSTNode, Hashable, object]  # the node, the context it was computed in, the fact


@dataclass
class _Generated:
    text: str
    spans: dict[cst.CSTNode, tuple[int, int]]  # offsets from the statement's first character


@dataclass
class _Facts:
    statement: cst.CSTNode  # held: keeps the ids below valid
    ids: frozenset[int]
    parents: dict[cst.CSTNode, cst.CSTNode] | None = None
    generated: dict[tuple[str, str], _Generated] = field(default_factory=dict)  # by (default indent, newline)


class GeneratingState(Protocol):
    """What `generated` needs of libcst's code-generation state (devlint.positions has one)."""

    default_indent: str
    default_newline: str
    tokens: list[str]
    spans: dict[cst.CSTNode, tuple[int, int]]


class StatementFacts:
    """Per-statement facts, by statement identity."""

    def __init__(self) -> None:
        self._facts: dict[int, _Facts] = {}
        # Two generations: what this version asked, and what the one before did. A fact no
        # version asks twice running is about a node the document no longer holds.
        self._remembered: dict[tuple[int, str], _Remembered] = {}
        self._before: dict[tuple[int, str], _Remembered] = {}

    def _of(self, statement: cst.CSTNode) -> _Facts:
        facts = self._facts.get(id(statement))
        if facts is None or facts.statement is not statement:
            facts = _Facts(statement, frozenset(id(node) for node in descendants(statement)))
            self._facts[id(statement)] = facts
        return facts

    def holds(self, statement: cst.CSTNode, node: cst.CSTNode) -> bool:
        """Whether `node` is `statement` or lies below it."""
        return id(node) in self._of(statement).ids

    def parents(self, statement: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
        """The parent of each code node below `statement` (whitespace and punctuation left out)."""
        facts = self._of(statement)
        if facts.parents is None:
            facts.parents = parent_table(statement)
        return facts.parents

    def generated(self, statement: cst.CSTNode, state: GeneratingState) -> tuple[str, dict[cst.CSTNode, tuple[int, int]]]:
        """The statement's code as libcst writes it in a module with the given defaults, and each
        node's span in it. `state` is a fresh code-generation state starting at offset 0."""
        facts = self._of(statement)
        key = (state.default_indent, state.default_newline)
        found = facts.generated.get(key)
        if found is None:
            statement._codegen(state)
            found = facts.generated[key] = _Generated("".join(state.tokens), state.spans)
        return found.text, found.spans

    def remember(self, node: cst.CSTNode, what: str, context: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, a fact called `what` about `node` that depends on nothing but the node and
        `context` (the file's imports, say): computed again only when one of the two changes.
        The fact must not be changed by whoever asks: the next version gets the same object."""
        key = (id(node), what)
        found = self._remembered.get(key) or self._before.get(key)
        if found is not None and found[0] is node and found[1] == context:
            self._remembered[key] = found
            return found[2]  # type: ignore[return-value]
        fact = compute()
        self._remembered[key] = (node, context, fact)
        return fact

    def keep_only(self, statements: Iterable[cst.CSTNode]) -> None:
        """Forget every statement but these (the current version's): the rest are gone from the document."""
        wanted = {id(statement) for statement in statements}
        for key in [key for key in self._facts if key not in wanted]:
            del self._facts[key]
        self._before, self._remembered = self._remembered, {}
