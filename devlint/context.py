"""Everything a rule may ask about the file being checked."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from devlint.analysis.imported import FilePlace
from devlint.config import Settings
from devlint.finding import Finding, Fix, Position, Related
from devlint.names import BindingsCache, ImportTable
from devlint.positions import Positions
from devlint.statement_facts import StatementFacts

if TYPE_CHECKING:
    from devlint.analysis.summary import ModuleSummary
    from devlint.analysis.dataflow import DeviceAnalysis
    from devlint.analysis.guards import AcceleratorGuards


T = TypeVar("T")
NOWHERE_IN_PARTICULAR = FilePlace()


@dataclass
class _Pending:
    code: str
    node: cst.CSTNode
    message: str
    fix: Fix | None
    related: tuple[tuple[cst.CSTNode, str], ...]
    within: str | None = None  # dropped if every call of this function turns out guarded


class FileContext:
    """One file's parsed module, its import table and the shared device analysis.

    Positions are resolved only for files that have findings: they take a
    full code-generation pass, wasted on the clean majority.
    """

    def __init__(
        self,
        path: str,
        text: str,
        module: cst.Module,
        settings: Settings,
        python_tree: ast.Module | None = None,
        place: FilePlace = NOWHERE_IN_PARTICULAR,
        statement_facts: StatementFacts | None = None,
    ) -> None:
        self.path = path
        self.place = place
        self.imported = place.facts
        self.python_tree = python_tree  # CPython's tree of the same text, when the engine has it
        self.text = text
        self.module = module
        self.settings = settings
        self.statement_facts = statement_facts if statement_facts is not None else StatementFacts()
        self.names = ImportTable.of(module, place.module_name, place.is_package)
        self.local_bindings = BindingsCache(walrus=":=" in text, facts=self.statement_facts)
        # Functions being walked; their local names are computed only when a rule asks.
        self._scopes: list[cst.FunctionDef | cst.Lambda] = []
        self._pending: list[_Pending] = []
        self._shared: dict[Callable[..., Any], Any] = {}

    # -- names -------------------------------------------------------------
    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The imported name an expression refers to in the current scope (`torch.load`)."""
        if not self._scopes or not self.names.bindings:
            return self.names.qualify(node)
        return self.names.qualify(node, self.local_bindings(self._scopes[-1]))

    def enter_scope(self, func: cst.FunctionDef | cst.Lambda) -> None:
        self._scopes.append(func)

    def leave_scope(self) -> None:
        self._scopes.pop()

    # -- shared analyses ---------------------------------------------------
    def shared(self, build: "Callable[[FileContext], T]") -> T:
        """`build(self)`, made once per file on first use and shared by every rule that asks.

        Kept on the context, not in a module-level table, so that it goes with the
        file. A value with a `release()` method has it called when the file is done.
        """
        try:
            return self._shared[build]  # type: ignore[no-any-return]
        except KeyError:
            value = self._shared[build] = build(self)
            return value

    @cached_property
    def devices(self) -> "DeviceAnalysis":
        from devlint.analysis.dataflow import DeviceAnalysis

        return DeviceAnalysis(
            self.module, self.names, self.settings, self.local_bindings, self.imported, exports=self.place.summarise, facts=self.statement_facts
        )

    def summary(self) -> "ModuleSummary":
        """What this file tells the files that import it (after its device analysis)."""
        from devlint.analysis.checkpoints import literal_loads, loads_state, writes_cpu_state
        from devlint.analysis.class_facts import places_itself, wrapped_parameters
        from devlint.analysis.distributed_checks import asks_distributed
        from devlint.analysis.facts import PlaceFact
        from devlint.analysis.summary import CallSite, star_key, summarise

        analysis = self.devices.run()
        classes = [
            (info.name, tuple(info.bases), info.is_module, info.is_dataset, bool(info.stateless), wrapped_parameters(info), places_itself(info))
            for info in analysis.classes
            if info.key == info.name
        ]
        imports = {**self.names.bindings, **{star_key(i): module for i, module in enumerate(self.names.stars)}}
        checkpoints = (writes_cpu_state(self.module, self.names.qualify, self.text), loads_state(self.module, self.names.qualify, self.text))
        calls = tuple(
            CallSite(
                call.callee,
                tuple(PlaceFact.of(v) if v is not None else None for v in call.positional),
                tuple((k, PlaceFact.of(v) if v is not None else None) for k, v in call.keywords),
                self.line_of(call.node),
            )
            for call in analysis.calls_out
        )
        return summarise(
            self.path, classes, analysis.returns, analysis.variables, imports, self.python_tree, checkpoints, calls, analysis.asks_callers,
            asks_distributed(self.text), literal_loads(self.module, self.names.qualify, self.text),
        )

    @cached_property
    def gpu_only(self) -> bool:
        """The file cannot run without a GPU whatever it is told (Triton, NCCL scripts)."""
        from devlint.analysis.gpu_only import gpu_only_by_construction

        return gpu_only_by_construction(self.module, self.text, self.names, self.imported)

    @cached_property
    def requires_cuda(self) -> bool:
        """No line of the file runs without CUDA (a top-level Triton import, Lightning runners all
        built for CUDA): stronger than `gpu_only`, which a branch starting NCCL also makes."""
        from devlint.analysis.gpu_only import requires_cuda

        return self.gpu_only and requires_cuda(self.module, self.text, self.names)

    @cached_property
    def guards(self) -> "AcceleratorGuards":
        from devlint.analysis.guards import AcceleratorGuards

        return AcceleratorGuards(self)

    # -- reporting ---------------------------------------------------------
    def report(
        self,
        code: str,
        node: cst.CSTNode,
        message: str,
        fix: Fix | None = None,
        related: Sequence[tuple[cst.CSTNode, str]] = (),
        within: str | None = None,
    ) -> None:
        """`related`: the nodes the message names by line, each with what it says of them.
        `within`: the function the finding is in, when its callers' guards answer for it."""
        self._pending.append(_Pending(code, node, message, fix, tuple(related), within))

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        """Character offsets of a node in the file's text (for fixes)."""
        return self._positions.offsets(node)

    def code_range(self, node: cst.CSTNode) -> CodeRange:
        return self._positions.range(node)

    def line_of(self, node: cst.CSTNode) -> int:
        return self._positions.range(node).start.line

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The top-level statement holding `node` (None where that cannot be told cheaply)."""
        index = self._positions.statement_index(node)
        return None if index is None else self.module.body[index]

    @cached_property
    def _positions(self) -> Positions:
        return Positions(self.module, self.text, self.python_tree, self.statement_facts)

    def release(self) -> None:
        """Drops the tree and every analysis of it once the findings are out.

        Analyses point back at the context, so without this the whole tree would
        wait for the cyclic collector instead of going with reference counting.
        """
        for value in self._shared.values():
            release = getattr(value, "release", None)
            if release is not None:
                release()
        self.__dict__.clear()

    def findings(self) -> list[Finding]:
        out = []
        dead = self._never_called() if self._pending else ()
        for pending in self._pending:
            if pending.within is not None and self.guards.callers_guard(pending.within):
                continue
            rng = self._positions.range(pending.node)
            if any(first <= rng.start.line <= last for first, last in dead):
                continue  # in a local function nothing calls: it never runs
            out.append(
                Finding(
                    code=pending.code,
                    message=pending.message,
                    path=self.path,
                    start=Position(rng.start.line, rng.start.column + 1),
                    end=Position(rng.end.line, rng.end.column + 1),
                    fix=pending.fix,
                    related=tuple(self._related(node, what) for node, what in pending.related),
                )
            )
        return out

    def _never_called(self) -> tuple[tuple[int, int], ...]:
        from devlint.analysis.dead_code import never_called

        tree = self.python_tree
        if tree is None:
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError):
                return ()
        return never_called(tree)

    def _related(self, node: cst.CSTNode, what: str) -> Related:
        rng = self._positions.range(node)
        return Related(what, Position(rng.start.line, rng.start.column + 1), Position(rng.end.line, rng.end.column + 1))
