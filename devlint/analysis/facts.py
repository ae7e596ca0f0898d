"""Device facts: where a value lives, what kind of value it is, and why we think so."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

import libcst as cst

from devlint.analysis.torchapi import SCATTERING_WRAPPERS


class PlaceKind(Enum):
    CPU = "cpu"
    ACCEL = "accel"  # a named accelerator: .cuda(), "cuda:0", "mps"
    DEVICE = "device"  # "the device": chosen at run time, may be an accelerator
    FOLLOWS = "follows"  # wherever a function parameter lives (resolved at call sites)
    UNKNOWN = "unknown"
    NOWHERE = "nowhere"  # an empty list: joins as the identity


@dataclass(frozen=True)
class Place:
    kind: PlaceKind
    name: str = ""  # accel: "cuda"; device: the variable ("device", "self.device"); follows: the parameter

    @property
    def known(self) -> bool:
        return self.kind in (PlaceKind.CPU, PlaceKind.ACCEL, PlaceKind.DEVICE)

    @property
    def on_accelerator(self) -> bool:
        """May hold an accelerator tensor (a named accelerator or the run-time device)."""
        return self.kind in (PlaceKind.ACCEL, PlaceKind.DEVICE)

    def describe(self) -> str:
        if self.kind is PlaceKind.CPU:
            return "the CPU"
        if self.kind is PlaceKind.ACCEL:
            return f"`{self.name}`" if self.name else "an accelerator"
        if self.kind is PlaceKind.FOLLOWS:
            return f"`{self.name}`'s device, which the caller chooses" if self.name else "the device the caller chooses"
        if self.kind is PlaceKind.DEVICE:
            return f"`{self.name}`" if self.name and not self.name.startswith("<") else (self.name.strip("<>") or "the device")
        return "an unknown device"


CPU = Place(PlaceKind.CPU)
UNKNOWN_PLACE = Place(PlaceKind.UNKNOWN)
NOWHERE = Place(PlaceKind.NOWHERE)
MODULE_DEVICE = Place(PlaceKind.DEVICE, "<the module's device>")
INPUT_DEVICE = Place(PlaceKind.DEVICE, "<the device of the module's inputs>")
# Where `torch.set_default_tensor_type(torch.cuda.FloatTensor)` puts new tensors: CUDA where the
# program set it, which it does where CUDA is (otherwise the call itself raises).
DEFAULT_TYPE_DEVICE = Place(PlaceKind.DEVICE, "<the default tensor type's device>")


def conflicting(a: Place, b: Place) -> bool:
    """CPU against an accelerator or the run-time device: fails on a GPU machine."""
    return (a.kind is PlaceKind.CPU and b.on_accelerator) or (b.kind is PlaceKind.CPU and a.on_accelerator)


def join_places(a: Place, b: Place) -> Place:
    """Where a value lives after two paths meet: only what both paths agree on."""
    if a.kind is PlaceKind.NOWHERE:
        return b
    if b.kind is PlaceKind.NOWHERE:
        return a
    if a == b:
        return a
    if a.kind is PlaceKind.DEVICE and b.kind is PlaceKind.DEVICE:
        return a if a.name == b.name else Place(PlaceKind.DEVICE)
    if a.kind is PlaceKind.FOLLOWS and b.kind is PlaceKind.FOLLOWS:
        return Place(PlaceKind.FOLLOWS)  # one input or another: the caller chooses either way
    if a.on_accelerator and b.kind is PlaceKind.CPU or b.on_accelerator and a.kind is PlaceKind.CPU:
        # `if args.cuda: x = x.cuda()`: on an accelerator where the branch runs, so a device
        # chosen at run time, as the device-selection idiom chooses it.
        return Place(PlaceKind.DEVICE)
    return UNKNOWN_PLACE


class Kind(Enum):
    TENSOR = "tensor"
    MODULE = "module"
    LOADER = "loader"  # iterating it yields CPU batches
    DEVICE = "device"  # a torch.device or a device string
    SEQ = "seq"  # a list/tuple/dict/iterator whose elements are `elem`
    INSTANCE = "instance"  # an object of a class defined in this file
    TENSOR_TYPE = "tensor type"  # a legacy typed-tensor class (`torch.cuda.FloatTensor`): calling it creates a tensor at its place
    SCALAR = "scalar"  # Python numbers, numpy values, .item(): mix with anything
    UNREACHED = "unreached"  # what an operation that raises gives: no path continues past it
    NONE = "none"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Origin:
    """Why a value lives where it does: shown to the user."""

    node: cst.CSTNode
    what: str  # "comes from `train_loader`", "created by `torch.zeros` without `device=`"
    factory: bool = False  # a torch factory that put the tensor on the default (CPU) device
    moved: bool = False  # placed by an explicit move (`.to(device)`, `.cuda()`): the code chose where


# Not frozen: a frozen dataclass sets each of the fields through object.__setattr__, and the
# analysis makes a Value for every expression it evaluates. Nothing changes a Value once made
# (`replace` makes another), so it hashes by its fields as a frozen one does.
@dataclass(unsafe_hash=True, slots=True)
class Value:
    kind: Kind = Kind.UNKNOWN
    place: Place = UNKNOWN_PLACE
    origin: Origin | None = None
    batch: Origin | None = None  # set while the value is an unmoved batch from a CPU loader
    part: bool = False  # batch: a piece of it (`x, y = batch`, `batch["x"]`), not what the loader yielded
    weak: bool = False  # place inferred through an opaque callable: good for "may", not "must"
    elem: "Value | None" = None  # SEQ: the elements; LOADER: what it yields
    cls: str = ""  # INSTANCE / MODULE: the local class name, if known
    scalar: bool = False  # a 0-dim tensor or Python number: PyTorch lets it mix
    in_module: str = ""  # the Module class whose method created it (for DL303)
    stateless: bool = False  # MODULE: owns no parameters or buffers, so any device's tensors go through it
    parts: tuple["Value", ...] = ()  # SEQ: elements on different known devices, kept apart for cat/stack
    items: tuple["Value", ...] | None = None  # SEQ of fixed length: `(x, y)`, an `enumerate` pair
    dims: int | None = None  # TENSOR: how many dimensions, where the code shows it (0: mixes like a number)
    cpu_path: Origin | None = None  # on some path it is instead this fresh CPU tensor (`loss = torch.tensor([1.0])` under an `if`)
    function: str = ""  # a torch factory held as a value (`win = torch.hann_window`): calling it calls the factory
    text: str = ""  # a string constant (`window="hann_window"`), for `getattr(torch, window)`
    mapping: bool = False  # SEQ: a mapping whose values are `elem`; iterating it yields its keys
    # MODULE: the arguments of a call of it whose devices must agree (`nn.CTCLoss`: `log_probs`
    # only), where not all of them; at a join, those every class checks.
    checked: frozenset[int | str] | None = None

    def at(self, place: Place, origin: Origin | None = None, **changes: object) -> "Value":
        return replace(self, place=place, origin=origin or self.origin, **changes)  # type: ignore[arg-type]


UNKNOWN = Value()
UNREACHED = Value(Kind.UNREACHED)
SCALAR = Value(Kind.SCALAR, scalar=True)
NONE = Value(Kind.NONE)


def join(a: Value, b: Value) -> Value:
    if a is b or a == b:
        return a
    # A path through an operation that raised goes no further: it has no say where paths meet.
    if a.kind is Kind.UNREACHED:
        return b
    if b.kind is Kind.UNREACHED:
        return a
    if a.kind is Kind.NONE and b.kind is not Kind.NONE:
        return replace(b, origin=b.origin)
    if b.kind is Kind.NONE and a.kind is not Kind.NONE:
        return a
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        return tuple_of([join(x, y) for x, y in zip(a.items, b.items)])
    # A tensor on the device (or the caller's) on one path, a fresh CPU tensor on the other: it
    # stays where it mostly is, and remembers the path where it is not.
    if fresh_cpu(a) and _placed_elsewhere(b):
        return replace(b, cpu_path=a.origin)
    if fresh_cpu(b) and _placed_elsewhere(a):
        return replace(a, cpu_path=b.origin)
    kind = a.kind if a.kind is b.kind else Kind.UNKNOWN
    place = join_places(a.place, b.place)
    elem = None
    if a.elem is not None and b.elem is not None:
        elem = join(a.elem, b.elem)
    parts = merge_parts(a.parts, b.parts)
    return Value(
        kind=kind,
        place=place,
        origin=_joined_origin(a, b, place),
        batch=a.batch if a.batch is not None and a.batch == b.batch else None,
        part=a.part and b.part,
        weak=a.weak or b.weak,
        elem=elem,
        cls=_joined_class(a, b),
        scalar=a.scalar and b.scalar,
        in_module=a.in_module if a.in_module == b.in_module else "",
        stateless=a.stateless and b.stateless,
        parts=parts if kind is Kind.SEQ else (),
        dims=a.dims if a.dims == b.dims else None,
        cpu_path=a.cpu_path or b.cpu_path,
        mapping=a.mapping or b.mapping,
        checked=_checked_by_both(a.checked, b.checked),
    )


def _joined_class(a: Value, b: Value) -> str:
    """A module wrapped to scatter its inputs on one path (`nn.DataParallel(model).cuda()` where
    CUDA is) and left on the CPU on the other takes CPU inputs on both: it stays a scatterer."""
    if a.cls == b.cls:
        return a.cls
    for one, other in ((a, b), (b, a)):
        if one.cls in SCATTERING_WRAPPERS and other.kind is Kind.MODULE and (other.place.kind is PlaceKind.CPU or other.stateless):
            return one.cls
    return ""


def _checked_by_both(a: frozenset[int | str] | None, b: frozenset[int | str] | None) -> frozenset[int | str] | None:
    """A value that may be either module compares only the arguments both compare (None: all)."""
    if a is None:
        return b
    return a if b is None else a & b


def fresh_cpu(value: Value) -> bool:
    """A tensor a factory just made on the CPU (not 0-dim, which mixes with anything)."""
    return value.kind is Kind.TENSOR and value.place.kind is PlaceKind.CPU and not value.scalar and not value.weak and value.origin is not None and value.origin.factory


def _placed_elsewhere(value: Value) -> bool:
    """A tensor on an accelerator, the run-time device, or wherever its caller put it."""
    # A tensor moved explicitly on one path only (`if cfg.gpu: x = x.cuda()`) is the same data
    # placed by choice, not a fresh tensor left behind.
    moved = value.origin is not None and value.origin.moved
    return value.kind is Kind.TENSOR and not value.weak and not moved and (value.place.on_accelerator or value.place.kind is PlaceKind.FOLLOWS)


def _joined_origin(a: Value, b: Value, place: Place) -> Origin | None:
    if a.origin == b.origin or place == a.place:
        return a.origin
    if place == b.place:
        return b.origin
    if place.kind is PlaceKind.DEVICE:
        # CPU on one path, an accelerator on the other: the move is the reason.
        return a.origin if a.place.on_accelerator else b.origin
    return None


def iterated(value: Value) -> Value | None:
    """What iterating a SEQ yields, where known: a mapping yields its keys, not its values."""
    return None if value.mapping else value.elem


def tuple_of(items: "list[Value]") -> Value:
    return Value(Kind.SEQ, items=tuple(items))


def merge_parts(*groups: "tuple[Value, ...]") -> "tuple[Value, ...]":
    """Distinct known placements among a collection's elements (at most one per place)."""
    seen: dict[Place, Value] = {}
    for group in groups:
        for value in group:
            caller_placed = value.place.kind is PlaceKind.FOLLOWS and value.kind is Kind.TENSOR
            if (value.place.known or caller_placed) and value.place not in seen:
                seen[value.place] = value
    return tuple(seen.values())


@dataclass(frozen=True)
class PlaceFact:
    """A Value as another file may know it: kind and place, without the syntax it came from."""

    kind: str
    place: str
    name: str = ""
    scalar: bool = False
    dims: int | None = None
    stateless: bool = False
    what: str = ""  # why it lives there: "created by `torch.ones` without `device=`"

    @classmethod
    def of(cls, value: Value) -> "PlaceFact":
        return cls(
            value.kind.value, value.place.kind.value, value.place.name, value.scalar, value.dims, value.stateless,
            value.origin.what if value.origin is not None else "",
        )

    def value(self, origin: Origin | None) -> Value:
        return Value(
            Kind(self.kind), Place(PlaceKind(self.place), self.name), origin,
            scalar=self.scalar, dims=self.dims, stateless=self.stateless,
        )

    @property
    def known(self) -> bool:
        return Place(PlaceKind(self.place), self.name).known


