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
INPUT_FOLLOWING = frozenset({"torch.normal", "torch.bernoulli", "torch.poisson", "torch.multinomial"})

# torch.load and its aliases.
LOAD_FUNCTIONS = frozenset({"torch.load", "torch.serialization.load"})

# Loaders: iterating them yields CPU batches.
LOADER_CLASSES = frozenset(
    {
        "torch.utils.data.DataLoader",
        "torch.utils.data.dataloader.DataLoader",
        "torch_geometric.loader.DataLoader",
        "torch_geometric.data.DataLoader",
    }
)
