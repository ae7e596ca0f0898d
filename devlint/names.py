"""Which names in a file are torch (and friends), from one pass over its imports.

libcst's QualifiedNameProvider resolves every name through full scope analysis:
measured at ~8x the parse time on real code. A linter for device bugs only
needs to know what a handful of imported roots (`torch`, `nn`, `np`, `F`,
`DataLoader`) refer to, and whether a function rebinds one of them locally.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`torch.cuda.is_available` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _import_target(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


class ImportTable(cst.CSTVisitor):
    """Maps each name bound by an import anywhere in a module to its qualified name.

    Imports inside functions are folded into the one table: a file that imports
    torch inside a function means torch there, and shadowing is checked per scope.
    """

    def __init__(self) -> None:
        super().__init__()
        self.bindings: dict[str, str] = {}

    @classmethod
    def of(cls, module: cst.Module) -> "ImportTable":
        table = cls()
        for stmt in _import_statements(module):
            stmt.visit(table)
        return table

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = _import_target(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bindings[alias.asname.name.value] = full
            else:
                root = full.split(".")[0]
                self.bindings[root] = root
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return False
        base = _import_target(node.module)
        for alias in node.names:
            name = _import_target(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bindings[local] = f"{base}.{name}"
        return False

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


class LocalBindings(cst.CSTVisitor):
    """Names a function binds itself (parameters, assignments, loop targets...).

    Nested functions, classes and lambdas are their own scopes and are not entered.
    """

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self._globals: set[str] = set()

    @classmethod
    def of(cls, func: cst.FunctionDef | cst.Lambda) -> frozenset[str]:
        visitor = cls()
        params = func.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            visitor.names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                visitor.names.add(star.name.value)
        if isinstance(func, cst.FunctionDef):
            func.body.visit(visitor)
        return frozenset(visitor.names - visitor._globals)

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_Global(self, node: cst.Global) -> None:
        self._globals.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._globals.update(item.name.value for item in node.names)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False
