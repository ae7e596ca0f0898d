"""What the device analysis knows about torch: generated data, and the few facts torch cannot tell.

`generated.py` is read from torch itself (tools/gen_torch_api.py). The rest of
this module holds documented PyTorch behaviours that introspection cannot
see, each with the reason it holds; frameworks built on torch keep their
conventions in `frameworks.py`. The analysis core asks the questions below
and never lists torch names of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from devlint.analysis.torchapi import generated as _data

# -- device types ------------------------------------------------------------------------------
# What a device string may name ("cuda:1" -> "cuda"). `meta` holds shapes only: no data to mix.
ACCELERATOR_TYPES = frozenset({"cuda", "mps", "xpu", "hpu", "npu", "mtia", "xla", "privateuseone"})
CPU_TYPES = frozenset({"cpu", "meta"})

# Their truth says an accelerator is present: code under them may use one.
AVAILABILITY_CALLS = _data.AVAILABILITY_CHECKS
# Values that are empty (false) until CUDA is there and initialised: `torch.cuda.default_generators`
# is `()` on a machine without CUDA, one generator per GPU once CUDA starts.
AVAILABILITY_VALUES = frozenset({"torch.cuda.default_generators"})

# -- creating tensors -------------------------------------------------------------------------
FACTORIES: dict[str, str] = _data.FACTORIES
FACTORIES_WITH_DEVICE = _data.FACTORIES_WITH_DEVICE
LIKE_FACTORIES = _data.LIKE_FACTORIES
CUDA_TENSOR_TYPES = _data.CUDA_TENSOR_TYPES
# "If data is a tensor, the device of data is used" (torch.tensor, torch.as_tensor and
# torch.asarray documentation): given a tensor, they follow it.
INPUT_FOLLOWING = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray"})
# Factories that build from data that may already be on the device (rather than from sizes).
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.from_numpy", "torch.frombuffer"})


def factory_placement(qualified: str) -> str | None:
    """Where `qualified(...)` puts its tensor when not given `device=`: "default" or "cpu"."""
    return FACTORIES.get(qualified)


def takes_device(qualified: str) -> bool:
    return qualified in FACTORIES_WITH_DEVICE


# -- what is not a tensor ----------------------------------------------------------------------
# `isinstance(x, C)` with one of these (numpy's arrays and scalars, PIL images, pandas' objects,
# builtins as `builtins.list`) is true only where `x` is no tensor.
NON_TENSOR_CLASSES = _data.NON_TENSOR_CLASSES
# Of them, the containers: what they hold is not known.
CONTAINER_CLASSES = frozenset({"builtins.list", "builtins.tuple", "builtins.dict", "builtins.set", "builtins.frozenset"})

# -- dtypes and what `.to()` can be told -------------------------------------------------------
DTYPES = _data.DTYPES
DIMS_PRESERVING_METHODS = _data.DIMS_PRESERVING_METHODS
DIMS_PRESERVING_FUNCTIONS = _data.DIMS_PRESERVING_FUNCTIONS
MEMORY_FORMATS = _data.MEMORY_FORMATS
# torch.FloatTensor & co. as a `.type()` argument: CPU types.
CPU_TENSOR_TYPES = frozenset(name for name, place in FACTORIES.items() if place == "cpu" and name.endswith("Tensor"))

# -- tensors, by what they have -----------------------------------------------------------------
TENSOR_VALUED_ATTRIBUTES = _data.TENSOR_VALUED_ATTRIBUTES  # x.T, x.data, x.grad: on x's device
TENSOR_ATTRIBUTES = _data.TENSOR_ATTRIBUTES
TENSOR_METHODS = _data.TENSOR_METHODS
TENSOR_ONLY_MEMBERS = _data.TENSOR_ONLY_MEMBERS
MODULE_ONLY_MEMBERS = _data.MODULE_ONLY_MEMBERS
MODULE_MEMBERS = _data.MODULE_MEMBERS

TENSOR, TENSORS, VALUE = "tensor", "tensors", "value"


def _kinds(text: str | None) -> frozenset[str]:
    return frozenset(text.split("|")) if text else frozenset()


def method_results(method: str) -> frozenset[str]:
    """What `tensor.<method>(...)` may return: {"tensor"}, {"tensors"}, {"value"}, several, or none known."""
    return _kinds(_data.TENSOR_METHOD_RESULTS.get(method))


def function_results(qualified: str) -> frozenset[str]:
    """What `torch.<name>(...)`, `torch.nn.functional.<name>(...)` or `torch.nn.init.<name>(...)` may return."""
    return _kinds(_data.TORCH_FUNCTION_RESULTS.get(qualified) or _data.FUNCTIONAL_RESULTS.get(qualified) or _data.INIT_RESULTS.get(qualified))


def tensor_arguments(name: str) -> tuple[frozenset[int], frozenset[str]]:
    """Where `name` (`torch.index_select`, a tensor method `gather`) takes nothing but a tensor:
    positions (counting after `self` for methods) and keyword names."""
    entry = _data.TENSOR_ARGUMENTS.get(name)
    if entry is None:
        return frozenset(), frozenset()
    positions, _, names = entry.partition("|")
    return frozenset(int(p) for p in positions.split(",") if p), frozenset(n for n in names.split(",") if n)


# Methods whose result is never a tensor (`item`, `tolist`, `size`, `dim`, `is_contiguous`).
NON_TENSOR_METHODS = frozenset(m for m, kinds in _data.TENSOR_METHOD_RESULTS.items() if kinds == VALUE)
# Methods that only read sizes: `x.size(0)`, `x.numel()`.
SHAPE_ONLY_METHODS = frozenset({"size", "dim", "numel", "nelement", "ndimension"})

# Tensor methods whose arguments no overload types as a tensor (`expand`, `view`, `repeat`,
# `topk`'s k): a tensor passed there is read as a number, so it meets no device.
NUMBER_ARGUMENT_METHODS = _data.NUMBER_ARGUMENT_METHODS
CPU_ONLY_METHODS = _data.CPU_ONLY_METHODS
NUMBER_CONSTANTS = _data.NUMBER_CONSTANTS

# Tensor methods that legitimately take an argument on another device: copies between
# devices (`copy_`, `set_`), 0-dim fill values (`fill_`), shape-only templates
# (`expand_as`, `view_as`, `reshape_as`), conversions (`to`, `type_as`, `new_tensor`),
# and advanced-index writes, whose CPU indices PyTorch moves (`index_put_`).
CROSS_DEVICE_METHODS = frozenset(
    {"copy_", "fill_", "set_", "expand_as", "view_as", "reshape_as", "type_as", "index_put_", "index_put", "to", "new_tensor"}
)

# Arguments that take part in device checks, by position or keyword; the others must (or
# may) stay on the CPU: sequence lengths (pack_padded_sequence documents `lengths` "must be
# on the CPU"), CTC targets and lengths.
CPU_ARGUMENTS: dict[str, frozenset[int | str]] = {
    "torch.nn.utils.rnn.pack_padded_sequence": frozenset({0, "input"}),
    "torch.nn.functional.ctc_loss": frozenset({0, "log_probs"}),
    "torch.ctc_loss": frozenset({0, "log_probs"}),
}
# Modules whose `forward` hands its leading arguments, in order, to one functional: calling the
# module checks devices as that function does. `nn.CTCLoss.forward(log_probs, targets,
# input_lengths, target_lengths)` returns `F.ctc_loss(...)` of them, which copies the lengths to
# the CPU itself (LossCTC.cpp: `input_lengths.to(Device(at::kCPU), at::kLong)`; cuDNN wants them
# there) and moves the targets to `log_probs`' device.
MODULE_FUNCTIONALS: dict[str, str] = {"CTCLoss": "torch.nn.functional.ctc_loss"}


def device_checked_arguments(qualified: str) -> frozenset[int | str] | None:
    """The positions and keywords of `qualified` (a function, or a torch.nn class's leaf name for a
    call of such a module) whose tensors must share a device; None when all of them must."""
    return CPU_ARGUMENTS.get(MODULE_FUNCTIONALS.get(qualified, qualified))


# Arguments PyTorch requires on the CPU, as (position, keyword): a tensor on an accelerator there
# raises. `pack_padded_sequence` documents `lengths` "must be on the CPU if provided as a tensor"
# (since PyTorch 1.7).
CPU_REQUIRED_ARGUMENTS: dict[str, tuple[int, str]] = {
    "torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths"),
}
# `torch._shape_as_tensor(x)` is x's shape as a CPU tensor, used as sizes (ONNX export).
SHAPE_TENSORS = frozenset({"torch.onnx.operators.shape_as_tensor", "torch._shape_as_tensor"})
# Functions that return one tensor per tensor input, each made from its own input
# (`y, x = torch.meshgrid(y, x)`): a CPU input's result is that input's doing.
PER_INPUT_RESULTS = frozenset({"torch.meshgrid", "torch.broadcast_tensors", "torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d"})
# Calls that return nothing a device can be read from.
NO_TENSOR_CALLS = frozenset({"torch.load", "torch.save", "torch.manual_seed", "torch.is_tensor", "torch.numel", "torch.set_default_device"})

# Libraries whose functions read array-likes through numpy (`np.asarray`, `__array__`): a tensor
# in accelerator memory raises TypeError there ("can't convert cuda:0 device type tensor to
# numpy"), in `np.isinf(grad_norm)` as in `sklearn.metrics.f1_score(y, pred)` or `plt.imshow(x)`.
ARRAY_LIBRARIES = ("numpy.", "scipy.", "sklearn.", "matplotlib.pyplot.")
# matplotlib's objects: pyplot's figure and axes functions, and the Figure and SubFigure methods
# that add axes or subfigures, return a Figure, a SubFigure, an Axes, or a numpy array of them
# (`plt.subplots(2, 3)`, `fig.subfigures(2, 1)`); `plt.subplots` returns `(figure, axes)`.
PLOT_OBJECT_FUNCTIONS: dict[str, bool] = {  # -> whether it returns a (figure, axes) pair
    "matplotlib.pyplot.subplots": True,
    "matplotlib.pyplot.figure": False,
    "matplotlib.pyplot.gcf": False,
    "matplotlib.pyplot.gca": False,
    "matplotlib.pyplot.subplot": False,
    "matplotlib.pyplot.axes": False,
    "matplotlib.pyplot.subplot2grid": False,
    "matplotlib.figure.Figure": False,
}
PLOT_OBJECT = "<matplotlib>"  # the `cls` the analysis gives these objects and arrays of them
# Attributes that hold them: a Figure's list of axes, an array's flat iterator and transpose.
PLOT_OBJECT_ATTRIBUTES = frozenset({"axes", "flat", "T"})
PLOT_OBJECT_METHODS = frozenset(
    {"subplots", "add_subplot", "subfigures", "add_subfigure", "add_axes", "gca", "twinx", "twiny", "inset_axes",
     "flatten", "ravel", "reshape"}  # the last three: of a numpy array of axes
)  # fmt: skip
# The Axes methods that read their positional data arguments through numpy (`np.asarray`, as
# `plt.imshow` does, which calls them): a CUDA tensor raises TypeError there.
PLOT_DATA_METHODS = frozenset(
    {"imshow", "matshow", "plot", "scatter", "hist", "hist2d", "bar", "barh", "errorbar", "fill_between",
     "fill_betweenx", "fill", "step", "stem", "stackplot", "boxplot", "violinplot", "pcolor", "pcolormesh", "contour",
     "contourf", "hexbin", "quiver", "semilogx", "semilogy", "loglog", "pie", "eventplot"}
)  # fmt: skip
# What looks at an object without converting it (`np.ndim` reads `.ndim`), or takes no data.
_LOOKS_WITHOUT_CONVERTING = frozenset(
    f"numpy.{name}"
    for name in (
        "isscalar", "ndim", "shape", "size", "iterable", "result_type", "dtype", "issubdtype", "set_printoptions",
        "printoptions", "seterr", "errstate", "random.seed", "random.default_rng", "random.RandomState", "random.get_state",
        "random.set_state", "random.randint", "random.rand", "random.randn", "random.random", "random.uniform",
    )
)  # fmt: skip


def converts_to_array(qualified: str) -> bool:
    """Does this function of an array library convert its positional arguments with numpy?"""
    return qualified.startswith(ARRAY_LIBRARIES) and qualified not in _LOOKS_WITHOUT_CONVERTING


# -- loading and saving --------------------------------------------------------------------------
LOAD_FUNCTIONS = frozenset({"torch.load", "torch.serialization.load"})
SAVE_FUNCTIONS = frozenset({"torch.save", "torch.serialization.save"})
# They call torch.load on a downloaded file and take `map_location` the same way.
DOWNLOAD_LOADS = frozenset({"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"})

# -- CUDA runtime calls ----------------------------------------------------------------------------
CUDA_RAISING_CALLS = _data.CUDA_RAISING_CALLS | _data.ACCELERATOR_RAISING_CALLS

# -- modules ---------------------------------------------------------------------------------------
NN_MODULES = _data.NN_MODULES
NN_MODULES_WITH_DEVICE = _data.NN_MODULES_WITH_DEVICE


def is_torch_module_class(qualified: str) -> bool:
    """`torch.nn.Linear`, `torch.nn.modules.loss._Loss`: a class torch.nn defines as a Module."""
    return qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] in _data.NN_MODULE_CLASSES
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# nn.Module methods that return the module itself: `model.eval().to(device)` moves `model` in place.
# Most of them are tensor methods too (`float`, `cuda`), which give a tensor a new tensor.
MODULE_METHODS_RETURNING_SELF = _data.MODULE_METHODS_RETURNING_SELF
# Since PyTorch 0.4 `Variable(t)` returns the tensor `t` itself (a no-op kept for old code).
TENSOR_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
BUFFER_CLASSES = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer"})
# What `self.x = ...` registers with the module: its device follows the module's.
REGISTERED_STATE_CLASSES = PARAMETER_CLASSES | BUFFER_CLASSES | {"torch.nn.ParameterList", "torch.nn.ParameterDict"}
MODULE_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def owns_no_state_by_default(leaf: str) -> bool:
    """A torch.nn class that has no parameter, buffer or submodule unless told (`nn.ReLU`, an unweighted loss)."""
    return leaf in _data.NN_STATELESS_MODULES


def state_arguments(leaf: str) -> dict[str, int]:
    """Constructor arguments that give such a class state (`weight=` of a loss, `affine=True`),
    with their positions."""
    found: dict[str, int] = {}
    for entry in filter(None, _data.NN_STATE_ARGUMENTS.get(leaf, "").split(",")):
        name, _, position = entry.partition(":")
        found[name] = int(position)
    return found


# Calls that return the module they are given, wrapped: it stays where it was.
MODULE_WRAPPERS = frozenset(
    {
        "torch.compile",
        "torch.jit.script",
        "torch.jit.trace",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
    }
)
# They scatter their inputs onto the devices themselves.
SCATTERING_WRAPPERS = frozenset({"DistributedDataParallel", "DataParallel", "FullyShardedDataParallel"})


def scattering_base(bases: Iterable[str]) -> str:
    """The wrapper a class derives from among its (qualified) bases, or "": such a subclass
    scatters its inputs as the wrapper does."""
    return next((leaf for base in bases if (leaf := base.rsplit(".", 1)[-1]) in SCATTERING_WRAPPERS), "")
