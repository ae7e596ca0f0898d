"""What the semantic modules may ask of the run that evaluates them, and of the facts it shares.

The interpreter core (interpreter.py) walks statements and dispatches each
expression to the module that knows its meaning: expressions.py for Python's
own operators and containers, calls.py for calls into the file's own code,
torch_calls.py for torch. Those modules see the run and the solver through
these interfaces only, so none of them imports the core.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import libcst as cst

from devlint.analysis.environment import Env
from devlint.analysis.events import Operand
from devlint.analysis.facts import Origin, Place, Value
from devlint.analysis.imported import ImportedFacts
from devlint.analysis.naming import NameSettings
from devlint.analysis.program import ClassInfo, FunctionInfo, Program
from devlint.names import ImportTable

Arguments = list[tuple[cst.CSTNode, Value]]


class SharedFacts(Protocol):
    """The solver: facts the file's functions share across rounds, and what they observed."""

    module: cst.Module
    names: ImportTable
    program: Program
    settings: NameSettings
    recording: bool
    imported: ImportedFacts  # what the file sees of the project's other files

    def read(self, table: str, name: str, default: object) -> Any: ...

    def record(self, key: str, node: cst.CSTNode, event: object) -> None: ...

    def note_call(self, key: str, params: dict[str, Value]) -> None: ...

    def note_global_move(self, name: str, place: Place, node: cst.CSTNode, function: str) -> None: ...

    def note_default_place(self, place: Place) -> None: ...


class Evaluation(Protocol):
    """One function's run, as the semantic modules see it."""

    solver: SharedFacts
    func: FunctionInfo | None
    cls: ClassInfo | None
    env: Env
    key: str
    default_place: Place
    cpu_places: frozenset[Place]  # devices a branch test has shown to be the CPU

    @property
    def in_module_method(self) -> bool: ...

    @property
    def constructing(self) -> bool: ...

    def eval(self, expr: cst.BaseExpression | None) -> Value: ...

    def lookup(self, name: str) -> Value | None: ...

    def passed_device(self, name: str) -> Value | None: ...

    def bind(self, target: cst.BaseExpression, value: Value) -> None: ...

    def qualify(self, node: cst.BaseExpression) -> str | None: ...

    def origin(self, node: cst.CSTNode, what: str, factory: bool = False) -> Origin: ...

    def conflict(self, node: cst.CSTNode, cpu: Operand, device: Operand) -> None: ...

    def source(self, node: cst.CSTNode) -> str: ...

    def forked(self) -> AbstractContextManager[None]: ...

    def silent(self) -> AbstractContextManager[None]: ...

