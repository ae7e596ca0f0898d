"""Conventions of the libraries built on torch, as data: what they move, what they are.

Each entry states a documented behaviour of the library; the analysis reads
them as it reads torch's own facts.
"""

from __future__ import annotations

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
# Lightning moves the batch its hooks receive, and `example_input_array`, to the module's
# device itself (LightningModule.transfer_batch_to_device, and the model summary).
LIGHTNING_BASE_WORD = "LightningModule"
LIGHTNING_MOVED_ATTRIBUTES = frozenset({"example_input_array"})

DATASET_BASES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset"})

# Loaders: iterating them yields CPU batches.
LOADER_CLASSES = frozenset(
    {
        "torch.utils.data.DataLoader",
        "torch.utils.data.dataloader.DataLoader",
        "torch_geometric.loader.DataLoader",
        "torch_geometric.data.DataLoader",
    }
)

# Libraries whose batches are structures with a `.to()` that moves them in place and returns
# them (transformers' BatchEncoding, PyG's Batch and Data).
IN_PLACE_BATCH_LIBRARIES = ("torch_geometric", "transformers")

# `accelerator.prepare(model, optimizer, loader)` places the model and yields batches on the
# device (accelerate's documented contract); the HF `Trainer` moves inputs itself.
PREPARING_METHODS = frozenset({"prepare"})

# Helpers that move what they are given to the device they are given (accelerate's
# `send_to_device`, Lightning's `move_data_to_device`).
MOVE_HELPERS = frozenset(
    {
        "accelerate.utils.send_to_device",
        "accelerate.utils.operations.send_to_device",
        "lightning.fabric.utilities.apply_func.move_data_to_device",
        "lightning.pytorch.utilities.move_data_to_device",
        "pytorch_lightning.utilities.move_data_to_device",
        "pytorch_lightning.utilities.apply_func.move_data_to_device",
    }
)

# Libraries' own availability checks: true only where that accelerator is present.
AVAILABILITY_HELPERS = frozenset(
    {
        *(f"accelerate.utils.is_{kind}_available" for kind in ("npu", "hpu", "xpu", "mlu", "musa", "mps", "cuda", "torch_xla", "sdaa")),
        *(f"transformers.utils.is_torch_{kind}_available" for kind in ("npu", "hpu", "xpu", "mlu", "musa", "mps", "cuda", "xla", "sdaa")),
        *(f"transformers.is_torch_{kind}_available" for kind in ("npu", "hpu", "xpu", "mlu", "musa", "mps", "cuda", "xla", "sdaa")),
    }
)

# Entries that name a writer's format: BasicSR's `save_network` stores `{"params": ..., "params_ema": ...}`
# with every tensor copied by `param.cpu()`; Real-ESRGAN, GFPGAN, CodeFormer and GPEN publish their
# weights in it, and the projects that load them read the entry by name.
CPU_CHECKPOINT_ENTRIES = frozenset({"params_ema"})

# What builds a learning-rate scheduler, whose `state_dict()` holds Python numbers only (the
# scheduler's own attributes, never the optimizer's tensors): loading it needs no `map_location`.
LR_SCHEDULER_MODULE = "torch.optim.lr_scheduler."
LR_SCHEDULER_FACTORIES = frozenset(
    f"{package}.{name}"
    for package in ("transformers", "transformers.optimization")
    for name in (
        "get_scheduler",
        "get_constant_schedule",
        "get_constant_schedule_with_warmup",
        "get_linear_schedule_with_warmup",
        "get_cosine_schedule_with_warmup",
        "get_cosine_with_hard_restarts_schedule_with_warmup",
        "get_polynomial_decay_schedule_with_warmup",
        "get_inverse_sqrt_schedule",
    )
)

# Gradient scalers, whose `state_dict()` is Python numbers too (`scale` and `_growth_tracker`
# taken with `.item()`, the growth settings): transformers' Trainer saves and loads it as a file
# of its own.
GRAD_SCALERS = frozenset(
    {
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.cuda.amp.GradScaler",
        "torch.cpu.amp.GradScaler",
        "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler",
        "fairscale.optim.grad_scaler.ShardedGradScaler",
        "torch_xla.amp.GradScaler",
    }
)

# torch2trt's TensorRT engine as a module: its `state_dict()` holds the serialized engine (bytes)
# and the binding names, no tensors, and deserializing the engine needs an NVIDIA GPU whatever
# `map_location` says (YOLOX's and ByteTrack's `--trt` evaluation, torch2trt's README, Jetson demos).
TENSORRT_MODULES = frozenset({"torch2trt.TRTModule", "torch2trt.torch2trt.TRTModule", "torch2trt.trt_module.TRTModule"})

# Test decorators that skip a test unless a GPU is there (matched by their last name, lower
# case): pytest's and unittest's skips, transformers' and accelerate's testing utilities.
# (`require_torch_non_multi_gpu` and `require_torch_up_to_2_gpus` also run with no GPU.)
GPU_TEST_DECORATORS = frozenset(
    {
        "skipif",
        "skipunless",
        "requires_cuda",
        "requires_gpu",
        "requires_accelerator",
        "onlycuda",
        "skipifnocuda",
        "require_torch_gpu",
        "require_torch_multi_gpu",
        "require_cuda",
        "require_gpu",
        "require_multi_gpu",
    }
)

# Libraries whose tensors share torch's members (`.numpy()`, `.device`, `.ndim`): in a file that
# imports one, those members do not show a torch tensor.
OTHER_TENSOR_LIBRARIES = ("tensorflow",)

# Lightning's runners: built with `accelerator="cuda"` they raise on a machine without CUDA
# (`"gpu"` also takes Apple's MPS, and is no CUDA-only set-up). Keyword-only since Lightning 2.
LIGHTNING_RUNNERS = frozenset(
    {
        "lightning.Fabric",
        "lightning.fabric.Fabric",
        "lightning.fabric.fabric.Fabric",
        "lightning_fabric.Fabric",
        "lightning.Trainer",
        "lightning.pytorch.Trainer",
        "lightning.pytorch.trainer.trainer.Trainer",
        "pytorch_lightning.Trainer",
        "pytorch_lightning.trainer.trainer.Trainer",
    }
)

