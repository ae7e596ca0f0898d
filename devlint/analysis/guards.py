"""Is this code only reached when an accelerator is present?

`if torch.cuda.is_available(): model.cuda()` is correct on every machine, and
so is code under a flag derived from it (`use_cuda = not args.no_cuda and
torch.cuda.is_available()`), under `device.type == "cuda"`, after
`if not torch.cuda.is_available(): sys.exit(...)`, or in a test skipped
without CUDA. The tracker runs inside the engine's single walk, ahead of the
rules, so `guarded` is current when a rule visits a node.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import libcst as cst

from devlint.analysis.call_sites import calls_of_file, holds_every_call, passed
from devlint.analysis.distributed_checks import INITIALIZED, WORLD_SIZE, asks_distributed, names_a_launcher_rank
from devlint.analysis.imported import ImportedFacts
from devlint.analysis.torchapi import ACCELERATOR_TYPES, AVAILABILITY_CALLS, AVAILABILITY_VALUES, CPU_TYPES, CUDA_TENSOR_TYPES, scattering_base
from devlint.analysis.torchapi.frameworks import AVAILABILITY_HELPERS, GPU_TEST_DECORATORS
from devlint.names import dotted_name, is_none
from devlint.tree import descendants

T = TypeVar("T")


class GuardedFile(Protocol):
    """What the guards read of the file being walked (the engine's FileContext)."""

    text: str
    module: cst.Module
    imported: ImportedFacts

    def qualify(self, node: cst.BaseExpression) -> str | None: ...

    def shared(self, build: Callable[[Any], T]) -> T: ...


_FLAG_WORDS = ("cuda", "gpu", "accelerat")
# Too short to match inside a word (`input` holds "npu", `voice_samples` "mps"): matched as a whole `_` part.
_FLAG_PARTS = frozenset({"mps", "xpu", "npu", "hpu", "mtia", "xla", "tpu"})
_DEVICE_STRINGS = ACCELERATOR_TYPES | CPU_TYPES
# Entering these fails without CUDA: their bodies only ever run on a GPU machine.
_GRAPH_CAPTURE = frozenset({"torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.graphs.graph", "torch.cuda.make_graphed_callables"})
_GRAPH_WORDS = ("CUDAGraph", "cuda.graph", "graphs.graph", "make_graphed_callables")
_INITIALIZED = frozenset({INITIALIZED})
_WORLD_SIZE = frozenset({WORLD_SIZE})
_GPU_ONLY_CONTEXTS = frozenset({"torch.cuda.device", "torch.cuda.stream", "torch.cuda.graph", "torch.cuda.graphs.graph", "torch.cuda.device_of"})


def names_an_accelerator(name: str) -> bool:
    """`use_cuda`, `ngpu`, `is_npu_available`: a lower-case name that speaks of an accelerator."""
    return any(word in name for word in _FLAG_WORDS) or not _FLAG_PARTS.isdisjoint(name.split("_"))


# `no_cuda`, `disable_gpu`: a flag whose first word negates the accelerator it names.
_NEGATIONS = frozenset({"no", "not", "disable", "without"})


# `use_cpu`, `cpu_only`: words that choose the CPU. Not `cpu_cache` or `load_to_cpu`: where
# something is kept or loaded, which says nothing of where the model runs.
_CPU_CHOICES = frozenset({("cpu",), ("use", "cpu"), ("force", "cpu"), ("only", "cpu"), ("cpu", "only"), ("run", "on", "cpu")})


def names_the_cpu_path(name: str) -> bool:
    """`use_cpu`, `cpu_only`, `no_cuda`: a flag whose truth asks for the CPU (so its falsehood,
    set by the user, asks for the accelerator, as `args.cuda` does)."""
    parts = tuple(name.lower().split("_"))
    return parts in _CPU_CHOICES or (len(parts) > 1 and parts[0] in _NEGATIONS and names_an_accelerator("_".join(parts[1:])))


def _names_accelerator_word(value: str) -> bool:
    """`"gpu"`, `"GPU"`: one word naming an accelerator, as a flag's name would."""
    return value.isidentifier() and names_an_accelerator(value.lower())


# Methods that return the object moved: `model = model.cuda(args.gpu)` makes `model` no flag,
# whatever names the move's arguments use.
_MOVE_METHODS = frozenset({"cuda", "to"})


def _a_move(node: cst.CSTNode) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _MOVE_METHODS  # type: ignore[attr-defined]


def _worth_entering(node: cst.CSTNode) -> bool:
    return not _a_move(node) and _not_a_dotted_name(node)


def _not_a_dotted_name(node: cst.CSTNode) -> bool:
    """Prunes `a.b.c` below its top: `_names_check` covers its prefixes and parts from the whole name."""
    return type(node) is not cst.Attribute or dotted_name(node) is None  # type: ignore[arg-type]


def _entry_name(node: cst.CSTNode) -> str | None:
    """`cfg["gpu_train"]` as `cfg.gpu_train`: a configuration read by key is the same setting
    as one read by attribute (FaceBoxes' and Pytorch_Retinaface's `GPU = cfg["gpu_train"]`)."""
    if type(node) is not cst.Subscript or len(node.slice) != 1:  # type: ignore[attr-defined]
        return None
    index = node.slice[0].slice  # type: ignore[attr-defined]
    key = string_value(index.value) if isinstance(index, cst.Index) else None
    owner = dotted_name(node.value)  # type: ignore[attr-defined]
    if key is None or owner is None or not key.isidentifier():
        return None
    return f"{owner}.{key}"


# What PyTorch's launchers set for each process they start; a script started alone reads the default.
_LAUNCHER_VARIABLES = frozenset({"LOCAL_RANK", "RANK"})
_LAUNCHER_OPTIONS = frozenset({"--local_rank", "--local-rank"})


def _integer(node: cst.BaseExpression) -> int | None:
    """`3`, `-1`."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def _reads_launcher_environment(value: cst.BaseExpression) -> bool:
    """`int(os.environ.get("LOCAL_RANK", -1))`, `int(os.getenv("RANK", "-1"))`: the launcher's
    variable, -1 when the script was started alone."""
    for node in descendants(value):
        if type(node) is not cst.Call:
            continue
        func = dotted_name(node.func)  # type: ignore[attr-defined]
        args = node.args  # type: ignore[attr-defined]
        if func in ("os.environ.get", "os.getenv", "environ.get", "getenv") and len(args) == 2:
            default = args[1].value
            number = _integer(default)
            text = string_value(default)
            if string_value(args[0].value) in _LAUNCHER_VARIABLES and (number == -1 or text == "-1"):
                return True
    return False


def _launcher_options(module: cst.Module) -> frozenset[str]:
    """`local_rank` where the file declares `add_argument("--local_rank", ..., default=-1)`,
    the option `torch.distributed.launch` passes to each process it starts."""
    found = set()
    for node in descendants(module):
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "add_argument" and node.args:  # type: ignore[attr-defined]
            if string_value(node.args[0].value) in _LAUNCHER_OPTIONS:  # type: ignore[attr-defined]
                default = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "default"), None)  # type: ignore[attr-defined]
                if default is not None and _integer(default) == -1:
                    found.add("local_rank")
    return frozenset(found)


def _empty_container(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return not node.elements
    return isinstance(node, cst.Call) and not node.args and dotted_name(node.func) in ("list", "dict", "set", "tuple")


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain string literal (no f-strings, no concatenation)."""
    if type(node) is cst.SimpleString:
        raw = node.value
        # Most literals need no evaluation (libcst's evaluated_value runs ast.literal_eval).
        if raw[:1] in "'\"" and "\\" not in raw:
            quote = 3 if raw[:3] in ('"""', "\'\'\'") else 1
            return raw[quote:-quote]
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - a malformed literal is not a device
            return None
        return value if isinstance(value, str) else None
    return None


def device_type_of_string(value: str) -> str | None:
    """'cuda:1' -> 'cuda'; a string that names no device -> None."""
    kind = value.split(":", 1)[0].strip().lower()
    return kind if kind in _DEVICE_STRINGS and value.strip() == value else None


@dataclass(frozen=True)
class _CallSite:
    callee: str  # `helper`, `Model.helper` (called as `self.helper`)
    caller: str | None  # the function the call is in (None: module level)
    guarded: bool  # under a check where it is
    conditions: frozenset[str]  # this file's functions called in the tests of the `if`s around it


class AcceleratorGuards:
    """Tracks, during the walk, whether the current node runs only where an accelerator is.

    A function can also be guarded by its callers: `_filtered_lrelu_cuda()` runs only
    behind `if x.device.type == "cuda":` at every place the file calls it. That is known
    only at the end of the walk (a helper is often defined before its callers), so a rule
    reports with `within=guards.callable` and the finding is dropped if `callers_guard`
    holds for it then.
    """

    def __init__(self, ctx: GuardedFile) -> None:
        self.ctx = ctx
        # The value each name was last assigned, so far in the walk: whether it is a check is
        # decided only when a test reads the name (most assignments are never asked about).
        self._assigned: dict[str, cst.BaseExpression] = {}
        self._verdicts: dict[int, bool] = {}  # id(value) -> is it a check
        self._assigned_in: dict[str, str | None] = {}  # the function each last assignment is in
        self._depth = 0
        # One counter per open block: early exits (`if not cuda: sys.exit()`)
        # guard the rest of their block.
        self._block_guards: list[int] = [0]
        self._if_stack: list[tuple[bool, bool]] = []  # (body guarded, orelse guarded)
        # Per function, innermost last: parameters defaulting to True (`need_cuda=True`).
        self._switches: list[frozenset[str]] = [frozenset()]
        self._function_nodes: list[cst.FunctionDef] = []  # the functions the walk is in, innermost last
        self._passed_checks: dict[tuple[int, str], bool] = {}
        self._callables: list[str] = []  # the function being walked (its outermost definition), repeated per nesting
        self._classes: list[str] = []
        self._scattering: list[bool] = []  # per enclosing class: does it derive from DataParallel (or kin)?
        self._conditions: list[frozenset[str]] = []  # calls in the tests of the enclosing guarded branches
        self._sites: list[_CallSite] = []
        self._checks: set[str] = set()  # this file's functions that return true only where an accelerator is
        self._callers_guard: frozenset[str] | None = None
        self._graph_text: bool | None = None
        self._distributed: dict[str, frozenset[str]] | None = None  # this file's helpers that ask torch.distributed
        self._no_distributed = False
        self._launcher_options: frozenset[str] | None = None  # `local_rank` where the file declares `--local_rank`
        self._true_guarded: set[str] = set()  # names set to True only under a check
        self._true_anywhere: set[str] = set()  # ... and elsewhere too

    @property
    def guarded(self) -> bool:
        return self._depth > 0 or sum(self._block_guards) > 0

    @property
    def callable(self) -> str | None:
        """The outermost function (or `Class.method`) the walk is in."""
        return self._callables[0] if self._callables else None

    def callers_guard(self, key: str) -> bool:
        """Every call of `key` in this file (one at least) is under a check, or in a function
        whose callers all are: past the walk, the function only runs where an accelerator is.

        A function used elsewhere too (imported, passed as a callback) may be reached
        unguarded; the file cannot tell, so these are the calls it shows.
        """
        if self._callers_guard is None:
            self._callers_guard = self._settle()
        return key in self._callers_guard

    def _settle(self) -> frozenset[str]:
        by_callee: dict[str, list[_CallSite]] = {}
        for site in self._sites:
            by_callee.setdefault(site.callee, []).append(site)
        guarded: set[str] = set()
        changed = True
        while changed:
            changed = False
            for callee, sites in by_callee.items():
                if callee in guarded:
                    continue
                if all(site.guarded or not site.conditions.isdisjoint(self._checks) or site.caller in guarded for site in sites):
                    guarded.add(callee)
                    changed = True
        return frozenset(guarded)

    # -- what counts as a guard --------------------------------------------
    def mentions_accelerator_check(self, expr: cst.BaseExpression) -> bool:
        if _a_move(expr):
            return False  # the object moved
        for node in descendants(expr, enter=_worth_entering):
            kind = type(node)
            if kind is cst.UnaryOperation and type(node.operator) is cst.Not and self._asks_for_cpu(node.expression):  # type: ignore[attr-defined]
                return True  # `not args.no_cuda and ...`, `use_cuda = not args.cpu`
            if kind is cst.Name or kind is cst.Attribute or kind is cst.Subscript:
                dotted = dotted_name(node) if kind is not cst.Subscript else _entry_name(node)  # type: ignore[arg-type]
                if dotted is None and kind is cst.Subscript:
                    continue
                if dotted is not None and names_the_cpu_path(dotted.rsplit(".", 1)[-1]):
                    continue  # `args.no_cuda` is true on the CPU path: no check on its own
                qualified = self.ctx.qualify(node) if dotted is not None else None  # type: ignore[arg-type]
                if qualified in AVAILABILITY_VALUES:
                    return True  # `len(torch.cuda.default_generators) > 0`
                if qualified is not None:
                    # An imported name is torch's API, not a flag: `torch.cuda.is_available`
                    # without the call is a function object, always true.
                    continue
                if dotted is not None and self._names_check(dotted):
                    return True
            elif kind is cst.Call:
                func = node.func  # type: ignore[attr-defined]
                qualified = self.ctx.qualify(func)
                if qualified in AVAILABILITY_CALLS or qualified in AVAILABILITY_HELPERS:
                    return True
                if dotted_name(func) == "isinstance" and len(node.args) == 2 and self.ctx.qualify(node.args[1].value) in CUDA_TENSOR_TYPES:  # type: ignore[attr-defined]
                    return True  # `isinstance(x, torch.cuda.FloatTensor)`: true only for a CUDA tensor, as `x.is_cuda`
                if self._callee(func) in self._checks:
                    return True  # `if _should_use_custom_op(x):`, defined above
            elif kind is cst.Comparison:
                operands = [node.left, *(target.comparator for target in node.comparisons)]  # type: ignore[attr-defined]
                if any((value := string_value(op)) is not None and (device_type_of_string(value) or _names_accelerator_word(value)) for op in operands):
                    return True  # `device == "cuda"`; `args.device == "gpu"`, a project's own word for it
        return False

    def _flag(self, dotted: str) -> bool | None:
        """Was `dotted` assigned from a check (None: not assigned in this file so far)?"""
        if dotted in self._true_guarded and dotted not in self._true_anywhere:
            return True
        value = self._assigned.get(dotted)
        if value is None or _empty_container(value):
            # `opt.gpu_ids = []`, then filled from the command line: what it holds is what
            # the code appends, not the empty literal, so the name says what it is for.
            return None
        key = id(value)
        if key not in self._verdicts:
            self._verdicts[key] = False  # `x = x or cuda`: a name does not make itself a check
            self._verdicts[key] = self.mentions_accelerator_check(value)
        return self._verdicts[key]

    def _names_check(self, dotted: str) -> bool:
        """`dotted`, a prefix or a part of it is a flag, names an accelerator, or asks a device's type."""
        # `log_timings=True`, then `log_timings = log_timings and torch.cuda.is_available()` in the
        # same function (I-JEPA's gpu_timer): the switch became a check.
        rechecked = self._assigned_in.get(dotted) == self.callable and self._flag(dotted)
        if dotted in self._switches[-1] and not rechecked and not self._always_passed_a_check(self._function_nodes[-1], dotted) or self._flag(dotted) is False:
            return False  # `need_cuda=True`, `cuda = True`: on whatever the machine, not a check
        if "." in dotted and any(self._flag(part) for part in dotted.split(".")):
            return True
        prefix = dotted
        while True:
            if self._flag(prefix):
                return True
            leaf = prefix.rsplit(".", 1)[-1].lower()
            if names_an_accelerator(leaf):
                return True
            if leaf in {"is_cuda", "type"} and "device" in prefix:
                return True
            if "." not in prefix:
                return False
            prefix = prefix.rsplit(".", 1)[0]

    def _per_rank_cuda_device(self, value: cst.BaseExpression) -> bool:
        if not (isinstance(value, cst.Call) and self.ctx.qualify(value.func) == "torch.device" and len(value.args) == 2):
            return False
        kind = string_value(value.args[0].value)
        return kind is not None and device_type_of_string(kind) == "cuda" and not isinstance(value.args[1].value, cst.Integer)

    def _split(self, test: cst.BaseExpression) -> tuple[bool, bool]:
        """Which branch of an `if test` is guarded: (body, orelse)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            body, orelse = self._split(test.expression)
            return orelse, body  # `not (device == "cpu")` guards its body; `not cuda` its else
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
            # `if not torch.cuda.is_available() or not flash: return`: past it, CUDA is there.
            _, left = self._split(test.left)
            _, right = self._split(test.right)
            if left or right:
                return False, True
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op = test.comparisons[0].operator
            values = [string_value(test.left), string_value(test.comparisons[0].comparator)]
            if any(v is not None and device_type_of_string(v) == "cpu" for v in values):
                # `if device == "cpu": ... else: <accelerator path>`
                if isinstance(op, cst.Equal):
                    return False, True
                if isinstance(op, cst.NotEqual):
                    return True, False
            if any(v is not None and device_type_of_string(v) not in (None, "cpu") for v in values):
                # `if x.device.type != "cuda": return x`: past it (in its else), CUDA is there.
                if isinstance(op, (cst.NotEqual, cst.IsNot)):
                    return False, True
            if is_none(test.left) or is_none(test.comparisons[0].comparator):
                # `if args.gpu is None:` runs where no GPU was chosen: only `is not None` is a check.
                named = self.mentions_accelerator_check(test)
                return (named, False) if isinstance(op, (cst.NotEqual, cst.IsNot)) else (False, False)
        if self._asks_for_cpu(test):
            return False, True  # `if args.use_cpu: ... else: <the accelerator the user asked for>`
        if self._scattering and self._scattering[-1] and isinstance(test, cst.Attribute) and test.attr.value == "device_ids" and dotted_name(test.value) == "self":
            # DataParallel sets `device_ids = []` where no accelerator is: `if not self.device_ids: return`
            # leaves only GPU runs (PyTorch-Encoding's DataParallelModel).
            return True, False
        return self.mentions_accelerator_check(test), False

    def _asks_for_cpu(self, expr: cst.BaseExpression) -> bool:
        """`args.use_cpu`, `no_cuda`: a flag of the program's own (not torch's API) asking for the CPU."""
        if isinstance(expr, cst.Subscript):
            dotted, owner = _entry_name(expr), expr
        elif isinstance(expr, (cst.Name, cst.Attribute)):
            dotted, owner = dotted_name(expr), expr
        else:
            return False
        if dotted is None or self.ctx.qualify(owner) is not None:
            return False
        return names_the_cpu_path(dotted.rsplit(".", 1)[-1]) or (isinstance(expr, cst.Name) and self._parameter_passed_a_cpu_flag(dotted))

    # -- multi-process code ------------------------------------------------
    def _multi_process_split(self, test: cst.BaseExpression) -> tuple[bool, bool]:
        """Which branch runs only in a multi-process job: the body of `if dist.is_initialized():`,
        the rest after `if world_size == 1: return`. Such code is GPU-only by design, as NCCL
        scripts are (DETR's `all_gather`, SAM 2's peer loading): single-process runs, the CPU
        ones among them, return before it."""
        if self._distributed is None:
            # Most files never ask torch.distributed anything: no need to look at their functions.
            asks = asks_distributed(self.ctx.text) or bool(self.ctx.imported.distributed) or names_a_launcher_rank(self.ctx.text)
            self._distributed = _distributed_helpers(self.ctx) if asks else {}
            self._no_distributed = not asks
        if self._no_distributed:
            return False, False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            body, orelse = self._multi_process_split(test.expression)
            return orelse, body
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            left, right, op = test.left, test.comparisons[0].comparator, test.comparisons[0].operator
            if isinstance(right, cst.Integer) and self._asks_distributed(left, _WORLD_SIZE):
                number = int(right.value)
                single = (isinstance(op, cst.Equal) and number == 1) or (isinstance(op, cst.LessThan) and number == 2) or (
                    isinstance(op, cst.LessThanEqual) and number == 1)
                multi = (isinstance(op, cst.GreaterThan) and number == 1) or (isinstance(op, cst.NotEqual) and number == 1) or (
                    isinstance(op, cst.GreaterThanEqual) and number == 2)
                return multi, single
            launched = self._launched_split(left, op, right)
            if launched is not None:
                return launched
            return False, False
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            left, _ = self._multi_process_split(test.left)
            right, _ = self._multi_process_split(test.right)
            return left or right, False
        return self._asks_distributed(test, _INITIALIZED), False

    def _launched_split(self, left: cst.BaseExpression, op: cst.BaseCompOp, right: cst.BaseExpression) -> tuple[bool, bool] | None:
        """`if local_rank != -1:` where `local_rank` is what PyTorch's launcher sets for each
        process it starts (`torchrun`'s `LOCAL_RANK`, `torch.distributed.launch`'s `--local_rank`)
        and -1 where the script was started alone: the branch runs only in a launched job
        (transformers' examples, YOLOv3's and YOLOP's `train.py`, RIFE). Which branch, by the
        comparison with -1 or 0; None where it is no such test."""
        bound = _integer(right)
        if bound is None or not self._launcher_rank(left):
            return None
        multi = (isinstance(op, cst.NotEqual) and bound == -1) or (isinstance(op, cst.GreaterThanEqual) and bound == 0) or (
            isinstance(op, cst.GreaterThan) and bound == -1)
        single = (isinstance(op, cst.Equal) and bound == -1) or (isinstance(op, cst.LessThan) and bound == 0) or (
            isinstance(op, cst.LessThanEqual) and bound == -1)
        return multi, single

    def _launcher_rank(self, expr: cst.BaseExpression) -> bool:
        """A name bound to `int(os.environ.get("LOCAL_RANK", -1))` (or `RANK`, or `os.getenv`), or
        `args.local_rank` of the file's own `add_argument("--local_rank", default=-1)`."""
        dotted = dotted_name(expr)
        if dotted is None:
            return False
        value = self._assigned.get(dotted)
        if value is not None and value is not expr:
            return _reads_launcher_environment(value)
        if not isinstance(expr, cst.Attribute):
            return False
        if self._launcher_options is None:
            self._launcher_options = _launcher_options(self.ctx.module)
        return expr.attr.value in self._launcher_options

    def _asks_distributed(self, expr: cst.BaseExpression, calls: frozenset[str]) -> bool:
        """`dist.is_initialized()`, a helper of this file that returns it, or a name assigned one."""
        if isinstance(expr, cst.Call):
            qualified = self.ctx.qualify(expr.func)
            if qualified in calls or qualified is not None and self.ctx.imported.distributed.get(qualified, "") in calls:
                return True
            callee = self._callee(expr.func)
            return callee is not None and (self._distributed or {}).get(callee) == calls
        if isinstance(expr, cst.Name):
            value = self._assigned.get(expr.value)
            return value is not None and value is not expr and self._asks_distributed(value, calls)
        return False

    # -- tracking during the walk ------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if self._per_rank_cuda_device(node.value):
            # `device = torch.device("cuda", rank)`: one GPU per process, code that is GPU-only by
            # design (DL102 says so of the literal); the rest of the block assumes CUDA too.
            self._block_guards[-1] += 1
        names = [dotted_name(target.target) for target in node.targets]
        if "pytestmark" in names and self.mentions_accelerator_check(node.value):
            # A test module skipped without CUDA runs only where CUDA is.
            self._block_guards[0] += 1
        for target in node.targets:
            dotted = dotted_name(target.target)
            if dotted is not None:
                # A flag if a check made its value; `cuda = True if torch.cuda.is_available else False`
                # is not one, the name alone does not make it one.
                self._assigned[dotted] = node.value
                self._assigned_in[dotted] = self.callable
                if isinstance(node.value, cst.Name) and node.value.value == "True" or isinstance(node.value, cst.Integer) and node.value.evaluated_value != 0:
                    # Set true only past a check (VAR's `__initialized = True` after
                    # `if not torch.cuda.is_available(): return`): true only where CUDA is. `1`
                    # is as true (pytorch-YOLOv4's `use_cuda = 1` under the check, `0` in its else).
                    (self._true_guarded if self.guarded else self._true_anywhere).add(dotted)

    def visit_If(self, node: cst.If) -> None:
        body, orelse = self._split(node.test)
        if not (body or orelse):
            body, orelse = self._multi_process_split(node.test)
        self._if_stack.append((body, orelse))

    def leave_If(self, original_node: cst.If) -> None:
        body, orelse = self._if_stack.pop()
        if not body and orelse and _exits(original_node.body):
            # Past `if not torch.cuda.is_available(): return`, CUDA is there; not in that body.
            self._block_guards[-1] += 1

    def visit_If_body(self, node: cst.If) -> None:
        if self._if_stack[-1][0]:
            self._depth += 1
        self._conditions.append(self._called(node.test) if isinstance(node, (cst.If, cst.IfExp)) else frozenset())

    def leave_If_body(self, node: cst.If) -> None:
        if self._if_stack[-1][0]:
            self._depth -= 1
        self._conditions.pop()

    def _called(self, test: cst.BaseExpression) -> frozenset[str]:
        """This file's functions a test calls where its truth needs theirs (`a and f(x)`, not `not f(x)`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._called(test.left) | self._called(test.right)
        if isinstance(test, cst.Call):
            callee = self._callee(test.func)
            return frozenset({callee}) if callee else frozenset()
        return frozenset()

    def _callee(self, func: cst.BaseExpression) -> str | None:
        """The key of a function of this file a call names: `helper(...)`, `self.helper(...)`."""
        if type(func) is cst.Name:
            return func.value  # type: ignore[attr-defined, no-any-return]
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in ("self", "cls") and self._classes:  # type: ignore[attr-defined]
            return f"{self._classes[0]}.{func.attr.value}"  # type: ignore[attr-defined]
        return None

    def visit_Call(self, node: cst.Call) -> None:
        callee = self._callee(node.func)
        if callee is None or callee == self.callable:
            return
        conditions = frozenset().union(*self._conditions) if self._conditions else frozenset()
        self._sites.append(_CallSite(callee, self.callable, self.guarded, conditions))

    def visit_If_orelse(self, node: cst.If) -> None:
        if self._if_stack[-1][1]:
            self._depth += 1

    def leave_If_orelse(self, node: cst.If) -> None:
        if self._if_stack[-1][1]:
            self._depth -= 1

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._if_stack.append(self._split(node.test))

    def leave_IfExp(self, original_node: cst.IfExp) -> None:
        self._if_stack.pop()

    def visit_IfExp_body(self, node: cst.IfExp) -> None:
        self.visit_If_body(node)  # type: ignore[arg-type]

    def leave_IfExp_body(self, node: cst.IfExp) -> None:
        self.leave_If_body(node)  # type: ignore[arg-type]

    def visit_IfExp_orelse(self, node: cst.IfExp) -> None:
        self.visit_If_orelse(node)  # type: ignore[arg-type]

    def leave_IfExp_orelse(self, node: cst.IfExp) -> None:
        self.leave_If_orelse(node)  # type: ignore[arg-type]

    # `A and B` evaluates B only where A is true, `A or B` only where A is false: a check in
    # the left operand guards the right one as an `if` would (stylegan3's
    # `impl == 'cuda' and x.device.type == 'cuda' and _init()`).
    def visit_BooleanOperation_right(self, node: cst.BooleanOperation) -> None:
        body, orelse = self._split(node.left)
        conjunction = isinstance(node.operator, cst.And)
        self._if_stack.append((body if conjunction else orelse, False))
        if self._if_stack[-1][0]:
            self._depth += 1
        self._conditions.append(self._called(node.left) if conjunction else frozenset())

    def leave_BooleanOperation_right(self, node: cst.BooleanOperation) -> None:
        if self._if_stack.pop()[0]:
            self._depth -= 1
        self._conditions.pop()

    def visit_With(self, node: cst.With) -> None:
        gpu_only = any(
            isinstance(item.item, cst.Call) and self.ctx.qualify(item.item.func) in _GPU_ONLY_CONTEXTS for item in node.items
        )
        self._if_stack.append((gpu_only, False))

    def leave_With(self, original_node: cst.With) -> None:
        self._if_stack.pop()

    def visit_With_body(self, node: cst.With) -> None:
        self.visit_If_body(node)  # type: ignore[arg-type]

    def leave_With_body(self, node: cst.With) -> None:
        self.leave_If_body(node)  # type: ignore[arg-type]

    # `for i in range(torch.cuda.device_count()):` runs its body only where a GPU is: the count
    # is 0 without one (stable-dreamfusion's memory report).
    def visit_For(self, node: cst.For) -> None:
        self._if_stack.append((self._counts_accelerators(node.iter), False))

    def leave_For(self, original_node: cst.For) -> None:
        self._if_stack.pop()

    def visit_For_body(self, node: cst.For) -> None:
        self.visit_If_body(node)  # type: ignore[arg-type]

    def leave_For_body(self, node: cst.For) -> None:
        self.leave_If_body(node)  # type: ignore[arg-type]

    def _counts_accelerators(self, iterable: cst.BaseExpression) -> bool:
        """`range(torch.cuda.device_count())`, `range(n)` with `n = torch.cuda.device_count()`."""
        if not (isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" and 1 <= len(iterable.args) <= 3):
            return False
        stop = iterable.args[0 if len(iterable.args) == 1 else 1].value
        if isinstance(stop, cst.Name) and self._assigned_in.get(stop.value) == self.callable:
            stop = self._assigned.get(stop.value, stop)
        return self._at_most_device_count(stop)

    def _at_most_device_count(self, expr: cst.BaseExpression) -> bool:
        """`torch.cuda.device_count()`, or what cannot exceed it: `min(k, device_count())`, and a
        choice between such (FastChat's `get_gpu_memory`): 0 where no GPU is."""
        if isinstance(expr, cst.IfExp):
            return self._at_most_device_count(expr.body) and self._at_most_device_count(expr.orelse)
        if not isinstance(expr, cst.Call):
            return False
        if dotted_name(expr.func) == "min":
            return any(not arg.star and self._at_most_device_count(arg.value) for arg in expr.args)
        qualified = self.ctx.qualify(expr.func) or ""
        return qualified.endswith(".device_count") and qualified in AVAILABILITY_CALLS

    def visit_Assert(self, node: cst.Assert) -> None:
        if self._implies_accelerator(node.test):
            self._block_guards[-1] += 1

    def _implies_accelerator(self, test: cst.BaseExpression) -> bool:
        """Past `assert test`, an accelerator is there: `torch.cuda.is_available()`, a flag,
        `device_count() > 0`; not `cfg.NUM_GPUS <= torch.cuda.device_count()`, true with none."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._implies_accelerator(test.left) or self._implies_accelerator(test.right)
        if isinstance(test, cst.Comparison):
            if len(test.comparisons) != 1:
                return False
            left, right, op = test.left, test.comparisons[0].comparator, test.comparisons[0].operator
            counts = [side for side in (left, right) if isinstance(side, cst.Call) and self.ctx.qualify(side.func) in AVAILABILITY_CALLS]
            if counts:
                bound = right if counts[0] is left else left
                number = int(bound.value) if isinstance(bound, cst.Integer) else None
                greater = isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)) == (counts[0] is left)
                return number is not None and greater and (number >= 1 or isinstance(op, (cst.GreaterThan, cst.LessThan)))
            return self._split(test)[0]  # `device.type == "cuda"`, `device != "cpu"`
        return self.mentions_accelerator_check(test)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block_guards.append(0)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._block_guards.pop()

    def _decorated_guard(self, node: cst.FunctionDef | cst.ClassDef) -> bool:
        """A test skipped on some condition (`skipif(not HAS_FA3)`, `requires_cuda`) states its hardware needs."""
        for decorator in node.decorators:
            expr = decorator.decorator
            callee = expr.func if isinstance(expr, cst.Call) else expr
            leaf = (dotted_name(callee) or "").rsplit(".", 1)[-1].lower()
            if leaf in GPU_TEST_DECORATORS or self.mentions_accelerator_check(expr):
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._callables:
            self._callables.append(self._callables[0])
        else:
            key = f"{self._classes[0]}.{node.name.value}" if len(self._classes) == 1 else node.name.value
            self._callables.append(key)
            if self._is_check(node):
                self._checks.add(key)
        params = node.params
        self._switches.append(frozenset(
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if isinstance(p.default, cst.Name) and p.default.value == "True"
        ))
        self._function_nodes.append(node)
        # A test marked to skip without CUDA states its hardware needs; a function that
        # captures a CUDA graph is CUDA-only by what it does.
        # A `cuda()` method (a container's own, as Module.cuda and Tensor.cuda are) runs only
        # where its caller asked for CUDA: what it does there is that request.
        guarded = self._decorated_guard(node) or node.name.value == "cuda" or self._captures_cuda_graph(node)
        self._if_stack.append((guarded, False))
        self.visit_If_body(node)  # type: ignore[arg-type]

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.leave_If_body(original_node)  # type: ignore[arg-type]
        self._if_stack.pop()
        self._switches.pop()
        self._function_nodes.pop()
        self._callables.pop()

    def _always_passed_a_check(self, func: cst.FunctionDef, name: str) -> bool:
        """`def train(loader, net, use_cuda=True)` that every call of the file, which holds them
        all, passes `torch.cuda.is_available()` or a flag made from it (loss-landscape's
        cifar10 trainer): the switch is that check, its default never taking effect."""
        key = (id(func), name)
        if key not in self._passed_checks:
            self._passed_checks[key] = self._every_call_passes_a_check(func, name)
        return self._passed_checks[key]

    def _every_call_passes_a_check(self, func: cst.FunctionDef, name: str) -> bool:
        return self._every_call_passes(func, name, self._asks_availability)

    def _every_call_passes(self, func: cst.FunctionDef, name: str, test: Callable[[cst.BaseExpression], bool]) -> bool:
        """Does every call of `func`, all of them in this file, pass for `name` what `test` accepts?"""
        if not holds_every_call(self.ctx.module, func):
            return False
        calls = self.ctx.shared(calls_of_file).get(func.name.value, [])
        if not self._classes:
            calls = [call for call in calls if isinstance(call.func, cst.Name)]  # `net.train()` is the module's own
        if not calls:
            return False
        given = [passed(call, func, name) for call in calls]
        return all(value is not None and test(value) for value in given)

    def _parameter_passed_a_cpu_flag(self, name: str) -> bool:
        """`def load_model(model, path, load_to_cpu)` that every call of the file, which holds them
        all, passes the user's CPU flag (`load_model(net, args.trained_model, args.cpu)`,
        FaceBoxes' and Pytorch_Retinaface's test scripts): the parameter is that flag."""
        if not self._function_nodes:
            return False
        func = self._function_nodes[-1]
        params = func.params
        if name not in {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}:
            return False
        key = (id(func), f"cpu:{name}")
        if key not in self._passed_checks:
            self._passed_checks[key] = False  # a recursive call passing the parameter on proves nothing
            self._passed_checks[key] = self._every_call_passes(func, name, self._asks_for_cpu)
        return self._passed_checks[key]

    def _asks_availability(self, expr: cst.BaseExpression) -> bool:
        """`torch.cuda.is_available()` itself, an expression holding it, or a name the file binds
        only to such (`use_cuda = torch.cuda.is_available()`): read from the calls, never from
        the name (taming-transformers' `gpu = True` is passed the same way)."""
        if isinstance(expr, cst.Name):
            values = [
                node.value for node in descendants(self.ctx.module)
                if type(node) is cst.Assign and any(dotted_name(t.target) == expr.value for t in node.targets)  # type: ignore[attr-defined]
            ]
            return bool(values) and all(self._asks_availability(value) for value in values)
        return any(
            type(node) is cst.Call and (self.ctx.qualify(node.func) in AVAILABILITY_CALLS or self.ctx.qualify(node.func) in AVAILABILITY_HELPERS)  # type: ignore[attr-defined]
            for node in descendants(expr)
        )

    def _captures_cuda_graph(self, node: cst.FunctionDef) -> bool:
        if self._graph_text is None:
            self._graph_text = any(word in self.ctx.text for word in _GRAPH_WORDS)
        if not self._graph_text or len(self._callables) > 1:
            return False  # most files never name a graph: no need to look into every function
        for inner in descendants(node.body):
            if type(inner) is cst.Call and self.ctx.qualify(inner.func) in _GRAPH_CAPTURE:  # type: ignore[attr-defined]
                return True
        return False

    def _is_check(self, node: cst.FunctionDef) -> bool:
        """Returns true only where an accelerator is: `if x.device.type != "cuda": return False`
        before any other return, or `return x.is_cuda and ...` at the end."""
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if isinstance(stmt, cst.If) and stmt.orelse is None and _returns_false(stmt.body):
                if self._split(stmt.test) == (False, True):
                    return True
                continue  # `if not enabled: return False`: another reason to say no
            if not isinstance(stmt, cst.SimpleStatementLine) or any(isinstance(small, cst.Return) for small in stmt.body):
                break  # a statement that may return true first (compound statements are not looked into)
        last = body[-1] if body else None
        if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return) and last.body[0].value is not None:
            return self._split(last.body[0].value)[0]
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)
        self._scattering.append(bool(scattering_base(self.ctx.qualify(base.value) or "" for base in node.bases)))
        self._if_stack.append((self._decorated_guard(node), False))
        self.visit_If_body(node)  # type: ignore[arg-type]

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.leave_If_body(original_node)  # type: ignore[arg-type]
        self._if_stack.pop()
        self._classes.pop()
        self._scattering.pop()


def _distributed_helpers(ctx: GuardedFile) -> dict[str, frozenset[str]]:
    """Top-level functions that answer "is this a multi-process job" (`is_dist_avail_and_initialized`)
    or "how many processes" (`get_world_size`), asking torch.distributed and answering with
    nothing but its answer or constants."""
    found: dict[str, frozenset[str]] = {}
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        asked = {ctx.qualify(n.func) for n in descendants(stmt.body) if type(n) is cst.Call}  # type: ignore[attr-defined]
        returns = [n.value for n in descendants(stmt.body) if type(n) is cst.Return]  # type: ignore[attr-defined]
        for question in (_INITIALIZED, _WORLD_SIZE):
            if asked & question and all(_answers(value, question, ctx) for value in returns):
                found[stmt.name.value] = question
    return found


def _answers(value: cst.BaseExpression | None, question: frozenset[str], ctx: GuardedFile) -> bool:
    if value is None or isinstance(value, cst.Integer) or isinstance(value, cst.Name) and value.value in ("True", "False"):
        return True
    return isinstance(value, cst.Call) and ctx.qualify(value.func) in question


def _returns_false(block: cst.BaseSuite) -> bool:
    """`return False` / `return` / `return None`: the block answers "no"."""
    if isinstance(block, cst.SimpleStatementSuite):  # `if not ok: return False` on one line
        small = block.body[0] if len(block.body) == 1 else None
    elif isinstance(block, cst.IndentedBlock) and len(block.body) == 1 and isinstance(block.body[0], cst.SimpleStatementLine):
        small = block.body[0].body[0]
    else:
        small = None
    if not isinstance(small, cst.Return):
        return False
    value = small.value
    return value is None or isinstance(value, cst.Name) and value.value in ("False", "None")


def _exits(block: cst.BaseSuite) -> bool:
    """Does the block end by leaving (raise, return, sys.exit, continue)?"""
    if not isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) or not block.body:
        return False
    last = block if isinstance(block, cst.SimpleStatementSuite) else block.body[-1]  # `if x: return` on one line
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and last.body:
        small = last.body[-1]
        if isinstance(small, (cst.Raise, cst.Return, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            name = dotted_name(small.value.func) or ""
            return name in {"sys.exit", "exit", "quit", "os._exit", "pytest.skip", "unittest.SkipTest"}
    return False
