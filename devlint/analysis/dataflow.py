"""Where every tensor lives: an abstract interpretation of each function, in statement order.

Each expression gets a `Value` (see facts.py): a kind (tensor, module, loader,
device...) and a place (CPU, an accelerator, "the device" chosen at run time,
or unknown). Facts flow through assignments, unpacking, loops, comprehensions,
torch operations and calls; branches join to what both paths agree on, so an
unknown never turns into a finding. Calls between functions of the same file
are followed context-insensitively over a few rounds: return values become
summaries, argument values at call sites become parameter facts, `self.x` set
in `__init__` is seen by the other methods, and module globals are seen by
every function. The analysis only records what it observes (events.py);
rules decide what is a finding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.events import Conflict, CpuArgumentOnDevice, DiscardedMove, NumpyOnDevice, OutgoingCall, SplitReturn
from devlint.analysis.class_facts import owns_no_state, places_itself, wrapped_parameters
from devlint.analysis.correlated import attribute_assignments, class_switches, repeated_switch, switch
from devlint.analysis.facts import CPU, Kind, Origin, Place, PlaceKind, Value, conflicting
from devlint.analysis.environment import Env
from devlint.analysis.interpreter import FunctionRun, function_body
from devlint.analysis.imported import NO_FACTS, Caller, ImportedFacts
from devlint.analysis.program import ClassInfo, FunctionInfo, Program
from devlint.analysis.naming import NameSettings
from devlint.names import BindingsCache, ImportTable
from devlint.statement_facts import StatementFacts
from devlint.tree import parent_table

_ROUNDS = 3  # at most _ROUNDS + 1 rounds; most files settle after two


class DeviceAnalysis:
    """Runs once per file, on first use, and keeps what it observed."""

    def __init__(
        self,
        module: cst.Module,
        names: ImportTable,
        settings: NameSettings,
        bindings: BindingsCache | None = None,
        imported: ImportedFacts = NO_FACTS,
        exports: bool = False,
        facts: StatementFacts | None = None,
    ) -> None:
        self.module = module
        self.exports = exports  # the file's summary is wanted: `returns` must hold for any caller
        self.names = names
        self.settings = settings
        self.bindings = bindings or BindingsCache()
        self.facts = facts if facts is not None else StatementFacts()  # what earlier versions of the document found
        self.imported = imported
        self._done = False
        self.conflicts: list[Conflict] = []
        self.discarded: list[DiscardedMove] = []
        self.numpy: list[NumpyOnDevice] = []
        self.split_returns: list[SplitReturn] = []
        self.cpu_arguments: list[CpuArgumentOnDevice] = []
        self.calls_out: list[OutgoingCall] = []  # calls of imported names that pass tensors
        self.asks_callers: tuple[str, ...] = ()
        # What the file tells its importers (summary.py).
        self.classes: list[ClassInfo] = []
        self.returns: dict[str, tuple[tuple[str, ...], Value]] = {}
        self.variables: dict[str, Value] = {}

    def run(self) -> "DeviceAnalysis":
        if not self._done:
            self._done = True
            Solver(self).solve()
        return self


_MISSING = object()
_ELSEWHERE = -2  # the turn of the calls other files make
_Op = tuple[Callable[..., None], tuple[object, ...]]


@dataclass
class _Memo:
    """One function's last run: the facts it read, and what it did with them."""

    reads: dict[tuple[str, str], object]
    ops: list[_Op]
    env: dict[str, Value] | None = None  # module top level only: its final variables


class Solver:
    """Rounds over the file's functions until the facts they share settle.

    A function whose inputs (every fact it read from the previous round) come
    out the same is not run again: what it noted is replayed in its place.
    Most functions settle in the first round, so later rounds cost only
    what still changes.
    """

    def __init__(self, analysis: DeviceAnalysis) -> None:
        self.analysis = analysis
        self.module = analysis.module
        self.names = analysis.names
        self.settings = analysis.settings
        self.program = Program.of(analysis.module, analysis.names, analysis.bindings, analysis.imported, analysis.facts)
        self.imported = analysis.imported
        self.recording = False
        self.default_place: Place = CPU
        # Facts from the previous round.
        self.globals: dict[str, Value] = {}
        self.summaries: dict[str, Value] = {}
        self.param_facts: dict[str, dict[str, Value]] = {}
        self.self_attrs: dict[str, dict[str, Value]] = {}
        self.final_envs: dict[str, dict[str, Value]] = {}
        self.dataset_attrs: dict[str, Value] = {}
        self.moves: dict[str, tuple[Place, Origin]] = {}  # globals moved in place inside functions
        self._next_moves: dict[str, tuple[Place, Origin]] = {}
        # Facts being gathered in this round.
        self._next_summaries: dict[str, Value] = {}
        self._next_params: dict[str, dict[str, Value]] = {}
        self._next_attrs: dict[str, dict[str, Value]] = {}
        self._next_envs: dict[str, dict[str, Value]] = {}
        self._events: dict[tuple[str, int], object] = {}
        # What the run under way reads and does, and each function's last run.
        self._reads: dict[tuple[str, str], object] = {}
        self._ops: list[_Op] = []
        self._memos: dict[int, _Memo] = {}  # by position in the run order (-1: the top level); keys repeat
        self._switches: dict[int, str | None] = {}  # by body: the switch it tests twice, if any
        self._held: dict[str, frozenset[str]] = {}  # by class: the switches its `__init__` fixes
        self._attribute_counts: Counter[str] | None = None
        self._parents: dict[cst.CSTNode, cst.CSTNode] | None = None  # found on first ask
        self._fresh: dict[str, dict[str, Any]] = {}
        self._inits_done = False
        # Who called each function in the last round, and who has had its turn in this one: once
        # every caller has, the parameter facts of this round are complete and need not wait a round.
        self._callers: dict[str, frozenset[int]] = {}
        self._calling: dict[str, set[int]] = {}
        self._position = -1
        self._turns_done: set[int] = set()
        # Keys written by exactly one run per round: `def f` twice in one file
        # (under `if`/`else`) joins two summaries, and half a join is not a fact.
        writers = Counter(f.key for f in self.program.functions)
        writers.update(f.cls.key for f in self.program.functions if f.name == "__init__" and f.cls is not None)
        self._single_writer = frozenset(key for key, count in writers.items() if count == 1)

    def solve(self) -> None:
        # Each round sees the facts of the previous one; once a round's facts come
        # out as they went in, its observations are final.
        self.recording = True
        ordered = sorted(self.program.functions, key=lambda f: (f.name != "__init__",))  # __init__ first: the other methods see what it stores on self
        for _ in range(_ROUNDS + 1):
            self._events = {}
            self._next_summaries, self._next_params, self._next_attrs, self._next_envs = {}, {}, {}, {}
            self._next_moves = {}
            self._fresh = {"summaries": self._next_summaries, "final_envs": self._next_envs, "self_attrs": self._next_attrs}
            self._inits_done = False
            self._calling, self._turns_done, self._position = {}, set(), -1
            self._calls_from_elsewhere()
            next_globals = Env(self._top_level())
            self._turns_done.add(-1)
            self._apply_function_moves(next_globals)
            # The functions of this round already see what the top level just did.
            previous_globals, self.globals = self.globals, next_globals
            for position, func in enumerate(ordered):
                self._inits_done = func.name != "__init__"
                self._position = position
                if not self._replayed(position):
                    self._begin()
                    body = function_body(func.node)
                    for assumed in self._assumptions(func.node, body, func.cls if func.parent is None else None):
                        run = FunctionRun(self, func, assumed)
                        run.start()
                        run.exec_block(body)
                        run.finish()
                    self._end(position)
                self._turns_done.add(position)
            settled = (
                next_globals == previous_globals
                and self._next_moves == self.moves
                and self._next_summaries == self.summaries
                and self._next_params == self.param_facts
                and self._next_attrs == self.self_attrs
                and self._read_final_parameters()
            )
            self._callers = {key: frozenset(positions) for key, positions in self._calling.items()}
            self.dataset_attrs = self._dataset_attributes()
            self.summaries = self._next_summaries
            self.param_facts = self._next_params
            self.self_attrs = self._next_attrs
            self.final_envs = self._next_envs
            self.moves = self._next_moves
            if settled:
                break
        self._memos = {}  # they hold this solver's methods: a cycle that would keep the tree alive
        self._callers = {}  # what follows runs outside the rounds
        self.analysis.classes = list(self.program.by_key.values())
        self.analysis.returns = {
            name: (tuple(p.name.value for p in func.params), self._exported_return(func))
            for name, func in self.program.top_level.items()
        } if self.analysis.exports else {}
        self.analysis.variables = dict(self.globals)
        for info in self.program.by_key.values():
            if info.is_module:
                # For the file's summary: read from the methods, unlinked next (a class the run
                # never built would otherwise tell other files nothing of its state).
                wrapped_parameters(info)
                owns_no_state(info, self.names.qualify)
                places_itself(info)
        self.program.unlink()
        events = self._events.values()
        self.analysis.conflicts = [e for e in events if isinstance(e, Conflict)]
        self.analysis.discarded = [e for e in events if isinstance(e, DiscardedMove)]
        self.analysis.numpy = [e for e in events if isinstance(e, NumpyOnDevice)]
        self.analysis.split_returns = [e for e in events if isinstance(e, SplitReturn)]
        self.analysis.cpu_arguments = [e for e in events if isinstance(e, CpuArgumentOnDevice)]
        self.analysis.calls_out = [e for e in events if isinstance(e, OutgoingCall)]
        self.analysis.asks_callers = self._asks_callers()

    def _calls_from_elsewhere(self) -> None:
        """The calls other files of the project make of this file's functions, as callers of the
        file's own are counted: before any function's turn, so every round's facts include them."""
        self._position = _ELSEWHERE
        for name, calls in sorted(self.imported.callers.items()):
            func = self.program.top_level.get(name)
            if func is None:
                continue
            for call in calls:
                self._call(func.key, _passed_from_elsewhere(func, call))
        self._turns_done.add(_ELSEWHERE)
        self._position = -1

    def _asks_callers(self) -> tuple[str, ...]:
        """The file's top-level functions where a tensor of the caller's choosing meets a CPU one:
        what the project's other files pass there decides it (project/index.py)."""
        found = set()
        for conflict in self.analysis.conflicts:
            if conflict.function in self.program.top_level and PlaceKind.FOLLOWS in (conflict.cpu.value.place.kind, conflict.device.value.place.kind):
                found.add(conflict.function)
        for (key, _), event in self._events.items():
            # numpy handed a parameter's tensor (pytorch-pose's `flip_back(flip_output.cpu())`)
            if isinstance(event, NumpyOnDevice) and key in self.program.top_level and event.tensor.value.place.kind is PlaceKind.FOLLOWS:
                found.add(key)
        return tuple(sorted(found))

    def _exported_return(self, func: FunctionInfo) -> Value:
        """What `func` returns to a caller in another file. Its summary joins what the calls of its
        own file pass (a Dataset handing it CPU tensors); another file's call passes its own
        arguments, so a function called here is run once more as the callers left it: its
        parameters on the devices a caller chooses. The helpers it calls were summarised for
        this file's calls too: a place one of them gave it is not known for another caller."""
        summary = self.summaries.get(func.key, F.UNKNOWN)
        if "<calls>" not in self.param_facts.get(func.key, {}) or not returns_a_value(func.node):
            return summary
        saved = (self.recording, self.default_place, self.param_facts, self._fresh, self._next_summaries, self._next_params,
                 self._next_attrs, self._next_envs, self._next_moves, self._events)
        self.recording = False
        self.param_facts = {key: facts for key, facts in self.param_facts.items() if key != func.key}
        self._fresh, self._next_summaries, self._next_params, self._next_attrs, self._next_envs = {}, {}, {}, {}, {}
        self._next_moves, self._events = {}, {}
        try:
            self._begin()
            run = FunctionRun(self, func)
            run.start()
            run.exec_block(function_body(func.node))
            run.finish()
            value = self._next_summaries.get(func.key, F.UNKNOWN)
            helpers = [name for table, name in self._reads if table == "summaries" and "<calls>" in self.param_facts.get(name, {})]
            if helpers and value.place.kind is not PlaceKind.FOLLOWS:
                return F.UNKNOWN
            return value
        finally:
            (self.recording, self.default_place, self.param_facts, self._fresh, self._next_summaries, self._next_params,
             self._next_attrs, self._next_envs, self._next_moves, self._events) = saved

    def _top_level(self) -> dict[str, Value]:
        """The module body's variables as it leaves them (before moves made in functions)."""
        if self._replayed(-1):
            env = self._memos[-1].env
            assert env is not None
            return env
        self._begin()
        env: Env | None = None
        body = self.analysis.module.body
        for assumed in self._assumptions(self.analysis.module, body):
            top = FunctionRun(self, None, assumed)
            top.exec_block(body)
            env = top.env if env is None else _join_runs(env, top.env)
        assert env is not None
        self._end(-1, env=env)
        return env

    def _assumptions(self, node: cst.CSTNode, body: Sequence[cst.CSTNode], cls: ClassInfo | None = None) -> list[dict[str, bool]]:
        """One run, or one per value of a switch the body tests twice, or once where its class
        fixed it in `__init__` (analysis/correlated.py)."""
        key = id(node)
        if key not in self._switches:
            self._switches[key] = repeated_switch(body, self.class_switches(cls) if cls is not None else frozenset())
        tested = self._switches[key]
        return [{}] if tested is None else [{tested: True}, {tested: False}]

    def class_switches(self, cls: ClassInfo) -> frozenset[str]:
        if cls.key not in self._held:
            self._held[cls.key] = class_switches(cls.node, self._attribute_assignments)
        return self._held[cls.key]

    def _attribute_assignments(self) -> Counter[str]:
        if self._attribute_counts is None:
            self._attribute_counts = attribute_assignments(self.analysis.module)
        return self._attribute_counts

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function whose code holds `node`."""
        if self._parents is None:
            self._parents = parent_table(self.analysis.module)
        parent = self._parents.get(node)
        while parent is not None and not isinstance(parent, cst.FunctionDef):
            parent = self._parents.get(parent)
        return parent

    def moved_under(self, node: cst.CSTNode) -> list[tuple[str, bool]]:
        """The switches (with the value each must hold) of the `if`s enclosing `node`."""
        if self._parents is None:
            self._parents = parent_table(self.analysis.module)
        found = []
        child, parent = node, self._parents.get(node)
        while parent is not None:
            if isinstance(parent, cst.If) and child is not parent.test:
                tested = switch(parent.test)
                if tested is not None:
                    found.append((tested[0], tested[1] if child is parent.body else not tested[1]))
            child, parent = parent, self._parents.get(parent)
        return found

    # -- memoised runs ------------------------------------------------------------
    def _begin(self) -> None:
        self._reads, self._ops = {}, []

    def _end(self, position: int, env: dict[str, Value] | None = None) -> None:
        self._memos[position] = _Memo(self._reads, self._ops, env)
        self._reads, self._ops = {}, []

    def _replayed(self, position: int) -> bool:
        """Replays the function's last run if nothing it read has changed since."""
        memo = self._memos.get(position)
        if memo is None:
            return False
        for (table, name), seen in memo.reads.items():
            now = self._lookup(table, name)
            if now is not seen and (now is _MISSING or seen is _MISSING or now != seen):
                return False
        for apply, args in memo.ops:
            apply(*args)
        return True

    def read(self, table: str, name: str, default: object) -> Any:
        """A fact (`table` is one of the attributes above), noted as read by the run under way."""
        value = self._lookup(table, name)
        self._reads.setdefault((table, name), value)
        return default if value is _MISSING else value

    def _lookup(self, table: str, name: str) -> object:
        """The freshest complete fact: this round's where its one writer has already run.

        A function's summary and final variables are written once per round, by
        its own run; `self` attributes by `__init__`, and every `__init__` runs
        before the other functions. Parameter facts join over every call site, so
        they come from the previous round, when all callers have been seen.
        """
        if table == "default_place":
            return self.default_place
        if table == "param_facts":
            callers = self._callers.get(name)
            if callers is not None and callers <= self._turns_done and name in self._next_params:
                return dict(self._next_params[name])  # a copy: later calls of this round must not change what was read
            return self.param_facts.get(name, _MISSING)
        current = self._fresh.get(table)
        if current is not None and name in self._single_writer and (table != "self_attrs" or self._inits_done):
            value = current.get(name, _MISSING)
            if value is not _MISSING:
                return value
        return getattr(self, table).get(name, _MISSING)

    def _do(self, apply: Callable[..., None], *args: object) -> None:
        self._ops.append((apply, args))
        apply(*args)

    def _read_final_parameters(self) -> bool:
        """Every run of the round read the parameter facts the round ended with: none saw them
        before a caller it did not expect had its turn."""
        for memo in self._memos.values():
            for (table, name), seen in memo.reads.items():
                if table == "param_facts" and seen != self._next_params.get(name, _MISSING):
                    return False
        return True

    def _dataset_attributes(self) -> dict[str, Value]:
        """Tensors a Dataset keeps on itself, by attribute name, where no other class uses the name.

        Datasets hand CPU tensors to DataLoader workers (pytorch#77159): what they
        hold is on the CPU, and indexing it with a device tensor fails.
        """
        owners: dict[str, list[str]] = {}
        for cls_name, attrs in self._next_attrs.items():
            for attr in attrs:
                owners.setdefault(attr, []).append(cls_name)
        found: dict[str, Value] = {}
        for cls_key, attrs in self._next_attrs.items():
            info = self.program.by_key.get(cls_key)
            if info is None or not info.is_dataset:
                continue
            for attr, value in attrs.items():
                if value.kind is Kind.TENSOR and len(owners[attr]) == 1 and value.place.kind in (PlaceKind.CPU, PlaceKind.FOLLOWS):
                    origin = value.origin if value.place == CPU else None
                    node = info.node
                    found[attr] = Value(
                        Kind.TENSOR,
                        CPU,
                        origin or Origin(node, f"kept by the dataset `{info.name}`"),
                    )
        return found

    def record(self, key: str, node: cst.CSTNode, event: object) -> None:
        if self.recording:
            self._do(self._record, key, node, event)

    def _record(self, key: str, node: cst.CSTNode, event: object) -> None:
        self._events.setdefault((key, id(node)), event)

    def _apply_function_moves(self, env: dict[str, Value]) -> None:
        """A global model moved inside `train()` is on the device when `test()` runs."""
        for name, (place, origin) in self.moves.items():
            value = env.get(name)
            if value is not None and value.kind in (Kind.MODULE, Kind.UNKNOWN, Kind.INSTANCE):
                env[name] = value.at(place, origin)

    def note_global_move(self, name: str, place: Place, node: cst.CSTNode, function: str) -> None:
        self._do(self._global_move, name, place, node, function)

    def _global_move(self, name: str, place: Place, node: cst.CSTNode, function: str) -> None:
        self._next_moves.setdefault(name, (place, Origin(node, f"moved in `{function}()`")))

    def note_default_place(self, place: Place) -> None:
        self._do(self._default_place, place)

    def _default_place(self, place: Place) -> None:
        self.default_place = place

    # -- facts shared by every run ----------------------------------------------
    def note_call(self, key: str, params: dict[str, Value]) -> None:
        self._do(self._call, key, params)

    def _call(self, key: str, params: dict[str, Value]) -> None:
        self._calling.setdefault(key, set()).add(self._position)
        facts = self._next_params.setdefault(key, {})
        for name, value in params.items():
            old = facts.get(name)
            if old is None:
                facts[name] = value
            elif old.place == Place(PlaceKind.FOLLOWS, name):
                continue  # callers already disagree: nothing a further call adds
            elif conflicting(old.place, value.place):
                # One caller passes a CPU tensor, another one on the device: the function works
                # on either, where each caller's input is (not on "a device" both would share).
                kind = old.kind if old.kind is value.kind else Kind.UNKNOWN
                facts[name] = Value(kind, Place(PlaceKind.FOLLOWS, name))
            else:
                facts[name] = F.join(old, value)
        facts.setdefault("<calls>", F.SCALAR)

    def note_return(self, key: str, value: Value) -> None:
        self._do(self._return, key, value)

    def _return(self, key: str, value: Value) -> None:
        previous = self._next_summaries.get(key)
        self._next_summaries[key] = value if previous is None else F.join(previous, value)

    def note_env(self, key: str, env: dict[str, Value]) -> None:
        self._do(self._env, key, env)

    def _env(self, key: str, env: dict[str, Value]) -> None:
        previous = self._next_envs.get(key)
        self._next_envs[key] = env if previous is None else _join_runs(previous, env)  # a second run under a switch

    def note_attrs(self, cls_key: str, attrs: dict[str, Value]) -> None:
        self._do(self._attrs, cls_key, attrs)

    def _attrs(self, cls_key: str, attrs: dict[str, Value]) -> None:
        previous = self._next_attrs.get(cls_key)
        self._next_attrs[cls_key] = attrs if previous is None else _join_runs(previous, attrs)


def _join_runs(a: dict[str, Value], b: dict[str, Value]) -> Env:
    """What two runs of one body under the two values of a switch leave: either may have happened."""
    joined = Env({key: F.join(value, b[key]) if key in b else value for key, value in a.items()})
    for key, value in b.items():
        if key not in a:
            dict.__setitem__(joined, key, value)
    joined.written = getattr(a, "written", set()) | getattr(b, "written", set())
    return joined


def _passed_from_elsewhere(func: FunctionInfo, call: Caller) -> dict[str, Value]:
    """What a call from another file hands each parameter, where it hands a tensor. A place that
    names the caller's own variables (`device`, a module's device) is "the device" here."""
    params = {param.name.value: param for param in func.params}
    bound = [*zip((p.name.value for p in func.params), call.positional), *call.keywords]
    facts: dict[str, Value] = {}
    for name, fact in bound:
        if fact is None or name not in params:
            continue
        value = fact.value(None)
        if value.place.kind is PlaceKind.DEVICE:
            value = value.at(Place(PlaceKind.DEVICE))
        elif value.place.kind is PlaceKind.FOLLOWS:
            value = value.at(Place(PlaceKind.FOLLOWS))
        facts[name] = replace(value, origin=Origin(params[name], f"passed from {call.where}"))
    return facts


def returns_a_value(func: cst.FunctionDef) -> bool:
    """Whether some `return` of the function's own body gives a value: without one it returns
    None to every caller, however they call it."""
    # Statements only: a `return` is never inside an expression, and expressions are most nodes.
    blocks: list[cst.CSTNode] = [func.body]
    while blocks:
        block = blocks.pop()
        for statement in getattr(block, "body", ()):
            if isinstance(statement, cst.Return):
                if statement.value is not None:
                    return True
            elif isinstance(statement, cst.SimpleStatementLine):
                blocks.append(statement)
            elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                blocks.extend(_clauses(statement))
    return False


def _clauses(statement: cst.BaseCompoundStatement) -> list[cst.CSTNode]:
    """The suites of a compound statement: its body, `else`/`elif`, handlers, `finally`, cases."""
    clauses: list[cst.CSTNode] = [] if isinstance(statement, cst.Match) else [statement.body]
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):
        clauses.extend(_clauses(orelse))
    elif orelse is not None:
        clauses.append(orelse.body)
    clauses.extend(handler.body for handler in getattr(statement, "handlers", ()))
    final = getattr(statement, "finalbody", None)
    if final is not None:
        clauses.append(final.body)
    clauses.extend(case.body for case in getattr(statement, "cases", ()))
    return clauses
