"""Which names in a file are torch (and friends), from one pass over its imports.

libcst's QualifiedNameProvider resolves every name through full scope analysis:
measured at ~8x the parse time on real code. A linter for device bugs only
needs to know what a handful of imported roots (`torch`, `nn`, `np`, `F`,
`DataLoader`) refer to, and whether a function rebinds one of them locally.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

import libcst as cst

from devlint.project.layout import absolute_import
from devlint.statement_facts import StatementFacts


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`torch.cuda.is_available` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    # Exact type checks: isinstance against libcst's classes goes through ABCMeta, and this is hot.
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def ast_dotted_name(node: ast.expr) -> str | None:
    """`dotted_name` for CPython's tree (the summaries of files no rule parses read it)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def ast_qualified_name(node: ast.expr, bindings: dict[str, str]) -> str | None:
    """What a dotted name of CPython's tree names through a file's imports (local -> qualified):
    `dist.is_initialized` after `import torch.distributed as dist`. None: not imported."""
    dotted = ast_dotted_name(node)
    if dotted is None:
        return None
    root, _, rest = dotted.partition(".")
    target = bindings.get(root)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def is_none(node: cst.BaseExpression | None) -> bool:
    """The literal `None` (a default, an argument, a branch)."""
    return isinstance(node, cst.Name) and node.value == "None"


def _import_target(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


def imports_any(targets: Iterable[str], libraries: Iterable[str]) -> bool:
    """Do these import targets (`ImportTable.bindings.values()`) reach any of the libraries?"""
    wanted = tuple(libraries)
    return any(target == library or target.startswith(f"{library}.") for target in targets for library in wanted)


class ImportTable(cst.CSTVisitor):
    """Maps each name bound by an import anywhere in a module to its qualified name.

    Imports inside functions are folded into the one table: a file that imports
    torch inside a function means torch there, and shadowing is checked per scope.
    """

    def __init__(self, module_name: str | None = None, is_package: bool = False) -> None:
        super().__init__()
        self.bindings: dict[str, str] = {}
        self.stars: list[str] = []  # modules imported with `from m import *`, in source order
        self.module_name = module_name  # the file's own dotted name, for relative imports
        self.is_package = is_package
        self._fingerprint: tuple[object, ...] | None = None

    @classmethod
    def of(cls, module: cst.Module, module_name: str | None = None, is_package: bool = False) -> "ImportTable":
        table = cls(module_name, is_package)
        for stmt in _import_statements(module):
            stmt.visit(table)
        table.stars.reverse()  # met last to first
        return table

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = _import_target(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bindings[alias.asname.name.value] = full
            else:
                root = full.split(".")[0]
                self.bindings[root] = root
                if full != root:
                    # `import flair.nn` binds `flair` and loads `flair.nn`, whose names the file
                    # then reaches as `flair.nn.X`: kept under the dotted path, which no name spells.
                    self.bindings[full] = full
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        written = _import_target(node.module) if node.module is not None else ""
        # `from .base import X` names a module of the file's own package: known only when the
        # file's place in its project is (engine.py passes it); else it stays unbound.
        base = absolute_import(written, len(node.relative), self.module_name, self.is_package)
        if not base:
            return False
        if isinstance(node.names, cst.ImportStar):
            self.stars.append(base)
            return False
        for alias in node.names:
            name = _import_target(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bindings[local] = f"{base}.{name}"
        return False

    @property
    def fingerprint(self) -> tuple[object, ...]:
        """Equal for two tables that qualify every name alike (two versions of one file)."""
        if self._fingerprint is None:
            self._fingerprint = (self.module_name, self.is_package, tuple(sorted(self.bindings.items())))
        return self._fingerprint

    def qualify(self, node: cst.BaseExpression, shadowed: Iterable[str] = ()) -> str | None:
        """The qualified name of an imported Name/Attribute chain, or None.

        `th.cuda.is_available` -> `torch.cuda.is_available` after `import torch as th`.
        A name rebound in the enclosing function (`shadowed`) is not the import.
        """
        dotted = dotted_name(node)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        target = self.bindings.get(root)
        if target is None or root in shadowed:
            return None
        return f"{target}.{rest}" if rest else target


def _import_statements(module: cst.Module) -> Iterable[cst.CSTNode]:
    """Import statements at any depth, found without visiting expressions."""
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small
        elif isinstance(node, cst.BaseCompoundStatement):
            stack.extend(_child_statements(node))


def _child_statements(node: cst.BaseCompoundStatement) -> list[cst.CSTNode]:
    children: list[cst.CSTNode] = []
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock):
        children.extend(body.body)
    for attr in ("orelse", "finalbody"):
        extra = getattr(node, attr, None)
        if extra is not None and isinstance(getattr(extra, "body", None), cst.IndentedBlock):
            children.extend(extra.body.body)
    for handler in getattr(node, "handlers", ()):
        if isinstance(handler.body, cst.IndentedBlock):
            children.extend(handler.body.body)
    if isinstance(node, cst.If) and isinstance(node.orelse, cst.If):
        children.append(node.orelse)
    return children


def _bind_target(target: cst.BaseExpression, names: set[str]) -> None:
    if isinstance(target, cst.Name):
        names.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind_target(element.value, names)
    elif isinstance(target, cst.StarredElement):
        _bind_target(target.value, names)


_EXPRESSION_TYPES: dict[type, bool] = {}


def _is_expression(kind: type) -> bool:
    answer = _EXPRESSION_TYPES.get(kind)
    if answer is None:
        answer = _EXPRESSION_TYPES[kind] = issubclass(kind, cst.BaseExpression)
    return answer


class LocalBindings:
    """Names a function binds itself (parameters, assignments, loop targets...).

    Nested functions, classes and lambdas are their own scopes and are not entered.
    """

    @staticmethod
    def of(func: cst.FunctionDef | cst.Lambda, walrus: bool = True) -> frozenset[str]:
        """`walrus=False` promises the file has no `:=`: expressions then bind nothing
        and are not entered, which is most of a function's nodes."""
        from devlint.tree import descendants

        names: set[str] = set()
        declared_global: set[str] = set()
        params = func.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
        if not isinstance(func, cst.FunctionDef):
            return frozenset(names)
        scopes = {cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Import, cst.ImportFrom}
        # Exact type checks: isinstance against libcst's classes goes through ABCMeta.
        def enter(node: cst.CSTNode) -> bool:
            kind = type(node)
            return kind not in scopes and (walrus or not _is_expression(kind))

        for node in descendants(func.body, enter=enter):
            kind = type(node)
            if kind is cst.AssignTarget:
                _bind_target(node.target, names)
            elif kind is cst.AugAssign or kind is cst.AnnAssign and node.value is not None:
                _bind_target(node.target, names)
            elif kind is cst.For:
                _bind_target(node.target, names)
            elif kind is cst.WithItem and node.asname is not None:
                _bind_target(node.asname.name, names)
            elif kind is cst.NamedExpr:
                _bind_target(node.target, names)
            elif kind is cst.ExceptHandler and node.name is not None:
                _bind_target(node.name.name, names)
            elif kind is cst.FunctionDef or kind is cst.ClassDef:
                names.add(node.name.value)
            elif kind is cst.Global or kind is cst.Nonlocal:
                declared_global.update(item.name.value for item in node.names)
        return frozenset(names - declared_global)


class BindingsCache:
    """Each function's local bindings, computed once per file: the engine's walk and the
    device analysis both ask. Kept in the file's `StatementFacts`, so that no tree outlives
    its file in a worker and the language server computes them once per function version."""

    def __init__(self, walrus: bool = True, facts: StatementFacts | None = None) -> None:
        self._facts = facts if facts is not None else StatementFacts()
        self._walrus = walrus  # False: the file has no `:=`

    def __call__(self, func: cst.FunctionDef | cst.Lambda) -> frozenset[str]:
        return self._facts.remember(func, "bindings", self._walrus, lambda: LocalBindings.of(func, self._walrus))


def with_local_bases(module: cst.Module, cls: cst.ClassDef) -> Iterator[cst.ClassDef]:
    """`cls`, then the classes of the same module its bases name, and theirs, each once."""
    seen: set[str] = set()
    pending = [cls]
    while pending:
        current = pending.pop()
        if current.name.value in seen:
            continue
        seen.add(current.name.value)
        yield current
        names = {dotted_name(base.value) for base in current.bases}
        pending.extend(c for c in module.body if isinstance(c, cst.ClassDef) and c.name.value in names)
