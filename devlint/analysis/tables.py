"""Tables the device analysis consults: which names, methods and classes mean what."""

from __future__ import annotations

import re

from devlint.config import Settings

DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32",
        "int64", "long", "short", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble",
        "float8_e4m3fn", "float8_e5m2", "channels_last", "contiguous_format", "preserve_format",
    )
)

# Tensor methods whose result is not a tensor (so no device to track).
NON_TENSOR_METHODS = frozenset(
    {
        "item", "tolist", "numpy", "dim", "numel", "nelement", "element_size", "data_ptr", "get_device",
        "is_contiguous", "stride", "storage", "untyped_storage", "backward", "register_hook", "__len__",
        "is_floating_point", "is_complex", "equal", "storage_offset", "ndimension", "keys",
        "q_scale", "q_zero_point", "q_per_channel_axis", "is_pinned", "is_shared", "is_set_to", "qscheme",
        "is_coalesced", "dense_dim", "sparse_dim", "nnz",
    }
)
SHAPE_ONLY_METHODS = frozenset({"size", "dim", "numel", "nelement"})
# Tensor methods that legitimately take an argument from another device:
# copies between devices, 0-dim fill values, shape-only templates, CPU indices.
CROSS_DEVICE_METHODS = frozenset(
    {"copy_", "fill_", "set_", "expand_as", "view_as", "reshape_as", "type_as", "index_put_", "index_put", "to", "new_tensor"}
)
# Tensor attributes that are tensors on the same device.
SAME_PLACE_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})

# numpy entry points that convert a tensor (or a list of them) through __array__.
NUMPY_CONVERTERS = frozenset(
    f"numpy.{name}"
    for name in (
        "asarray", "array", "asanyarray", "ascontiguousarray", "sum", "mean", "std", "var", "max", "min",
        "argmax", "argmin", "concatenate", "stack", "vstack", "hstack", "median", "percentile", "round",
        "save", "savetxt", "unique", "where", "abs", "exp", "log", "sqrt", "clip", "cumsum", "prod",
    )
)

# torch.nn classes without parameters or buffers: they live nowhere in particular.
PARAMETER_FREE_MODULES = frozenset(
    {
        "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
        "Softplus", "Softsign", "ELU", "SELU", "CELU", "Hardtanh", "Hardswish", "Hardsigmoid", "Threshold",
        "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten",
        "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
        "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
        "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d", "CosineSimilarity",
        "PairwiseDistance", "Softmax2d", "Tanhshrink", "Softshrink", "Hardshrink", "LogSigmoid", "GLU",
    }
)

# Call names that move their argument to a device they are given.
MOVE_HELPER_WORDS = ("to_device", "send_to_device", "move_to", "to_cuda", "to_gpu", "todevice", "batch_to")

_DEVICE_NAME = re.compile(r"^(device|dev|[a-z0-9_]*_device|device_[0-9]+|torch_device|target_device)$")
_NOT_DEVICE = frozenset({"num_device", "n_device", "use_device", "device_type", "device_count", "device_name", "device_ids"})
_LOADER_NAME = re.compile(r"(loader|dataloader|_iter$|^iterator$|_iterator$|batches$)", re.IGNORECASE)


def is_device_name(name: str, settings: Settings) -> bool:
    """`device`, `self.device`'s leaf, `args.device`, `target_device`, or a configured name."""
    if name in settings.device_variables:
        return True
    lowered = name.lower()
    if "dev" not in lowered:
        return False
    return lowered not in _NOT_DEVICE and _DEVICE_NAME.match(lowered) is not None


def is_loader_name(name: str, settings: Settings) -> bool:
    if name in settings.loaders:
        return True
    lowered = name.lower()
    if not any(word in lowered for word in ("load", "iter", "batches")):
        return False
    return _LOADER_NAME.search(name) is not None

# Arguments that take part in device checks, by position or keyword; the others
# must (or may) stay on the CPU: sequence lengths, CTC targets and lengths.
CPU_ARGUMENTS: dict[str, frozenset[int | str]] = {
    "torch.nn.utils.rnn.pack_padded_sequence": frozenset({0, "input"}),
    "torch.nn.functional.ctc_loss": frozenset({0, "log_probs"}),
    "torch.ctc_loss": frozenset({0, "log_probs"}),
}

PARAMETER_CLASSES = frozenset(
    {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.ParameterList", "torch.nn.ParameterDict", "torch.nn.Buffer"}
)

# Parameter names of configuration objects: `cfg.device` is the run-time device, not a tensor's.
CONFIG_NAMES = frozenset({"cfg", "config", "args", "opt", "opts", "options", "hparams", "hp", "conf", "settings", "params", "flags"})

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
SCATTERING_WRAPPERS = frozenset({"DistributedDataParallel", "DataParallel", "FullyShardedDataParallel"})
