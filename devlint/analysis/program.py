"""The shape of a file: its classes and functions, found once, for the device analysis."""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from devlint.analysis.facts import Value
from devlint.analysis.imported import NO_FACTS, ImportedFacts
from devlint.analysis.torchapi import MODULE_ONLY_MEMBERS, PARAMETER_CLASSES, is_torch_module_class
from devlint.analysis.torchapi.frameworks import DATASET_BASES, MODULE_BASES
from devlint.names import ImportTable, LocalBindings, dotted_name
from devlint.statement_facts import StatementFacts
from devlint.tree import descendants



@dataclass
class ClassInfo:
    name: str
    node: cst.ClassDef
    bases: list[str]
    key: str = ""  # unique in the file: test files often define several classes of one name
    methods: dict[str, "FunctionInfo"] = field(default_factory=dict)
    is_module: bool = False
    is_dataset: bool = False
    is_lightning: bool = False
    # Has a forward() and derives from a class defined elsewhere (`BaseFairseqModel`):
    # it may be an nn.Module that moves its submodules, or may not.
    maybe_module: bool = False
    # Some base, or a base of a base of this file, is defined elsewhere and not known (a
    # `PreTrainedModel` the run cannot resolve): what it is decides what this class is.
    foreign: bool = False
    stateless: bool | None = None  # a Module owning no parameters, buffers or stateful layers; found on first ask
    buffers: frozenset[str] | None = None  # names given to `register_buffer`, found on first ask
    building_methods: frozenset[str] | None = None  # `__init__` and what only it calls, found on first ask
    module_evidence: bool | None = None  # uses members only an nn.Module has; found on first ask
    registered: Mapping[str, bool] | None = None  # attributes registered as state in any method; found on first ask
    wrapped: tuple[int, ...] | None = None  # positions of `__init__` parameters kept as called attributes; found on first ask
    placed: bool | None = None  # `__init__` moves the module or its state itself; found on first ask
    init_fields: "dict[str, Value] | None" = None  # a dataclass's tensor fields, as its `__init__` gets them; found on first ask
    names: ImportTable | None = None
    facts: StatementFacts | None = None  # the document's, for facts about the class's own code


@dataclass
class FunctionInfo:
    key: str  # "train", "Net.forward", "match.<locals>.inner"
    node: cst.FunctionDef
    cls: ClassInfo | None
    parent: "FunctionInfo | None"
    params: list[cst.Param]
    shadowed: frozenset[str]
    is_static: bool = False
    # Parameters its code shows to be tensors, and per `if` that leaves the function those shown only
    # after it; found on first ask.
    tensor_params: "tuple[frozenset[str], Mapping[cst.If, frozenset[str]], frozenset[str]] | None" = None
    star_params: tuple[str | None, str | None] = (None, None)  # the names of `*args` and `**kwargs`

    @property
    def name(self) -> str:
        return self.node.name.value

    def decorated(self, name: str) -> bool:
        """`@staticmethod`, `@classmethod`: by the decorator's dotted name."""
        return decorated_with(self.node, name)

    @property
    def self_param(self) -> str | None:
        if self.cls is None or self.is_static or not self.params:
            return None
        return self.params[0].name.value


@dataclass
class Program:
    classes: dict[str, ClassInfo]
    functions: list[FunctionInfo]  # definition order, parents before children
    top_level: dict[str, FunctionInfo]  # module-level functions by name
    by_key: dict[str, ClassInfo] = field(default_factory=dict)  # every class, under its unique key
    own_members: frozenset[str] | None = None  # names the file's classes define; found on first ask
    tensor_hooks: "frozenset[tuple[str, str]] | None" = None  # (class key or "", name) of `register_hook` targets
    facts: StatementFacts = field(default_factory=StatementFacts)  # what earlier versions of the document found

    @classmethod
    def of(
        cls,
        module: cst.Module,
        names: ImportTable,
        bindings: Callable[[cst.FunctionDef], frozenset[str]] = LocalBindings.of,
        imported: ImportedFacts = NO_FACTS,
        facts: StatementFacts | None = None,
    ) -> "Program":
        program = cls({}, [], {}, facts=facts if facts is not None else StatementFacts())
        program._bindings = bindings
        program._collect(module.body, None, None, names)
        program._resolve_module_classes(imported)
        return program

    def unlink(self) -> None:
        """Breaks the class <-> method links once the analysis is done.

        They make cycles that hold the functions' trees: without this, each
        file's tree would wait for a collector pass over all of it instead of
        going with reference counting.
        """
        for info in self.by_key.values():
            info.methods = {}
        for function in self.functions:
            function.cls = function.parent = None

    def _collect(
        self,
        body: "list[cst.CSTNode] | tuple[cst.CSTNode, ...]",
        cls_info: ClassInfo | None,
        parent: FunctionInfo | None,
        names: ImportTable,
    ) -> None:
        for stmt in body:
            if isinstance(stmt, cst.ClassDef):
                info = ClassInfo(stmt.name.value, stmt, [dotted_name(arg.value) or "" for arg in stmt.bases])
                info.bases = [names.qualify(arg.value) or (dotted_name(arg.value) or "") for arg in stmt.bases]
                info.names = names
                info.facts = self.facts
                info.key = info.name if info.name not in self.by_key else f"{info.name}@{len(self.by_key)}"
                self.by_key[info.key] = info
                self.classes.setdefault(info.name, info)
                self._collect(_block(stmt.body), info, parent, names)
            elif isinstance(stmt, cst.FunctionDef):
                params = [*stmt.params.posonly_params, *stmt.params.params, *stmt.params.kwonly_params]
                key_parts = [cls_info.name] if cls_info is not None and parent is None else []
                prefix = f"{parent.key}.<locals>." if parent is not None else ""
                key = prefix + ".".join([*key_parts, stmt.name.value])
                is_static = decorated_with(stmt, "staticmethod")
                info = FunctionInfo(key, stmt, cls_info if parent is None else None, parent, params, self._bindings(stmt), is_static)
                info.star_params = (_param_name(stmt.params.star_arg), _param_name(stmt.params.star_kwarg))
                self.functions.append(info)
                if cls_info is not None and parent is None:
                    cls_info.methods.setdefault(stmt.name.value, info)
                elif parent is None:
                    self.top_level.setdefault(stmt.name.value, info)
                self._collect(_block(stmt.body), None, info, names)
            elif isinstance(stmt, (cst.If, cst.Try, cst.With, cst.For, cst.While)) and parent is None:
                # Definitions under `if TYPE_CHECKING:` or `try:` at module or class level.
                for inner in _compound_children(stmt):
                    self._collect(inner, cls_info, parent, names)

    def _resolve_module_classes(self, imported: ImportedFacts) -> None:
        changed = True
        while changed:
            changed = False
            for info in self.by_key.values():
                # A base from another file of the project is what that file says it is.
                module = any(base in MODULE_BASES or is_torch_module_class(base) or imported.is_module(base) for base in info.bases) or any(
                    base in self.classes and self.classes[base].is_module for base in info.bases
                )
                lightning = any("LightningModule" in base for base in info.bases) or any(
                    base in self.classes and self.classes[base].is_lightning for base in info.bases
                )
                dataset = (
                    any(base in DATASET_BASES or imported.is_dataset(base) for base in info.bases)
                    or info.name.endswith("Dataset")
                    or any(base in self.classes and self.classes[base].is_dataset for base in info.bases)
                )
                positional = [base for base, arg in zip(info.bases, info.node.bases) if arg.keyword is None]
                foreign = any(base not in self.classes and base not in imported.classes and not plain_base(base) for base in positional) or any(
                    base in self.classes and (self.classes[base].maybe_module or self.classes[base].foreign) for base in positional
                )
                if not module and foreign and uses_module_members(info):
                    # `self.register_buffer(...)`, `self.parameters()`, `self.w = nn.Parameter(...)`: only
                    # an nn.Module has these, whatever its base in another file is called.
                    module = True
                maybe = not module and not dataset and "forward" in info.methods and foreign
                if (module, lightning, dataset, maybe, foreign) != (info.is_module, info.is_lightning, info.is_dataset, info.maybe_module, info.foreign):
                    info.is_module, info.is_lightning, info.is_dataset, info.maybe_module = module, lightning, dataset, maybe
                    info.foreign = foreign
                    changed = True


def decorated_with(node: cst.FunctionDef, name: str) -> bool:
    return any(dotted_name(d.decorator) == name for d in node.decorators)


def uses_module_members(info: ClassInfo) -> bool:
    if info.module_evidence is None:
        info.module_evidence = shows_module_members(info.node, info.names)
    return info.module_evidence


def shows_module_members(node: cst.ClassDef, names: ImportTable | None) -> bool:
    """The class's methods use, on `self`, members only an nn.Module has (`self.register_buffer`,
    `self.parameters()`), or give `self` a Parameter."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    methods = [stmt for stmt in body if isinstance(stmt, cst.FunctionDef)]
    defined = {method.name.value for method in methods}
    for method in methods:
        params = [*method.params.posonly_params, *method.params.params]
        if not params or decorated_with(method, "staticmethod"):
            continue
        own = params[0].name.value
        for inner in descendants(method.body):
            if type(inner) is cst.Attribute and type(inner.value) is cst.Name and inner.value.value == own:  # type: ignore[attr-defined]
                if inner.attr.value in MODULE_ONLY_MEMBERS and inner.attr.value not in defined:  # type: ignore[attr-defined]
                    return True
            elif type(inner) is cst.Assign and type(inner.value) is cst.Call and names is not None:  # type: ignore[attr-defined]
                if names.qualify(inner.value.func) in PARAMETER_CLASSES and any(  # type: ignore[attr-defined]
                    type(t.target) is cst.Attribute and dotted_name(t.target.value) == own for t in inner.targets  # type: ignore[attr-defined]
                ):
                    return True
    return False


def _param_name(param: object) -> str | None:
    return param.name.value if isinstance(param, cst.Param) else None


def plain_base(base: str) -> bool:
    """A base that is no nn.Module: the standard library's, a builtin, torch's own non-modules,
    or a base written as an expression (`Generic[T]`, recorded as "")."""
    root = base.split(".", 1)[0]
    return not base or root in sys.stdlib_module_names or root == "torch" or base in _BUILTIN_NAMES


_BUILTIN_NAMES = frozenset(dir(builtins))


def _block(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else []


def _compound_children(stmt: cst.CSTNode) -> list[list[cst.CSTNode]]:
    out = [_block(stmt.body)]  # type: ignore[attr-defined]
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        if isinstance(orelse, cst.If):
            out.append(_block(orelse.body))
            orelse = orelse.orelse
        else:
            out.append(_block(orelse.body))
            orelse = None
    for handler in getattr(stmt, "handlers", ()):
        out.append(_block(handler.body))
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        out.append(_block(final.body))
    return out
