"""A fast walk over libcst trees.

`CSTNode.visit` rebuilds every node it passes through and `.children` does a
visit of its own: on real files the two cost more than parsing. Analysis
only needs to read the tree, so this walks the dataclass fields directly,
skipping whitespace, parentheses and commas, which hold no code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import libcst as cst

_SKIPPED = frozenset(
    {
        "whitespace",
        "lpar",
        "rpar",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "comma",
        "semicolon",
        "trailing_whitespace",
        "newline",
        "equal",
        "colon",
        "dot",
        "star_tok",
        "asynchronous",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}
# isinstance against libcst's abstract base class goes through ABCMeta: cache the answer per type.
_IS_NODE: dict[type, bool] = {}


def is_node(value: object) -> bool:
    kind = type(value)
    answer = _IS_NODE.get(kind)
    if answer is None:
        answer = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return answer


def fields_of(node_type: type) -> tuple[str, ...]:
    names = _FIELDS.get(node_type)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED and not f.name.startswith("whitespace") and f.name != "operator"
        )
        _FIELDS[node_type] = names
    return names


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Direct children that can hold code, in field order."""
    for name in fields_of(type(node)):
        value = getattr(node, name)
        if is_node(value):
            yield value  # type: ignore[misc]
        elif type(value) is tuple or type(value) is list:
            for item in value:  # type: ignore[attr-defined]
                if is_node(item):
                    yield item


def parent_table(root: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each code node's parent below `root` (whitespace and punctuation nodes are left out)."""
    parent: dict[cst.CSTNode, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in child_nodes(node):
            parent[child] = node
            stack.append(child)
    return parent


def descendants(node: cst.CSTNode, enter: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """Every node below (and including) `node`, depth first; `enter(n)` False prunes n's children."""
    # child_nodes inlined: rules and analyses walk subtrees often enough for a
    # nested generator per node to show in profiles.
    stack = [node]
    pop = stack.pop
    fields = _FIELDS
    is_node_type = _IS_NODE
    while stack:
        current = pop()
        yield current
        if enter is not None and current is not node and not enter(current):
            continue
        kind = type(current)
        names = fields.get(kind) or fields_of(kind)
        children: list[cst.CSTNode] = []
        for name in names:
            value = getattr(current, name)
            value_type = type(value)
            if value_type is tuple or value_type is list:
                for item in value:
                    if is_node_type.get(type(item)) or is_node(item):
                        children.append(item)
            elif is_node_type.get(value_type) or is_node(value):
                children.append(value)
        if children:
            children.reverse()
            stack.extend(children)


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def own_nodes(scope: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of a function's (or a module's) own code, not those inside the functions,
    classes and lambdas it defines (those nodes themselves are yielded: their names are its
    bindings)."""
    return descendants(scope, enter=_not_a_scope)


def _not_a_scope(node: cst.CSTNode) -> bool:
    return not isinstance(node, _SCOPES)


# Nodes that hold no other node: a walk has nothing to do in them unless a hook asks.
LEAF_TYPES = frozenset({cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis})


class Walker:
    """Calls `visit_<Type>`, `leave_<Type>` and `visit_<Type>_<field>` hooks of a dispatcher.

    Leaf types in `skipped` are not visited at all: the dispatcher passes those
    it has no hook for (names and literals are a third of all nodes).
    """

    def __init__(
        self,
        visit: Callable[[cst.CSTNode], bool],
        leave: Callable[[cst.CSTNode], None],
        field_hooks: frozenset[str],
        visit_field: Callable[[cst.CSTNode, str], None],
        leave_field: Callable[[cst.CSTNode, str], None],
        skipped: frozenset[type] = frozenset(),
    ) -> None:
        self._visit = visit
        self._leave = leave
        self._hooks = field_hooks
        self._visit_field = visit_field
        self._leave_field = leave_field
        self._skipped = skipped
        self._layouts: dict[type, tuple[tuple[str, bool], ...]] = {}

    def _layout(self, kind: type) -> tuple[tuple[str, bool], ...]:
        """The type's code-bearing fields, each with whether a field hook wants it."""
        layout = self._layouts.get(kind)
        if layout is None:
            layout = self._layouts[kind] = tuple((name, f"{kind.__name__}_{name}" in self._hooks) for name in fields_of(kind))
        return layout

    def walk(self, node: cst.CSTNode) -> None:
        if self._visit(node):
            skipped = self._skipped
            for name, hooked in self._layout(type(node)):
                value = getattr(node, name)
                if hooked:
                    self._visit_field(node, name)
                value_type = type(value)
                if value_type is tuple or value_type is list:
                    for item in value:  # type: ignore[attr-defined]
                        if type(item) not in skipped and is_node(item):
                            self.walk(item)
                elif value_type not in skipped and is_node(value):
                    self.walk(value)  # type: ignore[arg-type]
                if hooked:
                    self._leave_field(node, name)
        self._leave(node)
