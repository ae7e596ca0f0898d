"""Writes devlint/analysis/torchapi/generated.py: the torch vocabulary, read from torch itself.

    .venv/bin/python tools/gen_torch_api.py            # rewrite the module
    .venv/bin/python tools/gen_torch_api.py --check    # exit 1 if it would change

The static analysis never imports torch, so what it knows about torch is
data, and this script is where that data comes from: it introspects the
installed (pinned) torch, and numpy, pandas and Pillow for the names that
tell a tensor apart from the other array-like objects of a program:

- the members of `torch.Tensor` (methods, and attributes, with which of them
  are tensors on the same device), of `nn.Module`, of `numpy.ndarray`, of
  pandas' frames and series, of PIL images, of optimizers and of the
  builtin containers; from these, the members only a tensor has and those
  only a module has;
- what each tensor method and each `torch.*` / `torch.nn.functional.*`
  function returns, from the ATen operator schemas (`Tensor`, a tuple or
  list of tensors, or a plain value) and, where no schema exists, from the
  function's annotations or from calling the method on a small tensor;
- the factories: `torch.*` functions that create a tensor from no tensor
  and take `device=`, and where each puts its result when not given one
  (called under `torch.set_default_device("meta")`: on the default device,
  or always on the CPU as `torch.from_numpy` and the legacy typed
  constructors do);
- dtypes, memory formats and layouts;
- the `torch.nn` module classes: which take `device=`, and which own no
  parameters and no buffers when built with their defaults;
- the `torch.cuda` and `torch.accelerator` calls that raise on a machine
  without CUDA (called here, on the CPU build of torch: the generator is
  meant to run on a CPU-only build, which is what that machine has), and
  the availability checks;
- the classes no tensor is an instance of (numpy's arrays and scalars,
  pandas' objects, PIL images, the builtin numbers, strings and containers),
  for what `isinstance(x, C)` tells about `x`.

The test suite regenerates the module when the same versions are installed
and fails on any difference (tests/test_torch_api.py).
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import importlib
import inspect
import io
import re
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy
import pandas
import PIL
import PIL.Image
import torch

OUT = Path(__file__).resolve().parent.parent / "devlint" / "analysis" / "torchapi" / "generated.py"

TENSOR = "tensor"  # one tensor, on the device of its tensor inputs
TENSORS = "tensors"  # a tuple or list of tensors
VALUE = "value"  # a Python value, a numpy array, None: no device to track


def _public(names: object) -> list[str]:
    return sorted(name for name in names if not name.startswith("_"))  # type: ignore[attr-defined]


# -- results from ATen schemas --------------------------------------------------------------
def _return_kind(schema: torch._C.FunctionSchema) -> str:
    returns = schema.returns
    if not returns:
        return VALUE
    kinds = {_type_kind(str(r.type)) for r in returns}
    if len(returns) > 1:
        return TENSORS if kinds == {TENSOR} else VALUE
    return kinds.pop()


def _type_kind(text: str) -> str:
    if text in ("Tensor", "Optional[Tensor]"):
        return TENSOR
    if text in ("List[Tensor]", "List[Optional[Tensor]]"):
        return TENSORS
    return VALUE


def _tensor_overload(schema: torch._C.FunctionSchema) -> bool:
    """An overload on tensors (or a factory), not one of TorchScript's list, str or number builtins."""
    return any(str(a.type) in ("Tensor", "Optional[Tensor]", "List[Tensor]") or a.name == "device" for a in schema.arguments)


def _schemas() -> dict[str, list[torch._C.FunctionSchema]]:
    by_name: dict[str, list[torch._C.FunctionSchema]] = defaultdict(list)
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::") and not schema.overload_name.endswith("out"):
            by_name[schema.name[6:]].append(schema)
    return by_name


def _has_tensor_argument(schema: torch._C.FunctionSchema) -> bool:
    return any("Tensor" in str(a.type) for a in schema.arguments)


def _annotation_kind(func: object) -> str | None:
    try:
        hints = getattr(func, "__annotations__", {}) or {}
    except Exception:  # noqa: BLE001 - a C function without annotations
        return None
    result = hints.get("return")
    if result is None:
        return None
    text = result if isinstance(result, str) else getattr(result, "__name__", str(result))
    text = str(text).replace("torch.", "")
    if text in ("Tensor",):
        return TENSOR
    if re.fullmatch(r"(Tuple|tuple|List|list)\[Tensor.*\]", text):
        return TENSORS
    if text in ("int", "float", "bool", "str", "None", "NoneType", "List[int]", "list[int]", "Size"):
        return VALUE
    return None


def _sample_call_kind(method: str) -> str | None:
    """What `torch.ones(2, 2).<method>()` returns, for methods without a schema."""
    if method in ("backward", "register_hook", "share_memory_", "pin_memory", "apply_", "map_", "map2_", "resize_", "set_"):
        return None
    sample = torch.ones(2, 2)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            result = getattr(sample, method)()
    except Exception:  # noqa: BLE001 - needs arguments, or cannot run on this tensor
        return None
    return _value_kind(result)


def _value_kind(result: object) -> str:
    if isinstance(result, torch.Tensor):
        return TENSOR
    if isinstance(result, (tuple, list)) and result and all(isinstance(r, torch.Tensor) for r in result):
        return TENSORS
    return VALUE


def tensor_members() -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """Methods, attributes, tensor-valued attributes, and each method's result kind."""
    methods, attributes = [], []
    for name in _public(dir(torch.Tensor)):
        member = inspect.getattr_static(torch.Tensor, name)
        if callable(member) and not isinstance(member, property):
            methods.append(name)
        else:
            attributes.append(name)
    samples = [torch.ones(2, 2, requires_grad=True), torch.ones(2, dtype=torch.complex64)]
    samples[0].grad = torch.zeros(2, 2)
    tensor_valued = []
    for name in attributes:
        for sample in samples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    value = getattr(sample, name)
                except Exception:  # noqa: BLE001 - not defined for this sample
                    continue
            if isinstance(value, torch.Tensor):
                tensor_valued.append(name)
                break
    schemas = _schemas()
    results: dict[str, str] = {}
    for name in methods:
        kinds = {
            _return_kind(s) for s in schemas.get(name, ()) if s.arguments and s.arguments[0].name == "self" and str(s.arguments[0].type) == "Tensor"
        }
        if not kinds:
            kind = _annotation_kind(getattr(torch.Tensor, name)) or _sample_call_kind(name)
            if kind is not None:
                kinds = {kind}
        if kinds:
            results[name] = "|".join(sorted(kinds))
    return methods, attributes, sorted(set(tensor_valued)), results


def function_results(namespace: object, prefix: str) -> dict[str, str]:
    """`torch.X` / `torch.nn.functional.X` callables and what they return."""
    schemas = _schemas()
    results: dict[str, str] = {}
    for name in _public(dir(namespace)):
        func = getattr(namespace, name)
        if inspect.isclass(func) or inspect.ismodule(func) or not callable(func):
            continue
        kinds = {_return_kind(s) for s in schemas.get(name, ()) if _tensor_overload(s)}
        if not kinds:
            kind = _annotation_kind(func)
            if kind is not None:
                kinds = {kind}
        if kinds:
            results[f"{prefix}.{name}"] = "|".join(sorted(kinds))
    return results


def init_results() -> dict[str, str]:
    """`torch.nn.init.*` called on a weight-shaped tensor, and what each returns: the in-place
    initialisers give the tensor back, the helpers numbers (`_calculate_fan_in_and_fan_out`, which
    many projects' own initialisers call, private as it is)."""
    results: dict[str, str] = {}
    for name in sorted(dir(torch.nn.init)):
        func = getattr(torch.nn.init, name)
        if name.startswith("__") or inspect.isclass(func) or inspect.ismodule(func) or not callable(func):
            continue
        if getattr(func, "__module__", None) != "torch.nn.init":
            continue  # imported helpers (`_no_grad_*` aside, they are its own)
        try:
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                result = func(torch.empty(3, 4))
        except Exception:  # noqa: BLE001 - needs other arguments
            continue
        results[f"torch.nn.init.{name}"] = _value_kind(result)
    return results


# -- arguments that must be tensors -------------------------------------------------------------------
def tensor_arguments(namespace: object, prefix: str, schemas: dict[str, list[torch._C.FunctionSchema]], method: bool) -> dict[str, str]:
    """For each function (or method, without `self`): the arguments every overload types as a
    Tensor, by position and by name, "0,2|input,index". Passing anything else there raises, so
    what is passed there is a tensor."""
    found: dict[str, str] = {}
    for name in _public(dir(namespace)):
        func = getattr(namespace, name, None)
        if func is None or not callable(func) or inspect.isclass(func):
            continue
        overloads = [s for s in schemas.get(name, ()) if _tensor_overload(s)]
        if method:
            overloads = [s for s in overloads if s.arguments and s.arguments[0].name == "self" and str(s.arguments[0].type) == "Tensor"]
        signatures: list[list[tuple[str, bool]]] = []
        for schema in overloads:
            arguments = [a for a in schema.arguments if not a.kwarg_only][1 if method else 0 :]
            signatures.append([(a.name, str(a.type) == "Tensor") for a in arguments])
        if not signatures:
            signatures = _annotated_signature(func, method)
        if not signatures:
            continue
        positions = [i for i in range(min(len(sig) for sig in signatures)) if all(sig[i][1] for sig in signatures)]
        named = {n for sig in signatures for n, tensor in sig if tensor}
        named = {n for n in named if all(tensor for sig in signatures for m, tensor in sig if m == n)}
        if positions or named:
            found[f"{prefix}.{name}"] = ",".join(map(str, positions)) + "|" + ",".join(sorted(named))
    return found


def number_argument_methods(methods: list[str], schemas: dict[str, list[torch._C.FunctionSchema]]) -> list[str]:
    """Tensor methods that take arguments, none of which any overload types as a tensor
    (`expand(size)`, `view(size)`, `repeat(repeats)`, `topk(k)`): a tensor passed there is read
    as a number (`__index__`, a 0-dim item), so it meets no device."""
    found = []
    for name in methods:
        overloads = [s for s in schemas.get(name, ()) if s.arguments and s.arguments[0].name == "self" and str(s.arguments[0].type) == "Tensor"]
        if not overloads or not any(len(s.arguments) > 1 for s in overloads):
            continue
        if all(not _has_tensor_argument_besides_self(s) for s in overloads):
            found.append(name)
    return found


def number_constants() -> list[str]:
    """Module-level numbers of torch, math and numpy (`torch.pi`, `math.e`, `numpy.inf`):
    `torch.tensor(2.0 / torch.pi)` holds one number, a 0-dim tensor."""
    import math

    return sorted(
        f"{module.__name__}.{name}"
        for module in (torch, math, numpy)
        for name in dir(module)
        if not name.startswith("_") and type(getattr(module, name)) in (int, float)
    )


def cpu_only_methods(methods: list[str]) -> list[str]:
    """Tensor methods whose documentation says they work on CPU tensors only (`apply_`): a
    tensor they ran on without raising is on the CPU."""
    said = re.compile(r"only works? (?:with|on|for) CPU tensors", re.IGNORECASE)
    return [name for name in methods if said.search(" ".join((getattr(getattr(torch.Tensor, name), "__doc__", None) or "").split()))]


def _has_tensor_argument_besides_self(schema: torch._C.FunctionSchema) -> bool:
    return any("Tensor" in str(a.type) or "Storage" in str(a.type) for a in schema.arguments[1:])


def _annotated_signature(func: object, method: bool) -> list[list[tuple[str, bool]]]:
    """A Python function's parameters and whether each is annotated `Tensor` (not Optional)."""
    try:
        params = list(inspect.signature(func).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
    if method:
        params = params[1:]
    out = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        annotation = p.annotation
        out.append((p.name, annotation is torch.Tensor or annotation == "Tensor"))
    return [out] if out else []


# -- shapes ------------------------------------------------------------------------------------
def dims_preserving(namespace: object, names: list[str], method: bool) -> list[str]:
    """Callables whose result has as many dimensions as their tensor input: `x.sqrt()`,
    `x.float()`, `x.cumsum(0)`, `torch.exp(x)`, `x.masked_fill(m, 0)`. Tried on a (2, 1, 3) tensor,
    whose size-1 dimension catches `squeeze`, with no argument, the dimension 0, or the tensor itself."""
    found = []
    for name in names:
        if name in ("resize_", "set_", "share_memory_", "backward", "register_hook", "apply_", "map_", "map2_", "pin_memory", "requires_grad_", "retain_grad"):
            continue
        func = getattr(namespace, name, None)
        if func is None or not callable(func):
            continue
        for extra in ((), (0,), ("sample",)):
            sample = torch.rand(2, 1, 3)
            args = tuple(sample.clone() if a == "sample" else a for a in extra)
            try:
                with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                    warnings.simplefilter("ignore")
                    result = getattr(sample, name)(*args) if method else func(sample, *args)
            except Exception:  # noqa: BLE001 - not with these arguments
                continue
            if isinstance(result, torch.Tensor) and result.dim() == 3:
                found.append(name)
            break
    return sorted(found)


# -- factories ---------------------------------------------------------------------------------
_TRIAL_ARGUMENTS: tuple[tuple[tuple[object, ...], dict[str, object]], ...] = (
    ((2,), {}),
    ((2, 2), {}),
    ((0, 2), {}),
    (([1.0],), {}),
    ((numpy.zeros(2),), {}),
    ((bytearray(8),), {"dtype": torch.uint8}),
    (((2,), 1.0), {}),
    ((0.0, 1.0, (2,)), {}),
    ((2, 2, 2), {}),
    ((2, (2,)), {}),
    ((0, 2, (2,)), {}),
    ((2, 2, 0), {}),
    (((2,), (0,)), {}),
    (([[0]], [1.0], (1,)), {}),
)


def factories(schemas: dict[str, list[torch._C.FunctionSchema]]) -> tuple[dict[str, str], list[str]]:
    """`torch.X` that creates a tensor from no tensor, and where it puts it when not told:
    "default" (the default device) or "cpu" (always the CPU: the legacy typed constructors,
    `torch.from_numpy`, and the few factories `torch.set_default_device` does not reach).
    Also: which of them take `device=`."""
    candidates = set()
    for name, overloads in schemas.items():
        if name.startswith("_") or not hasattr(torch, name):
            continue
        if any("device" in [a.name for a in s.arguments] and not _has_tensor_argument(s) for s in overloads):
            candidates.add(name)
    # Constructors without a schema: the data converters and the legacy typed tensors.
    for name in _public(dir(torch)):
        value = getattr(torch, name)
        if name.endswith("Tensor") and inspect.isclass(value):
            candidates.add(name)
        elif name in ("from_numpy", "frombuffer", "asarray"):
            candidates.add(name)
    placed: dict[str, str] = {}
    with_device = sorted(f"torch.{name}" for name in candidates if any("device" in [a.name for a in s.arguments] for s in schemas.get(name, ())))
    for name in sorted(candidates):
        func = getattr(torch, name)
        device = _placement(func)
        if device == "meta":
            placed[f"torch.{name}"] = "default"
        elif device == "cpu":
            placed[f"torch.{name}"] = "cpu"
        else:
            print(f"note: no trial call of torch.{name} made a tensor; it is left out of FACTORIES", file=sys.stderr)
    return placed, [name for name in with_device if name in placed]


def _placement(func: object) -> str | None:
    """Where `func` puts its result while the default device is `meta`."""
    torch.set_default_device("meta")
    try:
        for args, kwargs in _TRIAL_ARGUMENTS:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = func(*args, **kwargs)  # type: ignore[operator]
            except Exception:  # noqa: BLE001 - these arguments do not fit; try the next
                continue
            if isinstance(result, torch.Tensor):
                return result.device.type
        return None
    finally:
        torch.set_default_device(None)


def like_factories(schemas: dict[str, list[torch._C.FunctionSchema]]) -> list[str]:
    """`torch.X_like(t)`: on `t`'s device unless given `device=`."""
    return sorted(
        f"torch.{name}"
        for name, overloads in schemas.items()
        if name.endswith("_like") and hasattr(torch, name) and any("device" in [a.name for a in s.arguments] for s in overloads)
    )


# -- nn modules --------------------------------------------------------------------------------
def nn_modules() -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """torch.nn classes: all, those taking `device=`, those owning no state when built with their
    defaults (containers and wrappers excluded: their state is their children's), and for those,
    the constructor arguments that give them state when set (`affine=True`, `weight=w`)."""
    names, with_device, stateless = [], [], []
    state_arguments: dict[str, str] = {}
    for name in _public(dir(torch.nn)):
        cls = getattr(torch.nn, name)
        if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module)) or cls is torch.nn.Module:
            continue
        names.append(name)
        try:
            params = inspect.signature(cls.__init__).parameters
        except (TypeError, ValueError):
            params = {}
        if "device" in params:
            with_device.append(name)
        if _holds_modules(cls):
            continue
        module = _build(cls, params)
        if module is not None and _owns_nothing(module):
            stateless.append(name)
            adding = [p for p in params if p != "self" and _build(cls, params, {p: _STATEFUL_VALUE[type(params[p].default)]}) is not None
                      and not _owns_nothing(_build(cls, params, {p: _STATEFUL_VALUE[type(params[p].default)]}))] if params else []
            if adding:
                positions = [p for p in params if p != "self"]
                state_arguments[name] = ",".join(f"{p}:{positions.index(p)}" for p in adding)
    return names, with_device, stateless, state_arguments


_STATEFUL_VALUE: defaultdict[type, object] = defaultdict(lambda: torch.ones(2), {bool: True})


def module_methods_returning_self() -> list[str]:
    """nn.Module methods that return the module itself (`model.eval().to(device)` moves `model`),
    as torch annotates them (`-> Self`), each confirmed by a call on a small module where it
    needs no argument."""
    import typing

    found = []
    for name in _public(dir(torch.nn.Module)):
        method = getattr(torch.nn.Module, name)
        try:
            signature = inspect.signature(method)
        except (TypeError, ValueError):
            continue
        overloads = typing.get_overloads(method)
        if overloads:
            # `to(device)`, `to(dtype)`, `to(tensor)`: each overload annotated, the implementation not.
            if not all(inspect.signature(overload).return_annotation is typing.Self for overload in overloads):
                continue
            module = torch.nn.Linear(2, 2)
            assert getattr(module, name)(torch.float32) is module, name
            found.append(name)
            continue
        if signature.return_annotation is not typing.Self:
            continue
        required = [p for p in list(signature.parameters.values())[1:] if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if not required and name not in ("cuda", "ipu", "xpu", "mtia"):
            module = torch.nn.Linear(2, 2)
            assert getattr(module, name)() is module, name
        found.append(name)
    return found


def _owns_nothing(module: torch.nn.Module) -> bool:
    return not list(module.parameters()) and not list(module.buffers()) and not list(module.children())


def module_classes() -> list[str]:
    """Every nn.Module subclass torch.nn defines, private bases included (`_Loss`, `_ConvNd`), by name;
    the wrappers of torch.nn.parallel (`DataParallel`, `DistributedDataParallel`) too."""
    import pkgutil

    found = set()
    infos = [*pkgutil.walk_packages(torch.nn.modules.__path__, "torch.nn.modules."), *pkgutil.walk_packages(torch.nn.parallel.__path__, "torch.nn.parallel.")]
    for info in infos:
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - an optional backend's module
            continue
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, torch.nn.Module) and value.__module__.startswith("torch.nn"):
                found.add(name)
    return sorted(found)


def _holds_modules(cls: type) -> bool:
    """Containers (`Sequential`, `ModuleList`, `ParameterDict`: indexable, iterable) and wrappers
    (`DataParallel(module)`): their state is whatever they are given."""
    if any(hasattr(cls, name) for name in ("__getitem__", "__iter__")):
        return True
    try:
        params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] in ("module", "modules")


def _build(cls: type, params: object, extra: dict[str, object] | None = None) -> torch.nn.Module | None:
    required = [
        p for p in getattr(params, "values", lambda: [])()
        if p.name != "self" and p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    for value in (2, 1, (2, 2)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cls(*[value] * len(required), **(extra or {}))  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - needs other arguments
            continue
    return None


# -- CUDA and accelerator calls ------------------------------------------------------------------
def raising_calls(namespace: object, prefix: str) -> tuple[list[str], list[str]]:
    """Public callables of `namespace` that raise on this CPU-only build, and those that do not.

    Each is called with no argument, else with the device index 0; a class is
    instantiated, and entered if it is a context manager. Calls that need other
    arguments are left out of both lists: nothing is known of them.
    """
    raising, safe = [], []
    for name in _public(dir(namespace)):
        value = getattr(namespace, name)
        if inspect.ismodule(value) or not callable(value) or name in ("classproperty", "lru_cache", "cast"):
            continue
        if inspect.isclass(value) and issubclass(value, BaseException):
            continue
        if getattr(value, "__module__", "") and not str(getattr(value, "__module__", "")).startswith("torch"):
            continue  # typing helpers and re-exported standard library names
        outcome = _try_call(value)
        if outcome is True:
            raising.append(f"{prefix}.{name}")
        elif outcome is False:
            safe.append(f"{prefix}.{name}")
    return raising, safe


_CUDA_ERROR = re.compile(r"CUDA|cuda|compiled|accelerator|nvidia|driver|dummy base class|no attribute '_cuda", re.I)


def _try_call(value: object) -> bool | None:
    """True: raises without CUDA; False: returns; None: unknown (needs other arguments). A call
    that raises for device 0 but not for the CPU device or a CPU tensor (`torch.cuda.device(d)`,
    `device_of(t)`) depends on its argument: unknown too."""
    for args in ((), (0,)):
        outcome = _outcome(value, args)
        if outcome == "needs arguments":
            continue
        if outcome is True and args and any(_outcome(value, (cpu,)) is False for cpu in (torch.device("cpu"), torch.zeros(1))):
            return None
        return outcome  # type: ignore[return-value]
    return None


def _outcome(value: object, args: tuple[object, ...]) -> bool | str | None:
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            result = value(*args)  # type: ignore[operator]
            if inspect.isclass(value) and hasattr(result, "__enter__"):
                with result:
                    pass
    except TypeError as error:
        if "argument" in str(error) and not _CUDA_ERROR.search(str(error)):
            return "needs arguments"
        return True
    except Exception as error:  # noqa: BLE001 - whatever it raises, it raises without CUDA
        return True if _CUDA_ERROR.search(f"{type(error).__name__} {error}") else None
    return False


def availability_checks() -> list[str]:
    found = []
    for module_name in ("torch.cuda", "torch.backends.mps", "torch.xpu", "torch.mps", "torch.accelerator", "torch.mtia", "torch.backends.cudnn"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in ("is_available", "is_built", "device_count", "is_initialized"):
            if callable(getattr(module, name, None)):
                found.append(f"{module_name}.{name}")
    return sorted(found)


def member_names(*types: object) -> list[str]:
    names: set[str] = set()
    for kind in types:
        names.update(_public(dir(kind)))
    return sorted(names)


def non_tensor_classes() -> list[str]:
    """Classes whose instances are never tensors: numpy's arrays and scalars, pandas' frames, series
    and indexes, PIL images, and the builtin numbers, strings and containers (`builtins.list`)."""
    found: dict[str, type] = {
        "PIL.Image.Image": PIL.Image.Image,
        "pandas.DataFrame": pandas.DataFrame,
        "pandas.Series": pandas.Series,
        "pandas.Index": pandas.Index,
    }
    for name in _public(dir(numpy)):
        value = getattr(numpy, name)
        if inspect.isclass(value) and issubclass(value, (numpy.ndarray, numpy.generic)):
            found[f"numpy.{name}"] = value
    for name in ("bool", "int", "float", "complex", "str", "bytes", "list", "tuple", "dict", "set", "frozenset"):
        found[f"builtins.{name}"] = getattr(builtins, name)
    assert not any(issubclass(kind, torch.Tensor) for kind in found.values())
    return sorted(found)


# -- writing ----------------------------------------------------------------------------------------
def generate() -> str:
    schemas = _schemas()
    methods, attributes, tensor_valued, method_results = tensor_members()
    module_members = member_names(torch.nn.Module)
    others = member_names(
        numpy.ndarray, numpy.generic, pandas.DataFrame, pandas.Series, pandas.Index, PIL.Image.Image,
        *(getattr(builtins, n) for n in ("list", "dict", "set", "frozenset", "tuple", "str", "bytes", "int", "float", "complex")),
    )
    optimizer_members = member_names(torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler, torch.amp.GradScaler)
    tensor_names = set(methods) | set(attributes)
    tensor_only = sorted(tensor_names - set(module_members) - set(others))
    module_only = sorted(set(module_members) - tensor_names - set(others) - set(optimizer_members))
    torch_results = function_results(torch, "torch")
    functional_results = function_results(torch.nn.functional, "torch.nn.functional")
    module_names, module_with_device, stateless_modules, state_arguments = nn_modules()
    factory_places, factories_with_device = factories(schemas)
    cuda_raising, cuda_safe = raising_calls(torch.cuda, "torch.cuda")
    accel_raising, accel_safe = raising_calls(torch.accelerator, "torch.accelerator")
    dtypes = sorted(f"torch.{n}" for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype))
    formats = sorted(f"torch.{n}" for n in dir(torch) if isinstance(getattr(torch, n), torch.memory_format))
    layouts = sorted(f"torch.{n}" for n in dir(torch) if isinstance(getattr(torch, n), torch.layout))
    cuda_types = sorted(f"torch.cuda.{n}" for n in dir(torch.cuda) if n.endswith("Tensor") and inspect.isclass(getattr(torch.cuda, n)))

    out = io.StringIO()
    w = out.write
    w('"""The torch vocabulary the device analysis reads, generated from torch itself.\n\n')
    w("Generated by tools/gen_torch_api.py; do not edit by hand: run the script.\n")
    w('"""\n\n# fmt: off\n')
    w(f"TORCH_VERSION = {torch.__version__.split('+')[0]!r}\n")
    w(f"NUMPY_VERSION = {numpy.__version__!r}\nPANDAS_VERSION = {pandas.__version__!r}\nPILLOW_VERSION = {PIL.__version__!r}\n\n")

    def names(title: str, comment: str, values: list[str]) -> None:
        w(f"# {comment}\n{title} = frozenset({{\n")
        for value in values:
            w(f"    {value!r},\n")
        w("})\n\n")

    def table(title: str, comment: str, values: dict[str, str]) -> None:
        w(f"# {comment}\n{title} = {{\n")
        for key in sorted(values):
            w(f"    {key!r}: {values[key]!r},\n")
        w("}\n\n")

    names("TENSOR_METHODS", "Public methods of torch.Tensor.", methods)
    names("TENSOR_ATTRIBUTES", "Public non-method attributes of torch.Tensor.", attributes)
    names("TENSOR_VALUED_ATTRIBUTES", "Attributes that are themselves tensors on the tensor's device.", tensor_valued)
    table("TENSOR_METHOD_RESULTS", 'What each method returns: "tensor", "tensors" (tuple or list), "value", or several joined by "|".', method_results)
    names("MODULE_MEMBERS", "Public members of torch.nn.Module.", module_members)
    names("TENSOR_ONLY_MEMBERS", "Members of a tensor that no nn.Module, ndarray, pandas object, PIL image or builtin container has: using one shows a tensor.", tensor_only)
    names("MODULE_ONLY_MEMBERS", "Members of an nn.Module that no tensor, ndarray, pandas object, optimizer, scheduler or builtin has: using one shows a module.", module_only)
    table("TORCH_FUNCTION_RESULTS", "torch.* callables and what they return (as TENSOR_METHOD_RESULTS).", torch_results)
    table("FUNCTIONAL_RESULTS", "torch.nn.functional.* and what they return.", functional_results)
    table("INIT_RESULTS", "torch.nn.init.* called on a weight, private helpers included, and what they return.", init_results())
    table("FACTORIES", 'torch.* calls that create a tensor from no tensor, and where it goes without device=: "default" (the default device) or "cpu".', factory_places)
    names("FACTORIES_WITH_DEVICE", "Factories that take device=.", factories_with_device)
    names("LIKE_FACTORIES", "torch.*_like(t): on t's device unless given device=.", like_factories(schemas))
    names("DTYPES", "torch dtypes.", dtypes)
    names("MEMORY_FORMATS", "torch memory formats.", formats)
    table("TENSOR_ARGUMENTS", "Arguments every overload types as a Tensor: positions|names.", {
        **tensor_arguments(torch, "torch", schemas, method=False),
        **tensor_arguments(torch.nn.functional, "torch.nn.functional", schemas, method=False),
        **{k.replace("Tensor.", ""): v for k, v in tensor_arguments(torch.Tensor, "Tensor", schemas, method=True).items()},
    })
    names("NUMBER_ARGUMENT_METHODS", "Tensor methods whose arguments no overload types as a tensor: a tensor passed is read as a number.", number_argument_methods(methods, schemas))
    names("NUMBER_CONSTANTS", "Module-level numbers of torch, math and numpy.", number_constants())
    names("CPU_ONLY_METHODS", "Tensor methods documented to work on CPU tensors only: a tensor they ran on is on the CPU.", cpu_only_methods(methods))
    names("DIMS_PRESERVING_METHODS", "Tensor methods whose result has the dimensions of the tensor.", dims_preserving(torch.Tensor, methods, method=True))
    names("DIMS_PRESERVING_FUNCTIONS", "torch.* functions whose result has the dimensions of their first tensor.", [f"torch.{n}" for n in dims_preserving(torch, sorted(n[6:] for n in torch_results), method=False)])
    names("LAYOUTS", "torch layouts.", layouts)
    names("NN_MODULES", "torch.nn module classes.", module_names)
    names("NN_MODULE_CLASSES", "Every nn.Module subclass defined in torch.nn, private bases (`_Loss`) included.", module_classes())
    names("NN_MODULES_WITH_DEVICE", "torch.nn module classes whose constructor takes device=.", module_with_device)
    names("MODULE_METHODS_RETURNING_SELF", "nn.Module methods that return the module itself.", module_methods_returning_self())
    names("NN_STATELESS_MODULES", "torch.nn module classes that own no parameter, buffer or submodule when built with their defaults.", stateless_modules)
    table("NN_STATE_ARGUMENTS", "Constructor arguments that give a stateless module state when set: name:position, comma-separated.", state_arguments)
    names("CUDA_TENSOR_TYPES", "Legacy typed CUDA tensor constructors.", cuda_types)
    names("CUDA_RAISING_CALLS", "torch.cuda calls that raise on a machine without CUDA (called on a CPU-only build).", cuda_raising)
    names("CUDA_SAFE_CALLS", "torch.cuda calls that return normally without CUDA.", cuda_safe)
    names("ACCELERATOR_RAISING_CALLS", "torch.accelerator calls that raise without an accelerator.", accel_raising)
    names("ACCELERATOR_SAFE_CALLS", "torch.accelerator calls that return normally without an accelerator.", accel_safe)
    names("AVAILABILITY_CHECKS", "Calls that tell whether an accelerator is present.", availability_checks())
    names("NON_TENSOR_CLASSES", "Classes no tensor is an instance of: what `isinstance(x, C)` tells about `x`.", non_tensor_classes())
    return out.getvalue().rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the module would change")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if torch.cuda.is_available():
        # The CUDA tables record what raises without CUDA: only a CPU-only build can tell.
        print("run this on a CPU-only build of torch (the pinned test set-up)", file=sys.stderr)
        return 2
    text = generate()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date: run tools/gen_torch_api.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
