"""The vocabulary of torch that device reasoning needs, as data."""

from __future__ import annotations

# Accelerator device types a string or torch.device may name.
ACCELERATOR_TYPES = frozenset({"cuda", "mps", "xpu", "hpu", "npu", "mtia", "xla", "privateuseone"})
CPU_TYPES = frozenset({"cpu", "meta"})

# Calls whose truth says an accelerator is present: code under them may use one.
AVAILABILITY_CALLS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.backends.mps.is_available",
        "torch.backends.mps.is_built",
        "torch.xpu.is_available",
        "torch.xpu.device_count",
        "torch.accelerator.is_available",
        "torch.accelerator.device_count",
        "torch.cuda.is_initialized",
    }
)

# Legacy typed-tensor constructors that allocate on the GPU.
CUDA_TENSOR_TYPES = frozenset(
    f"torch.cuda.{name}"
    for name in (
        "FloatTensor",
        "DoubleTensor",
        "HalfTensor",
        "BFloat16Tensor",
        "ByteTensor",
        "CharTensor",
        "ShortTensor",
        "IntTensor",
        "LongTensor",
        "BoolTensor",
    )
)

# Factories: create a tensor on the default device (the CPU) unless told otherwise.
FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "randperm",
        "arange",
        "range",
        "linspace",
        "logspace",
        "eye",
        "tensor",
        "as_tensor",
        "from_numpy",
        "Tensor",
        "FloatTensor",
        "DoubleTensor",
        "HalfTensor",
        "LongTensor",
        "IntTensor",
        "ByteTensor",
        "BoolTensor",
        "tril_indices",
        "triu_indices",
        "empty_strided",
        "frombuffer",
        "normal",
        "bernoulli",
        "poisson",
        "multinomial",
        "hann_window",
        "hamming_window",
        "blackman_window",
        "bartlett_window",
        "kaiser_window",
    )
)
# `from_numpy`, `frombuffer` and the legacy typed constructors take no device=.
FACTORIES_WITHOUT_DEVICE_KW = frozenset(
    {
        "torch.from_numpy",
        "torch.frombuffer",
        "torch.Tensor",
        "torch.FloatTensor",
        "torch.DoubleTensor",
        "torch.HalfTensor",
        "torch.LongTensor",
        "torch.IntTensor",
        "torch.ByteTensor",
        "torch.BoolTensor",
    }
)
# Random factories whose output device follows their input tensor, not the default.
# Given a tensor (`torch.as_tensor(t)`, `torch.tensor(t)` too: "if None and data is a tensor then
# the device of data is used"), these create on its device.
INPUT_FOLLOWING = frozenset({"torch.normal", "torch.bernoulli", "torch.poisson", "torch.multinomial", "torch.as_tensor", "torch.tensor"})

# torch.load and its aliases.
LOAD_FUNCTIONS = frozenset({"torch.load", "torch.serialization.load"})
SAVE_FUNCTIONS = frozenset({"torch.save", "torch.serialization.save"})

# Loaders: iterating them yields CPU batches.
LOADER_CLASSES = frozenset(
    {
        "torch.utils.data.DataLoader",
        "torch.utils.data.dataloader.DataLoader",
        "torch_geometric.loader.DataLoader",
        "torch_geometric.data.DataLoader",
    }
)

# torch dtypes: `x.to(torch.float16)` converts values; memory formats do not.
DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32",
        "int64", "long", "short", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble",
        "float8_e4m3fn", "float8_e5m2",
    )
)  # fmt: skip
MEMORY_FORMATS = frozenset(f"torch.{name}" for name in ("channels_last", "channels_last_3d", "contiguous_format", "preserve_format"))

# Base classes that make a class an nn.Module.
MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)
DATASET_BASES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset"})
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
BUFFER_CLASSES = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer"})
# What `self.x = ...` registers with the module: its device follows the module's.
REGISTERED_STATE_CLASSES = PARAMETER_CLASSES | BUFFER_CLASSES | {"torch.nn.ParameterList", "torch.nn.ParameterDict"}

# torch.nn classes that own no parameters and no buffers: where they sit does not matter to `.to()`.
PARAMETER_FREE_MODULES = frozenset(
    {
        "Identity", "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
        "Tanh", "Softmax", "Softmax2d", "Softmin", "LogSoftmax", "Softplus", "Softsign", "Hardtanh",
        "Hardswish", "Hardsigmoid", "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "LogSigmoid", "GLU",
        "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Flatten",
        "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
        "FractionalMaxPool2d", "FractionalMaxPool3d", "Upsample", "UpsamplingNearest2d",
        "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "ZeroPad1d", "ZeroPad2d",
        "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
        "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
        "CircularPad2d", "CircularPad3d", "CosineSimilarity", "PairwiseDistance", "Fold", "Unfold",
    }
)  # fmt: skip

# Tensor attributes that are tensors on the same device.
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})

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

# numpy entry points that convert a tensor (or a list of them) through __array__.
NUMPY_CONVERTERS = frozenset(
    f"numpy.{name}"
    for name in (
        "asarray", "array", "asanyarray", "ascontiguousarray", "sum", "mean", "std", "var", "max", "min",
        "argmax", "argmin", "concatenate", "stack", "vstack", "hstack", "median", "percentile", "round",
        "save", "savetxt", "unique", "where", "abs", "exp", "log", "sqrt", "clip", "cumsum", "prod",
    )
)

# Arguments that take part in device checks, by position or keyword; the others
# must (or may) stay on the CPU: sequence lengths, CTC targets and lengths.
CPU_ARGUMENTS: dict[str, frozenset[int | str]] = {
    "torch.nn.utils.rnn.pack_padded_sequence": frozenset({0, "input"}),
    "torch.nn.functional.ctc_loss": frozenset({0, "log_probs"}),
    "torch.ctc_loss": frozenset({0, "log_probs"}),
}

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
