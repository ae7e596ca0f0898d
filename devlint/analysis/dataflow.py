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

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.events import Conflict, DiscardedMove, NumpyOnDevice, SplitReturn
from devlint.analysis.facts import CPU, Kind, Origin, Place, PlaceKind, Value
from devlint.analysis.interpreter import FunctionRun, function_body
from devlint.analysis.program import Program
from devlint.config import Settings
from devlint.names import BindingsCache, ImportTable

_ROUNDS = 3  # at most _ROUNDS + 1 rounds; most files settle after two


class DeviceAnalysis:
    """Runs once per file, on first use, and keeps what it observed."""

    def __init__(
        self, module: cst.Module, names: ImportTable, settings: Settings, bindings: BindingsCache | None = None
    ) -> None:
        self.module = module
        self.names = names
        self.settings = settings
        self.bindings = bindings or BindingsCache()
        self._done = False
        self.conflicts: list[Conflict] = []
        self.discarded: list[DiscardedMove] = []
        self.numpy: list[NumpyOnDevice] = []
        self.split_returns: list[SplitReturn] = []

    def run(self) -> "DeviceAnalysis":
        if not self._done:
            self._done = True
            Solver(self).solve()
        return self


class Solver:
    def __init__(self, analysis: DeviceAnalysis) -> None:
        self.analysis = analysis
        self.names = analysis.names
        self.settings = analysis.settings
        self.program = Program.of(analysis.module, analysis.names, analysis.bindings)
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

    def solve(self) -> None:
        # Each round sees the facts of the previous one; once a round's facts come
        # out as they went in, its observations are final.
        self.recording = True
        for _ in range(_ROUNDS + 1):
            self._events = {}
            self._next_summaries, self._next_params, self._next_attrs, self._next_envs = {}, {}, {}, {}
            self._next_moves = {}
            top = FunctionRun(self, None)
            top.exec_block(self.analysis.module.body)
            self._apply_function_moves(top.env)
            next_globals = top.env
            # __init__ first: the other methods see what it stores on self.
            ordered = sorted(self.program.functions, key=lambda f: (f.name != "__init__",))
            for func in ordered:
                run = FunctionRun(self, func)
                run.start()
                run.exec_block(function_body(func.node))
                run.finish()
            settled = (
                next_globals == self.globals
                and self._next_moves == self.moves
                and self._next_summaries == self.summaries
                and self._next_params == self.param_facts
                and self._next_attrs == self.self_attrs
            )
            self.globals = next_globals
            self.dataset_attrs = self._dataset_attributes()
            self.summaries = self._next_summaries
            self.param_facts = self._next_params
            self.self_attrs = self._next_attrs
            self.final_envs = self._next_envs
            self.moves = self._next_moves
            if settled:
                break
        events = self._events.values()
        self.analysis.conflicts = [e for e in events if isinstance(e, Conflict)]
        self.analysis.discarded = [e for e in events if isinstance(e, DiscardedMove)]
        self.analysis.numpy = [e for e in events if isinstance(e, NumpyOnDevice)]
        self.analysis.split_returns = [e for e in events if isinstance(e, SplitReturn)]

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
            self._events.setdefault((key, id(node)), event)

    def _apply_function_moves(self, env: dict[str, Value]) -> None:
        """A global model moved inside `train()` is on the device when `test()` runs."""
        for name, (place, origin) in self.moves.items():
            value = env.get(name)
            if value is not None and value.kind in (Kind.MODULE, Kind.UNKNOWN, Kind.INSTANCE):
                env[name] = value.at(place, origin)

    def note_global_move(self, name: str, place: Place, node: cst.CSTNode, function: str) -> None:
        self._next_moves.setdefault(name, (place, Origin(node, f"moved in `{function}()`")))

    # -- facts shared by every run ----------------------------------------------
    def note_call(self, key: str, params: dict[str, Value]) -> None:
        facts = self._next_params.setdefault(key, {})
        for name, value in params.items():
            facts[name] = F.join(facts[name], value) if name in facts else value
        facts.setdefault("<calls>", F.SCALAR)

    def note_return(self, key: str, value: Value) -> None:
        previous = self._next_summaries.get(key)
        self._next_summaries[key] = value if previous is None else F.join(previous, value)
