"""What one file tells the files that import it: its classes, what its functions return, its
device variables. Plain data, free of syntax trees, so it can cross processes and be cached.

The analysis of a file produces its summary (`summarise`); the project index (project/index.py)
gathers them; a file that imports project names is analysed with `ImportedFacts`, the part
of the index its imports reach.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import asdict, dataclass, field

from devlint.analysis.distributed_checks import distributed_checks
from devlint.analysis.facts import Kind, PlaceFact, PlaceKind, Value
from devlint.analysis.nccl_start import Call, nccl_facts
from devlint.names import ast_dotted_name


@dataclass(frozen=True)
class FunctionFacts:
    params: tuple[str, ...]  # positional parameter names, to map a result that follows one
    returns: PlaceFact
    line: int


@dataclass(frozen=True)
class ClassFacts:
    bases: tuple[str, ...]  # as the file names them, imports resolved
    module: bool  # an nn.Module as far as its own file shows
    dataset: bool
    stateless: bool  # a Module owning no state
    line: int
    wraps: tuple[int, ...] = ()  # positions of constructor arguments it keeps as a model it calls
    places_itself: bool = False  # its constructor moves itself or its state (`self.model.cuda()`)


@dataclass(frozen=True)
class CallSite:
    """A call of another file's name that passes tensors: what it passes where, as the caller knows."""

    callee: str  # qualified by the caller's imports
    positional: tuple[PlaceFact | None, ...]  # None: not known to be a tensor
    keywords: tuple[tuple[str, PlaceFact | None], ...]
    line: int

    @classmethod
    def from_json(cls, data: dict) -> "CallSite":
        return cls(
            data["callee"],
            tuple(_fact_or_none(f) for f in data["positional"]),
            tuple((k, _fact_or_none(f)) for k, f in data["keywords"]),
            data["line"],
        )


def _fact_or_none(data: dict | None) -> PlaceFact | None:
    return PlaceFact(**data) if data is not None else None


@dataclass(frozen=True)
class ModuleSummary:
    path: str  # as reported, for messages: "`make_mask` (utils.py:12)"
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    variables: dict[str, PlaceFact] = field(default_factory=dict)  # module-level devices, tensor types
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified: re-exports (star_key: `from m import *`)
    # Functions that start an NCCL process group, with the backend parameter a caller may pass
    # instead ("", -1: none), and the other functions' unconditional calls of imported names.
    nccl_starts: dict[str, tuple[str, int]] = field(default_factory=dict)
    nccl_calls: dict[str, tuple[Call, ...]] = field(default_factory=dict)
    # Some `torch.save` writes module state copied to the CPU (analysis/checkpoints.py); the file
    # restores module state from a load without `map_location`.
    writes_cpu_state: bool = False
    loads_state: bool = False
    # Calls of imported names that pass tensors, and the file's functions whose findings depend
    # on what their callers pass (a tensor of the caller's choosing meets a CPU one there).
    calls_out: tuple[CallSite, ...] = ()
    asks_callers: tuple[str, ...] = ()
    # Functions answering "is this a multi-process job" with torch.distributed's answer only.
    distributed_checks: dict[str, str] = field(default_factory=dict)
    # The literal paths its loads without `map_location` read (the project index looks at the files).
    literal_loads: tuple[str, ...] = ()

    def digest(self) -> str:
        return hashlib.blake2b(json.dumps(asdict(self), sort_keys=True).encode(), digest_size=16).hexdigest()

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "ModuleSummary":
        return cls(
            data["path"],
            {name: ClassFacts(tuple(c["bases"]), c["module"], c["dataset"], c["stateless"], c["line"], tuple(c.get("wraps", ())), c.get("places_itself", False)) for name, c in data["classes"].items()},
            {name: FunctionFacts(tuple(f["params"]), PlaceFact(**f["returns"]), f["line"]) for name, f in data["functions"].items()},
            {name: PlaceFact(**v) for name, v in data["variables"].items()},
            dict(data["imports"]),
            {name: (p[0], p[1]) for name, p in data.get("nccl_starts", {}).items()},
            {
                name: tuple(Call(c["name"], c["positional"], tuple(c["keywords"]), c["starred"]) for c in calls)
                for name, calls in data.get("nccl_calls", {}).items()
            },
            data.get("writes_cpu_state", False),
            data.get("loads_state", False),
            tuple(CallSite.from_json(c) for c in data.get("calls_out", ())),
            tuple(data.get("asks_callers", ())),
            dict(data.get("distributed_checks", {})),
            tuple(data.get("literal_loads", ())),
        )


def star_key(position: int) -> str:
    """The key of the `position`-th `from m import *` among a summary's imports: no identifier."""
    return f"*{position}"


def star_sources(imports: dict[str, str]) -> list[str]:
    """The modules a file star-imports, in source order."""
    return [module for key, module in imports.items() if key.startswith("*")]


def summarise(
    path: str,
    classes: list[tuple[str, tuple[str, ...], bool, bool, bool, tuple[int, ...], bool]],
    returns: dict[str, tuple[tuple[str, ...], Value]],
    variables: dict[str, Value],
    imports: dict[str, str],
    tree: ast.Module | None,
    checkpoints: tuple[bool, bool] = (False, False),
    calls_out: tuple[CallSite, ...] = (),
    asks_callers: tuple[str, ...] = (),
    asks_distributed: bool = False,
    literal_loads: tuple[str, ...] = (),
) -> ModuleSummary:
    """The summary of a file the device analysis has run on; `classes` are (name, bases, module,
    dataset, stateless, wrapped constructor arguments, places itself), the first class of each name."""
    lines = _definition_lines(tree)
    starts, calls = nccl_facts(tree, imports)
    return ModuleSummary(
        path,
        {
            name: ClassFacts(bases, module, dataset, stateless, lines.get(name, 0), wraps, placed)
            for name, bases, module, dataset, stateless, wraps, placed in classes
        },
        {
            name: FunctionFacts(params, PlaceFact.of(value), lines.get(name, 0))
            for name, (params, value) in returns.items()
            if _worth_telling(value)
        },
        {name: PlaceFact.of(value) for name, value in variables.items() if value.kind in (Kind.DEVICE, Kind.TENSOR_TYPE) and value.place.known},
        dict(imports),
        starts,
        calls,
        *checkpoints,
        calls_out,
        asks_callers,
        distributed_checks(tree, imports) if asks_distributed else {},
        literal_loads,
    )


def _worth_telling(value: Value) -> bool:
    """A result another file can use: a known place, one that follows a parameter, or a module."""
    return value.place.known or value.place.kind is PlaceKind.FOLLOWS or value.kind is Kind.MODULE


def _definition_lines(tree: ast.Module | None) -> dict[str, int]:
    if tree is None:
        return {}
    return {node.name: node.lineno for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}


def summarise_imports(path: str, tree: ast.Module, module_name: str | None, is_package: bool) -> ModuleSummary:
    """The summary of a file the rules have nothing to look at (it names no torch): only what it
    imports and re-exports (a package's `__init__.py`) and its classes' bases, which may chain to
    an nn.Module in another file. Read from CPython's tree: no libcst parse for such files."""
    from devlint.project.layout import absolute_import

    bindings: dict[str, str] = {}
    stars: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings[alias.asname] = alias.name
                else:
                    bindings[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = absolute_import(node.module or "", node.level, module_name, is_package)
            if base:
                for alias in node.names:
                    if alias.name != "*":
                        bindings[alias.asname or alias.name] = f"{base}.{alias.name}"
                    else:
                        stars.append((node.lineno, node.col_offset, base))
    for position, (_, _, base) in enumerate(sorted(stars)):
        bindings[star_key(position)] = base
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name not in classes:
            bases = tuple(_qualified_base(base, bindings) for base in node.bases)
            classes[node.name] = ClassFacts(bases, False, False, False, node.lineno)
    starts, calls = nccl_facts(tree, bindings)
    asks = any(module == "torch" or module.startswith("torch.distributed") for module in bindings.values())
    return ModuleSummary(path, classes, {}, {}, bindings, starts, calls, distributed_checks=distributed_checks(tree, bindings) if asks else {})


def _qualified_base(node: ast.expr, bindings: dict[str, str]) -> str:
    root, dot, rest = (ast_dotted_name(node) or "").partition(".")
    return f"{bindings.get(root, root)}{dot}{rest}" if root else ""
