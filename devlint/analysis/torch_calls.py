"""The meaning of torch calls for device facts: factories, module construction, moves,
tensor and module methods, and numpy conversions. The torch names come from torchapi."""

from __future__ import annotations

import sys
from dataclasses import replace

import libcst as cst

from devlint.analysis import dimensions
from devlint.analysis import facts as F
from devlint.analysis.call_arguments import (
    arguments,
    device_keyword,
    flat,
    keyword,
    keywords_unpacked,
    maybe_moved_module,
    only_arguments,
    wraps_what_it_is_given,
)
from devlint.analysis.class_facts import nn_owns_no_state
from devlint.analysis.evaluation import Arguments, Evaluation
from devlint.analysis.events import CpuArgumentOnDevice, NumpyOnDevice, Operand, OutgoingCall
from devlint.analysis.expressions import batch_value
from devlint.analysis.facts import CPU, DEFAULT_TYPE_DEVICE, MODULE_DEVICE, Kind, Origin, Place, PlaceKind, Value
from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.imported import ImportedClass, ImportedFunction
from devlint.analysis.naming import is_device_name
from devlint.analysis.opaque import escape, forget_modules
from devlint.analysis.placement import combine, write_into
from devlint.analysis.shapes import full_reduction
from devlint.analysis.usage import imports_other_tensors, no_tensor_parameters, own_members, tensor_parameters
from devlint.analysis.torchapi import (
    VALUE,
    converts_to_array,
    device_checked_arguments,
    function_results,
    CPU_REQUIRED_ARGUMENTS,
    CROSS_DEVICE_METHODS,
    NUMBER_ARGUMENT_METHODS,
    CPU_TENSOR_TYPES,
    CUDA_TENSOR_TYPES,
    DIMS_PRESERVING_FUNCTIONS,
    DIMS_PRESERVING_METHODS,
    DTYPES,
    INPUT_FOLLOWING,
    LIKE_FACTORIES,
    MEMORY_FORMATS,
    MODULE_CONTAINERS,
    MODULE_WRAPPERS,
    NO_TENSOR_CALLS,
    PER_INPUT_RESULTS,
    NON_TENSOR_METHODS,
    PARAMETER_CLASSES,
    PLOT_DATA_METHODS,
    PLOT_OBJECT,
    PLOT_OBJECT_FUNCTIONS,
    PLOT_OBJECT_METHODS,
    TENSOR_WRAPPERS,
    SCATTERING_WRAPPERS,
    SHAPE_ONLY_METHODS,
    SHAPE_TENSORS,
    TENSOR,
    TENSOR_METHODS,
    TENSOR_ONLY_MEMBERS,
    TENSORS,
    factory_placement,
    method_results,
    tensor_arguments,
    owns_no_state_by_default,
)
from devlint.analysis.torchapi.frameworks import LOADER_CLASSES, MOVE_HELPERS
from devlint.names import dotted_name
from devlint.tree import descendants

# Imported functions that only read a module they are given: it stays where it was.
_READ_ONLY_MODULES = ("logging.", "pprint.", "json.", "pickle.", "warnings.")
_READ_ONLY_CALLS = frozenset({"copy.copy", "copy.deepcopy", "builtins.print", "builtins.repr", "builtins.str"})
_TQDM = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm"})
# Places torch.* calls outside these namespaces take no part in.
_NOT_TENSOR_NAMESPACES = ("torch.cuda.", "torch.backends.", "torch.distributed.", "torch.utils.")
# Module methods that return the module itself.
_MODULE_RETURNING = frozenset({"train", "eval", "float", "double", "half", "bfloat16", "requires_grad_", "zero_grad", "apply", "share_memory"})
# A module's own tensors, where the module is: `parameters()`, `named_buffers()` (name, tensor) pairs.
_MODULE_TENSORS = frozenset({"parameters", "buffers", "named_parameters", "named_buffers"})
# A matplotlib Figure, SubFigure or Axes, or (what subscripting and iterating reach) an array of them.
_PLOT_OBJECT = Value(Kind.INSTANCE, cls=PLOT_OBJECT)
_PLOT_OBJECTS = Value(Kind.SEQ, elem=_PLOT_OBJECT, cls=PLOT_OBJECT)
_MOVES = frozenset({"to", "cuda", "cpu", "type", "type_as", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})


def _cast(run: Evaluation, node: cst.Call) -> Value:
    """`typing.cast(T, v)` returns `v` itself; where `T` is `nn.Module`, the code declares `v` one,
    so calling it runs a module on its inputs (`cast(nn.Module, self.forward_func)`)."""
    args = arguments(run, node)
    if len(args) != 2 or any(arg.keyword is not None or arg.star for arg in node.args):
        return F.UNKNOWN
    value = args[1][1]
    if value.kind is Kind.UNKNOWN and not value.weak and run.qualify(node.args[0].value) == "torch.nn.Module":
        return Value(Kind.MODULE, value.place if value.place.known else F.UNKNOWN_PLACE, value.origin)
    return value


def call_qualified(run: Evaluation, node: cst.Call, qualified: str) -> Value:
    """A call of an imported name: torch's, a framework's, or one the analysis cannot see."""
    settings = run.solver.settings
    if qualified == "torch.device":
        return _device(run, node)
    if qualified == "typing.cast":
        return _cast(run, node)
    if qualified in MODULE_WRAPPERS:
        args = arguments(run, node)
        if not args:
            return F.UNKNOWN
        leaf = qualified.rsplit(".", 1)[-1]
        return replace(args[0][1], cls=leaf) if leaf in SCATTERING_WRAPPERS else args[0][1]
    if qualified in LOADER_CLASSES or qualified.rsplit(".", 1)[-1] in settings.loaders:
        arguments(run, node)
        return Value(Kind.LOADER, elem=batch_value(run, run.source(node.func), node))
    if factory_placement(qualified) is not None:
        return factory(run, node, qualified)
    if qualified in CUDA_TENSOR_TYPES:
        arguments(run, node)
        return typed_tensor(run, node, Place(PlaceKind.ACCEL, "cuda"))
    if qualified in LIKE_FACTORIES:
        args = arguments(run, node)
        device = device_keyword(node)  # `device=None`: the input's device
        if device is not None:
            return Value(Kind.TENSOR, device_place(run, device.value), run.origin(node, f"created by `{qualified}`"))
        if keywords_unpacked(node):
            return Value(Kind.TENSOR)
        return args[0][1].at(args[0][1].place, kind=Kind.TENSOR, batch=None) if args else F.UNKNOWN
    if qualified in PLOT_OBJECT_FUNCTIONS:
        arguments(run, node)
        return F.tuple_of([_PLOT_OBJECT, _PLOT_OBJECTS]) if PLOT_OBJECT_FUNCTIONS[qualified] else _PLOT_OBJECTS
    if converts_to_array(qualified):
        args = arguments(run, node)
        positional = [value for value, arg in zip(args, node.args) if arg.keyword is None and not arg.star and not _assumed_inputs(run, arg.value)]
        numpy_check(run, node, positional, qualified.replace("numpy.", "np.").replace("matplotlib.pyplot.", "plt."))
        return F.SCALAR
    if qualified in TENSOR_WRAPPERS:
        args = arguments(run, node)
        return args[0][1] if args and node.args[0].keyword is None and not node.args[0].star else F.UNKNOWN
    if qualified in PARAMETER_CLASSES:
        args = arguments(run, node)
        return args[0][1].at(args[0][1].place, kind=Kind.TENSOR) if args else F.UNKNOWN
    if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.functional.") and qualified.rsplit(".", 1)[-1][:1].isupper():
        return construct_module(run, node, qualified)
    if qualified in _TQDM:
        args = arguments(run, node)
        return args[0][1] if args else F.UNKNOWN
    if qualified.startswith("torch.") and not qualified.startswith(_NOT_TENSOR_NAMESPACES):
        return _torch_function(run, node, qualified)
    if qualified in MOVE_HELPERS or qualified.rsplit(".", 1)[-1] in settings.move_helpers:
        return move_helper(run, node)
    imported = run.solver.imported
    if qualified in imported.classes and imported.classes[qualified].module:
        return _construct_imported(run, node, qualified, imported.classes[qualified])
    if qualified in imported.functions:
        return _call_imported(run, node, qualified, imported.functions[qualified])
    variable = imported.variables.get(qualified)
    if variable is not None and variable.fact.kind == Kind.TENSOR_TYPE.value:
        arguments(run, node)
        return typed_tensor(run, node, variable.fact.value(None).place)  # `settings.Tensor(n, 1)`
    args = arguments(run, node)
    _note_outgoing(run, node, qualified, args)
    if not qualified.startswith(_READ_ONLY_MODULES) and qualified not in _READ_ONLY_CALLS:
        forget_modules(run, args)
    if any(v.kind is Kind.LOADER for _, v in args) and any(_is_device_argument(run, expr, v) for expr, v in args):
        # `pl.MpDeviceLoader(loader, device)`, a `DeviceDataLoader(dl, device)`: yields moved batches.
        return Value(Kind.SEQ, elem=F.UNKNOWN)
    return F.UNKNOWN


def _note_outgoing(run: Evaluation, node: cst.Call, qualified: str, args: Arguments) -> None:
    """Tell the project what a call of a name from elsewhere passes, where it passes a tensor: a
    helper of another file takes its callers' devices from such calls. The standard library's
    functions take no tensors of ours to another file."""
    if qualified.split(".", 1)[0] in sys.stdlib_module_names or not any(value.kind is Kind.TENSOR for _, value in args):
        return
    if any(arg.star for arg in node.args):
        return  # what an unpacking fills is unknown
    positional = tuple(_tensor_or_none(value) for (_, value), arg in zip(args, node.args) if arg.keyword is None)
    keywords = tuple((arg.keyword.value, _tensor_or_none(value)) for (_, value), arg in zip(args, node.args) if arg.keyword is not None)
    run.solver.record(run.key, node, OutgoingCall(qualified, positional, keywords, node))


def _tensor_or_none(value: Value) -> Value | None:
    return value if value.kind is Kind.TENSOR else None


def _assumed_inputs(run: Evaluation, expr: cst.BaseExpression) -> bool:
    """Arithmetic on forward()'s inputs that only being passed to forward() makes tensors, none
    of them used as one in the body: `np.ceil(H / self.window_size)` with `H` a size in pixels."""
    func = run.func
    if func is None or not run.in_module_method or func.name != "forward":
        return False
    params = {p.name.value for p in func.params}
    used: set[str] = set()
    for part in descendants(expr):
        if type(part) is cst.Call:
            return False
        if type(part) is cst.Name and part.value in params:  # type: ignore[attr-defined]
            used.add(part.value)  # type: ignore[attr-defined]
    return bool(used) and not used & tensor_parameters(func, run.solver.program, run.solver.names)


def _construct_imported(run: Evaluation, node: cst.Call, qualified: str, cls: ImportedClass) -> Value:
    """`Net(...)` for a Module class of another file of the project: built where its
    constructor runs, the CPU, unless it is given a device (or a module that may be moved)."""
    args = arguments(run, node)
    leaf = qualified.rsplit(".", 1)[-1]
    wrapped = [value for _, value in args if value.kind is Kind.MODULE]
    if cls.scatters and wrapped:
        return replace(wrapped[0], cls=cls.scatters)  # where the wrapped model is, and scattering its inputs
    if cls.stateless:
        return Value(Kind.MODULE, F.NOWHERE, cls=leaf, stateless=True)
    if may_pass_device(run, node, args) or any(maybe_moved_module(value) for _, value in args) or wraps_what_it_is_given(cls.wraps, node, args):
        return Value(Kind.MODULE, cls=leaf)
    if cls.places_itself:
        return Value(Kind.MODULE, cls=leaf)  # where its constructor moved it
    if run.default_place != CPU:
        return Value(Kind.MODULE, run.default_place, run.origin(node, f"built by `{leaf}(...)`"), cls=leaf)
    return Value(Kind.MODULE, CPU, run.origin(node, f"built by `{leaf}(...)` ({cls.where}) on the CPU"), cls=leaf)


def _call_imported(run: Evaluation, node: cst.Call, qualified: str, function: ImportedFunction) -> Value:
    """A helper of another file of the project: what its summary says it returns, a result
    that follows one of its parameters taking the place of the argument passed there."""
    args = arguments(run, node)
    returns = function.returns
    leaf = qualified.rsplit(".", 1)[-1]
    if returns.place in ("follows", "device") and returns.name in function.params:
        passed = _passed(node, args, function.params, returns.name)
        if passed is None or not (passed.place.known or passed.place.kind is PlaceKind.FOLLOWS):
            return F.UNKNOWN if returns.place == "device" else Value(Kind(returns.kind)) if returns.kind == "tensor" else F.UNKNOWN
        return returns.value(None).at(passed.place, passed.origin, batch=passed.batch)
    if returns.place == "follows":
        return F.UNKNOWN  # follows an input of the helper's own we cannot see here
    if returns.place == "cpu" and run.default_place != CPU:
        return F.UNKNOWN  # its summary built it on the CPU default, which this program changed
    noun = {"tensor": "a tensor", "module": "a module"}.get(returns.kind, "a value")
    what = f"`{leaf}` ({function.where}) returns {noun} {returns.what}" if returns.what else f"returned by `{leaf}` ({function.where})"
    return returns.value(run.origin(node, what))


def _passed(node: cst.Call, args: Arguments, params: tuple[str, ...], name: str) -> Value | None:
    """The value passed for parameter `name`, by position or keyword."""
    position = params.index(name)
    index = 0
    for (_, value), arg in zip(args, node.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return value
        elif index == position:
            return value
        else:
            index += 1
    return None


def _device(run: Evaluation, node: cst.Call) -> Value:
    """`torch.device(...)`: a device value, "the device" unless its argument names one."""
    args = arguments(run, node)
    if not args:
        return F.UNKNOWN
    first = args[0][1]
    if len(args) >= 2 and first.kind is Kind.DEVICE:
        return Value(Kind.DEVICE, first.place if first.place.kind is PlaceKind.ACCEL else Place(PlaceKind.DEVICE))
    if first.kind is Kind.DEVICE:
        return first
    literal = string_value(args[0][0]) if isinstance(args[0][0], cst.BaseExpression) else None
    if literal is not None and device_type_of_string(literal) == "meta":
        # Shapes only: `with torch.device("meta"): model = Net()`, then loaded in place.
        return Value(Kind.DEVICE, F.UNKNOWN_PLACE)
    text = run.source(args[0][0])
    return Value(Kind.DEVICE, Place(PlaceKind.DEVICE, "" if "if" in text else text))


def shown_tensors(name: str, node: cst.Call, args: Arguments) -> Arguments:
    """Arguments passed where torch takes nothing but a tensor are tensors (a caller's, if their
    place follows a parameter)."""
    positions, names = tensor_arguments(name)
    if not positions and not names:
        return args
    out: Arguments = []
    index = 0
    for (expr, value), arg in zip(args, node.args):
        at = arg.keyword.value in names if arg.keyword is not None else (not arg.star and index in positions)
        if arg.keyword is None and not arg.star:
            index += 1
        if at and value.kind is Kind.UNKNOWN and not value.weak and value.batch is None:
            value = replace(value, kind=Kind.TENSOR)
        out.append((expr, value))
    return out


def _torch_function(run: Evaluation, node: cst.Call, qualified: str) -> Value:
    args = shown_tensors(qualified, node, arguments(run, node))
    if qualified in NO_TENSOR_CALLS:
        return F.UNKNOWN
    if qualified.startswith("torch.nn.modules.utils."):
        return F.SCALAR  # `_pair(kernel_size)`: a tuple of ints
    if qualified in SHAPE_TENSORS:
        return Value(Kind.TENSOR, CPU, scalar=True)  # a shape, always on the CPU, used as sizes
    if qualified in CPU_REQUIRED_ARGUMENTS:
        _check_cpu_argument(run, node, qualified, args)
    keep = device_checked_arguments(qualified)
    if keep is not None:
        # Arguments PyTorch wants on the CPU whatever the device (RNN lengths, CTC targets).
        args = only_arguments(args, node, keep)
    result = combine(run, node, flat(args))  # `torch.allclose(cuda, cpu)` raises, though it gives a bool
    if qualified in PER_INPUT_RESULTS and result.kind is Kind.TENSOR:
        inputs = _per_input(node, args)
        if inputs is not None:
            return F.tuple_of([value.at(result.place, kind=Kind.TENSOR) for value in inputs])
    if function_results(qualified) == {VALUE}:
        return F.SCALAR  # numbers, a dtype, a tuple of sizes (`_calculate_fan_in_and_fan_out(w)`)
    if result.kind is Kind.UNKNOWN and result.place.kind is PlaceKind.FOLLOWS:
        result = replace(result, kind=Kind.TENSOR)
    if result.kind is Kind.TENSOR and args:
        dims = 0 if full_reduction(node) else _function_dims(qualified, args)
        if dims is not None:
            result = replace(result, dims=dims, scalar=result.scalar or dims == 0)
    return result


def _per_input(node: cst.Call, args: Arguments) -> list[Value] | None:
    """The inputs of `torch.meshgrid(y, x)` or `torch.meshgrid([y, x])`, in order; None where an
    unpacking or keyword hides them."""
    if any(arg.star or arg.keyword is not None for arg in node.args):
        return None
    values = [value for _, value in args]
    if len(values) == 1 and values[0].kind is Kind.SEQ:
        return list(values[0].items) if values[0].items is not None else None
    return values if all(value.kind is Kind.TENSOR for value in values) else None


def _check_cpu_argument(run: Evaluation, node: cst.Call, qualified: str, args: Arguments) -> None:
    """A tensor this function computed on the device, passed where PyTorch requires the CPU.

    A parameter passed on as it came is not reported: callers hand `lengths` on the CPU as
    documented, whatever the analysis assumes of a module's inputs. What the function computes
    from a device tensor (`(xs != 0).sum(1)`, `torch.clamp(batch["lengths"], min=1)`) is where
    that tensor is.
    """
    position, keyword = CPU_REQUIRED_ARGUMENTS[qualified]
    found = [
        (expr, value)
        for index, ((expr, value), arg) in enumerate(zip(args, node.args))
        if (arg.keyword.value if arg.keyword else index) in (position, keyword)
    ]
    if not found:
        return
    expr, value = found[0]
    if value.kind is not Kind.TENSOR or value.weak or not value.place.on_accelerator or value.place in run.cpu_places:
        return
    if isinstance(expr, cst.Name) and run.func is not None and any(p.name.value == expr.value for p in run.func.params) and value.origin is None:
        return
    run.solver.record(run.key, node, CpuArgumentOnDevice(node, Operand(expr, value), keyword, qualified.rsplit(".", 1)[-1]))


def _function_dims(qualified: str, args: Arguments) -> int | None:
    first = args[0][1]
    if qualified in DIMS_PRESERVING_FUNCTIONS:
        return first.dims
    if qualified in ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack") and first.kind is Kind.SEQ:
        elements = first.items or first.parts or ((first.elem,) if first.elem is not None else ())
        known = next((e.dims for e in elements if e.dims is not None), None)
        if known is not None:
            return known + 1 if qualified == "torch.stack" else known
    return None


def typed_tensor(run: Evaluation, node: cst.Call, place: Place) -> Value:
    """`Tensor(n, 1)` for a legacy typed-tensor class: a new tensor where the class allocates."""
    what = f"created by `{' '.join(run.source(node.func).split())}(...)`"
    if place == CPU:
        return Value(Kind.TENSOR, CPU, run.origin(node, what + " on the CPU", factory=True))
    return Value(Kind.TENSOR, place, run.origin(node, what))


def may_pass_device(run: Evaluation, node: cst.Call, args: Arguments) -> bool:
    """A constructor given a device (`Net(cfg, device)`, `dev=...`), a value computed from one
    (`use_gpu=device.startswith("cuda")`), or keywords we cannot see (`**cfg`)."""
    if keywords_unpacked(node) or any(value.kind is Kind.DEVICE for _, value in args):
        return True
    settings = run.solver.settings
    if any(arg.keyword is not None and is_device_name(arg.keyword.value, settings) and not _none(arg.value) for arg in node.args):
        return True
    return any(value.kind not in (Kind.TENSOR, Kind.MODULE) and _computed_from_a_device(run, expr) for expr, value in args)


def _computed_from_a_device(run: Evaluation, expr: cst.CSTNode) -> bool:
    """An argument that reads the chosen device: a flag such as `device.startswith("cuda")` or
    `device.type == "cuda"` tells the constructor where to put its state, which it then does
    itself (LPIPS's `PerceptualLoss(use_gpu=...)` moves its network to the GPU; torchreid's
    models, built with `use_gpu=device.startswith("cuda")`, move their tensors with `.cuda()`)."""
    settings = run.solver.settings
    for part in descendants(expr):
        if type(part) is cst.Name:
            value = run.lookup(part.value)  # type: ignore[attr-defined]
            if value is not None and value.kind is Kind.DEVICE:
                return True
        elif type(part) is cst.Attribute and is_device_name(part.attr.value, settings):  # type: ignore[attr-defined]
            return True
    return False


def _none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _is_device_argument(run: Evaluation, expr: cst.CSTNode, value: Value) -> bool:
    name = dotted_name(expr) if isinstance(expr, cst.BaseExpression) else None
    return value.kind is Kind.DEVICE or name is not None and is_device_name(name.rsplit(".", 1)[-1], run.solver.settings)


def device_place(run: Evaluation, expr: cst.BaseExpression) -> Place:
    """The device an expression passed as `device=` (or to `.to()`) names."""
    value = run.eval(expr)
    if value.kind is Kind.DEVICE:
        return value.place
    if value.kind is Kind.TENSOR and value.place.known:
        return value.place
    text = dotted_name(expr)
    if text is not None and is_device_name(text.rsplit(".", 1)[-1], run.solver.settings):
        return Place(PlaceKind.DEVICE, text)
    return F.UNKNOWN_PLACE


def default_type_place(run: Evaluation, node: cst.Call) -> Place | None:
    """Where factories put their tensors after `torch.set_default_tensor_type(T)`: a CUDA type
    makes them CUDA tensors (the call raises where CUDA is not), a CPU type CPU ones. A CPU type
    set after a CUDA one on another path (`if cuda: ... else: set(torch.FloatTensor)`) leaves the
    place where the program set the CUDA type; None: not such a call."""
    if run.qualify(node.func) != "torch.set_default_tensor_type" or not node.args:
        return None
    arg = node.args[0].value
    named = run.qualify(arg) or string_value(arg) or ""
    if named in CUDA_TENSOR_TYPES or named.startswith("torch.cuda."):
        return DEFAULT_TYPE_DEVICE
    if named in CPU_TENSOR_TYPES:
        return run.default_place if run.default_place == DEFAULT_TYPE_DEVICE else CPU
    return None


def move_helper(run: Evaluation, node: cst.Call) -> Value:
    """A configured (or framework) helper that moves its argument to the device it is given."""
    args = arguments(run, node)
    device_args = [value for _, value in args if value.kind is Kind.DEVICE]
    if device_args:
        return Value(Kind.UNKNOWN, device_args[0].place, run.origin(node, "moved"))
    return F.UNKNOWN


def factory(run: Evaluation, node: cst.Call, qualified: str) -> Value:
    args = arguments(run, node)
    device = device_keyword(node)
    if device is not None:
        return Value(Kind.TENSOR, device_place(run, device.value), run.origin(node, f"created by `{qualified}`"))
    if keywords_unpacked(node):
        return Value(Kind.TENSOR)
    if qualified in INPUT_FOLLOWING:
        tensors = [v for _, v in args if v.kind is Kind.TENSOR]
        if tensors:
            return tensors[0].at(tensors[0].place)
    if run.default_place != CPU and factory_placement(qualified) == "default":
        return Value(Kind.TENSOR, run.default_place, run.origin(node, f"created by `{qualified}`"))
    if run.default_place == DEFAULT_TYPE_DEVICE and qualified == "torch.Tensor":
        # The legacy constructor makes the default tensor type, which the default device does not set.
        return Value(Kind.TENSOR, run.default_place, run.origin(node, f"created by `{qualified}`"))
    dims = dimensions.of_factory(qualified, node, args)
    in_module = run.cls.name if run.in_module_method and run.cls is not None else ""
    return Value(
        Kind.TENSOR,
        CPU,
        run.origin(node, f"created by `{qualified}` without `device=`", factory=True),
        scalar=dims == 0,
        in_module=in_module,
        dims=dims,
    )


def construct_module(run: Evaluation, node: cst.Call, qualified: str) -> Value:
    leaf = qualified.rsplit(".", 1)[-1]
    value = _construct_module(run, node, leaf)
    checked = device_checked_arguments(leaf)
    return value if checked is None else replace(value, checked=checked)


def _construct_module(run: Evaluation, node: cst.Call, leaf: str) -> Value:
    args = arguments(run, node)
    wrapped = [value for _, value in args if value.kind is Kind.MODULE]
    if leaf in MODULE_CONTAINERS:
        children = [(value.elem or F.UNKNOWN) if value.kind is Kind.SEQ else value for _, value in args]  # `*layers` comes as its elements
        if children and all(child.stateless for child in children):
            return Value(Kind.MODULE, F.NOWHERE, cls=leaf, stateless=True)
        if not all(child.stateless or child.kind is Kind.MODULE and child.place == CPU for child in children):
            return Value(Kind.MODULE, cls=leaf)  # `nn.Sequential(*layers)`: where its layers are
    elif wrapped:
        # DistributedDataParallel(model), DataParallel(model): where the wrapped model is.
        return replace(wrapped[0], cls=leaf)
    tensors = [value for _, value in args if value.kind is Kind.TENSOR and value.place.known]
    if tensors:
        # A loss built with a CPU class-weight tensor keeps it on the CPU.
        place = tensors[0].place
        expr = next(expr for expr, value in args if value is tensors[0])
        text = " ".join(run.source(expr).split())
        return Value(Kind.MODULE, place, run.origin(node, f"built with the tensor `{text}`"), cls=leaf)
    if owns_no_state_by_default(leaf):
        # An unweighted loss or an activation has nothing to move: it stays placeless
        # through `.to()` and registration. A loss with weights of unknown place is only unknown.
        if nn_owns_no_state(leaf, node):
            return Value(Kind.MODULE, F.NOWHERE, cls=leaf, stateless=True)  # joins as the identity: `[Linear, ReLU]`
        return Value(Kind.MODULE, cls=leaf)
    # `nn.Linear(3, 4, device=device)`: the factory keywords every built-in layer takes.
    device = device_keyword(node)
    if device is not None:
        return Value(Kind.MODULE, device_place(run, device.value), run.origin(node, f"built by `{leaf}(...)`"), cls=leaf)
    if may_pass_device(run, node, args):
        return Value(Kind.MODULE, cls=leaf)
    if run.default_place != CPU:  # `with torch.device("cuda"):` builds its parameters there
        return Value(Kind.MODULE, run.default_place, run.origin(node, f"built by `{leaf}(...)`"), cls=leaf)
    return Value(Kind.MODULE, CPU, run.origin(node, f"built by `{leaf}(...)` on the CPU"), cls=leaf)


# -- methods ----------------------------------------------------------------------------------------
def _plot_method(run: Evaluation, node: cst.Call, func: cst.Attribute, args: Arguments) -> Value:
    """`ax.imshow(x)`, `fig.add_subplot(...)`: a method of a matplotlib object."""
    method = func.attr.value
    if method in PLOT_OBJECT_METHODS:
        return _PLOT_OBJECTS
    if method in PLOT_DATA_METHODS:
        positional = [value for value, arg in zip(args, node.args) if arg.keyword is None and not arg.star and not _assumed_inputs(run, arg.value)]
        numpy_check(run, node, positional, f"{run.source(func.value)}.{method}" if len(run.source(func.value)) <= 20 else f".{method}")
    return F.UNKNOWN


def call_on(run: Evaluation, node: cst.Call, func: cst.Attribute, receiver: Value) -> Value:
    """`receiver.method(...)` where the receiver is a tensor, a module, a batch, a sequence, or unknown."""
    method = func.attr.value
    if method in _MOVES:
        return move(run, node, method, receiver)
    args = arguments(run, node)
    if receiver.cls == PLOT_OBJECT:
        return _plot_method(run, node, func, args)
    if method == "numpy":
        # Only a tensor has `.numpy()` among the objects it could be confused with, unless the
        # file imports TensorFlow, whose tensors have it too (transformers' TF processors).
        shown = replace(receiver, kind=Kind.TENSOR) if receiver.kind is Kind.UNKNOWN and not receiver.weak and not imports_other_tensors(run.solver.names) else receiver
        numpy_check(run, node, [(func.value, shown)], ".numpy()")
        return F.SCALAR
    if receiver.kind is Kind.SEQ:
        if method == "items":
            return Value(Kind.SEQ, elem=F.tuple_of([F.UNKNOWN, receiver.elem or F.UNKNOWN]))
        if method in ("values", "pop", "get"):
            return receiver.elem or F.UNKNOWN
        return receiver if method == "copy" else F.UNKNOWN
    if receiver.batch is not None:
        if method in NON_TENSOR_METHODS or method == "keys":
            return F.SCALAR
        if method == "items":
            return Value(Kind.SEQ, elem=F.tuple_of([F.UNKNOWN, replace(receiver, part=True)]))
        if method in ("values", "get", "pop"):
            return replace(receiver, part=True)
        return receiver if method not in SHAPE_ONLY_METHODS else F.SCALAR
    if (
        receiver.kind is Kind.UNKNOWN
        and method in _MODULE_TENSORS
        and receiver.place.known
        and not any(method in info.methods for info in run.solver.program.by_key.values())
    ):
        # Only a module has `.parameters()` among what `model` could be: `model.to(device)` moved it.
        receiver = replace(receiver, kind=Kind.MODULE, weak=False)
    if receiver.kind is Kind.MODULE:
        if method in _MODULE_RETURNING:
            return receiver
        return module_tensors(method, receiver.place, receiver.origin)
    # Only a tensor has `x.unsqueeze`, `x.detach`, `x.masked_fill`: the receiver is one.
    shown = receiver.kind is Kind.UNKNOWN and method in TENSOR_ONLY_MEMBERS and not receiver.weak and method not in own_members(run.solver.program)
    if shown and not (receiver.place.kind is PlaceKind.FOLLOWS and _no_tensor(run, receiver.place.name)):
        receiver = replace(receiver, kind=Kind.TENSOR)
    if receiver.kind is Kind.TENSOR or (
        receiver.kind is Kind.UNKNOWN
        and receiver.place.kind is PlaceKind.FOLLOWS
        and method in TENSOR_METHODS
        and method not in NON_TENSOR_METHODS
        and not _no_tensor(run, receiver.place.name)
    ):
        results = method_results(method)
        if method in NON_TENSOR_METHODS or method in SHAPE_ONLY_METHODS:
            return F.SCALAR
        if method in CROSS_DEVICE_METHODS:
            return receiver.at(receiver.place, kind=Kind.TENSOR, scalar=False)
        if receiver.kind is Kind.TENSOR:
            args = shown_tensors(method, node, args)
        if method in NUMBER_ARGUMENT_METHODS:
            args = []  # `x.expand(n, max_len)`: a tensor passed is read as a number, on any device
        if method.endswith("_") and not method.startswith("_"):
            write_into(run, node, Operand(func.value, receiver), flat(args))
        result = combine(run, node, [(func.value, receiver), *flat(args)])
        if receiver.kind is Kind.TENSOR and results == {TENSORS} and result.place == receiver.place:
            # `x.split(n)`, `x.chunk(2)`, `x.topk(k)`: tensors on x's device.
            return Value(Kind.SEQ, elem=Value(Kind.TENSOR, receiver.place, receiver.origin))
        if receiver.kind is Kind.TENSOR and results == {TENSOR} and result.kind is Kind.UNKNOWN and result.place == receiver.place:
            result = replace(result, kind=Kind.TENSOR)
        if result.kind is Kind.TENSOR and method in DIMS_PRESERVING_METHODS and receiver.dims is not None:
            result = replace(result, dims=receiver.dims, scalar=result.scalar or receiver.dims == 0)
        if result.kind is Kind.TENSOR and full_reduction(node):
            result = replace(result, dims=0, scalar=True)  # `t.sum()`: one number, as a 0-dim tensor
        if result.kind is Kind.TENSOR and result.place == receiver.place:
            scalar = result.scalar if result.dims is not None else receiver.scalar and result.scalar
            return replace(result, origin=receiver.origin, in_module=receiver.in_module, scalar=scalar)
        return result
    if method in ("item", "tolist", "size", "dim", "numel"):
        # `x.size()` and `x.tolist()` are sequences (`torch.tensor(x.size())` is 1-D).
        return Value(Kind.SEQ, elem=F.SCALAR) if method in ("size", "tolist") and not node.args else F.SCALAR
    if receiver.kind is Kind.LOADER:
        return F.UNKNOWN
    if receiver.kind is Kind.UNKNOWN and receiver.place.known and method not in NON_TENSOR_METHODS:
        return receiver.at(receiver.place, weak=True)
    escape(run, node, args)
    return F.UNKNOWN


def _no_tensor(run: Evaluation, parameter: str) -> bool:
    """A parameter of this function the body also uses with a member no tensor has."""
    return run.func is not None and parameter in no_tensor_parameters(run.func, run.solver.program, run.solver.names)


def module_tensors(method: str, place: Place, origin: Origin | None) -> Value:
    """What a module's method gives of its tensors (UNKNOWN for any other method)."""
    if method not in _MODULE_TENSORS:
        return F.UNKNOWN
    tensor = Value(Kind.TENSOR, place, origin)
    return Value(Kind.SEQ, elem=F.tuple_of([F.SCALAR, tensor]) if method.startswith("named_") else tensor)


def move(run: Evaluation, node: cst.Call, method: str, receiver: Value) -> Value:
    args = arguments(run, node)
    if receiver.stateless:
        return receiver  # `nn.CrossEntropyLoss().to(device)`: nothing moved, nowhere to be
    if method == "cpu":
        place, what = CPU, "moved to the CPU by `.cpu()`"
    elif method == "cuda":
        place, what = Place(PlaceKind.ACCEL, "cuda"), "moved by `.cuda()`"
    elif method == "type":
        if not args:
            # `x.type()`: the type's name, which names `x`'s device too ("torch.cuda.FloatTensor").
            # A module's `.type()` takes a type: without one, the receiver is a tensor.
            return Value(Kind.SCALAR, receiver.place, scalar=True) if receiver.kind in (Kind.TENSOR, Kind.UNKNOWN) else F.SCALAR
        place, what = _type_target(run, args[0], receiver), "converted by `.type()`"
        if place == receiver.place and receiver.origin is not None:
            return receiver
    elif method == "type_as":
        place, what = (args[0][1].place if args else F.UNKNOWN_PLACE), "placed by `.type_as()`"
    elif method.startswith("new_"):
        device = keyword(node, "device")
        place = device_place(run, device.value) if device is not None else receiver.place
        return Value(Kind.TENSOR, place, run.origin(node, f"created by `.{method}()`"), in_module=receiver.in_module)
    else:
        place, what = _to_target(run, node, args, receiver), "moved by `.to()`"
        if place == receiver.place and receiver.origin is not None:
            if place == CPU and _names_a_device(run, node, args):
                # `.to(device)` with `device = batch.device`: the code placed it where its data
                # is; that this is the CPU is only the analysis's guess about the data.
                return replace(receiver, origin=replace(run.origin(node, what), moved=True))
            return receiver
    dims = receiver.dims  # a move or a conversion keeps the shape
    kind = receiver.kind if receiver.kind in (Kind.TENSOR, Kind.MODULE, Kind.INSTANCE) else (Kind.TENSOR if receiver.batch is not None else Kind.UNKNOWN)
    classes = run.solver.program.classes
    if receiver.kind is Kind.INSTANCE and receiver.cls in classes and classes[receiver.cls].is_module:
        kind = Kind.MODULE
    # `.to(dtype=...)` keeps the place: a conversion, not a move the code chose.
    origin = replace(run.origin(node, what), moved=method in ("cuda", "cpu") or place != receiver.place)
    return Value(
        kind, place, origin, cls=receiver.cls, elem=receiver.elem if receiver.kind is Kind.SEQ else None, dims=dims, scalar=dims == 0, checked=receiver.checked
    )


def _type_target(run: Evaluation, arg: tuple[cst.CSTNode, Value], receiver: Value) -> Place:
    """Where `.type(T)` puts the tensor: a CUDA type moves it to the GPU, a CPU type to the CPU
    (`x.type(torch.FloatTensor)` copies a CUDA tensor back), a dtype keeps it where it is."""
    expr, value = arg
    if value.kind is Kind.TENSOR_TYPE:
        return value.place
    text = string_value(expr) if isinstance(expr, cst.BaseExpression) else None
    if text is not None:
        return Place(PlaceKind.ACCEL, "cuda") if text.startswith("torch.cuda.") else CPU
    if value.kind is Kind.SCALAR and value.place.kind is not PlaceKind.UNKNOWN:
        return value.place  # `x.type(y.type())`, directly or through a parameter: `y`'s type name
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "type" and not expr.args:
        return F.UNKNOWN_PLACE  # the type name of a tensor placed nowhere known: names its device too (SadTalker)
    if value.kind is Kind.SCALAR or isinstance(expr, cst.Attribute) and expr.attr.value == "dtype":
        return receiver.place  # a dtype (`y.dtype`)
    return F.UNKNOWN_PLACE


def _names_a_device(run: Evaluation, node: cst.Call, args: Arguments) -> bool:
    """`.to(device)`, `.to(x.device)`, `.to(device=d)`: a device chosen by a variable, no literal."""
    device = keyword(node, "device")
    expr = device.value if device is not None else next((e for (e, _), arg in zip(args, node.args) if arg.keyword is None), None)
    if expr is None or string_value(expr) is not None:
        return False
    value = next((v for (e, v) in args if e is expr), F.UNKNOWN)
    return value.kind in (Kind.DEVICE, Kind.TENSOR) or isinstance(expr, cst.Attribute) and expr.attr.value == "device"


def converts_dtype_only(run: Evaluation, node: cst.Call) -> bool:
    """`t.to(torch.float16)`, `t.to(x.dtype)`, `t.to(dtype=...)`: a conversion that keeps the
    tensor's device (`Tensor.to(dtype, ...)`), so its result left unused moves nothing."""
    if keyword(node, "device") is not None or any(arg.star for arg in node.args):
        return False
    positional = [arg.value for arg in node.args if arg.keyword is None]
    if not positional:
        return keyword(node, "dtype") is not None
    first = positional[0]
    if isinstance(first, cst.Attribute) and first.attr.value == "dtype":
        return True
    return isinstance(first, (cst.Name, cst.Attribute)) and run.qualify(first) in DTYPES or _dtype_parameter(run, first)


def _dtype_parameter(run: Evaluation, expr: cst.BaseExpression) -> bool:
    """A parameter of the function that defaults to a dtype or is annotated as one
    (lit-llama's `def get_weight(self, dtype=torch.float)`), still holding what the caller
    passed: `Tensor.to(dtype)` converts, and keeps the device."""
    func = run.func
    if func is None or not isinstance(expr, cst.Name):
        return False
    held = run.lookup(expr.value)
    if held is not None and held.kind in (Kind.DEVICE, Kind.TENSOR, Kind.TENSOR_TYPE):
        return False  # rebound to a device (`dtype = x.device`), or a tensor's place to follow
    for param in func.params:
        if param.name.value != expr.value:
            continue
        if param.default is not None and isinstance(param.default, (cst.Name, cst.Attribute)) and run.qualify(param.default) in DTYPES:
            return True
        annotation = param.annotation.annotation if param.annotation is not None else None
        return isinstance(annotation, (cst.Name, cst.Attribute)) and run.qualify(annotation) == "torch.dtype"
    return False


def _to_target(run: Evaluation, node: cst.Call, args: Arguments, receiver: Value) -> Place:
    device = keyword(node, "device")
    if device is not None:
        return device_place(run, device.value)
    positional = [(expr, value) for (expr, value), arg in zip(args, node.args) if arg.keyword is None]
    if not positional:
        return receiver.place  # .to(dtype=...), .to(memory_format=...)
    expr, value = positional[0]
    if value.kind in (Kind.DEVICE, Kind.TENSOR):
        return value.place
    if isinstance(expr, (cst.Name, cst.Attribute)) and run.qualify(expr) in DTYPES | MEMORY_FORMATS or _dtype_parameter(run, expr):
        return receiver.place
    text = dotted_name(expr) if isinstance(expr, cst.BaseExpression) else None
    if text is not None and is_device_name(text.rsplit(".", 1)[-1], run.solver.settings):
        return Place(PlaceKind.DEVICE, text)
    return F.UNKNOWN_PLACE


def numpy_check(run: Evaluation, node: cst.Call, args: Arguments, via: str) -> None:
    """A tensor that may be on an accelerator handed to numpy."""
    for expr, value in args:
        candidate = value
        # numpy reads what iterating a collection yields: a mapping's keys, not its values.
        collection = value.kind is Kind.SEQ and F.iterated(value) is not None
        if collection:
            candidate = F.iterated(value)  # type: ignore[assignment]
        caller_placed = candidate.kind is Kind.TENSOR and candidate.place.kind is PlaceKind.FOLLOWS and not candidate.weak
        if caller_placed or candidate.kind in (Kind.TENSOR, Kind.UNKNOWN) and candidate.place.on_accelerator and candidate.place not in run.cpu_places:
            if candidate.kind is Kind.UNKNOWN and candidate.origin is None and not candidate.weak:
                continue
            if run.constructing and candidate.place == MODULE_DEVICE:
                continue  # the module's state while `__init__` builds it: nothing has moved it yet
            if candidate.kind is Kind.UNKNOWN and candidate.weak and via != ".numpy()":
                # Only a tensor has `.numpy()`; what an opaque object's method returns to
                # `np.asarray` may already be an array (kornia's `Image.to_numpy()`).
                continue
            seen = replace(candidate, kind=Kind.SEQ) if collection else candidate
            run.solver.record(run.key, node, NumpyOnDevice(node, Operand(expr, seen), via))  # type: ignore[arg-type]
