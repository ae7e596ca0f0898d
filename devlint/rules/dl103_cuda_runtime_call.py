"""DL103: a CUDA runtime call that raises on a machine without CUDA."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.torchapi import CUDA_RAISING_CALLS
from devlint.rule import Rule

# The legacy typed constructors and storages place data: DL102's business, not a runtime call.
_PLACING_SUFFIXES = ("Tensor", "Storage")


# Calls that do nothing for the device index -1 (torch/cuda/__init__.py: `set_device` acts only
# for an index >= 0, `device.__enter__` exchanges nothing for a negative one).
_NO_OP_FOR_MINUS_ONE = frozenset({"torch.cuda.device", "torch.cuda.set_device"})


def _of_a_tensors_device_index(call: cst.Call) -> bool:
    """The call's only argument is `x.get_device()`: -1 for a CPU tensor."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return False
    value = call.args[0].value
    return isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get_device"


class CudaRuntimeCall(Rule):
    """`torch.cuda.synchronize()`, `current_device()`, `get_device_name()`,
    `get_device_properties()`, `mem_get_info()`, `reset_peak_memory_stats()`,
    `torch.cuda.Event(...)`, `torch.cuda.Stream()` and the other calls that
    need a CUDA runtime raise "Torch not compiled with CUDA enabled" (or find
    no driver) on a laptop, a Mac or a CPU-only CI runner, often in timing or
    logging code nobody thinks of as device code. Which calls raise is read
    from torch itself (tools/gen_torch_api.py calls each one on a CPU-only
    build): `torch.cuda.manual_seed_all()`, `empty_cache()`,
    `memory_allocated()` and `is_bf16_supported()` return normally there and
    are not reported.

    Not reported: calls under an availability check (the same guards as
    DL101, `strict` included; the right operand of `torch.cuda.is_available() and ...`
    too), CUDA ordinals given as `device_ids=[...]` to a
    multi-GPU wrapper, and files that are GPU-only by construction (Triton
    kernels, multi-GPU scripts that initialise an NCCL process group).
    """

    code = "DL103"
    name = "cuda-runtime-call"
    summary = "a CUDA runtime call (`torch.cuda.synchronize()`, `current_device()`, `Event`...) that raises without CUDA, outside an availability check"
    needles = ("cuda", "accelerator")
    silent_on_gpu_only = True

    def __init__(self, ctx) -> None:  # noqa: ANN001 - FileContext
        super().__init__(ctx)
        self._device_ids: list[cst.CSTNode] = []  # `device_ids=[...]` arguments open in the walk

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "device_ids":
            self._device_ids.append(node)

    def leave_Arg(self, original_node: cst.Arg) -> None:
        if self._device_ids and self._device_ids[-1] is original_node:
            self._device_ids.pop()

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualify(node.func)
        if qualified not in CUDA_RAISING_CALLS or qualified.endswith(_PLACING_SUFFIXES):
            return
        if self.ctx.guards.guarded and not self.ctx.settings.strict:
            return
        if qualified in _NO_OP_FOR_MINUS_ONE and _of_a_tensors_device_index(node):
            # `torch.cuda.device(x.get_device())`: -1 for a CPU tensor, and both calls do nothing
            # for -1; without CUDA every tensor is on the CPU (TorchSeg's evaluator).
            return
        if self.exempt_as_gpu_only or self._device_ids:
            # Inside `DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])`: CUDA
            # ordinals that only multi-GPU wrappers read.
            return
        call = " ".join(self.ctx.module.code_for_node(node.func).split())
        if qualified.startswith("torch.accelerator."):
            # It runs on whichever accelerator the build has (MPS on a Mac): only a machine with none raises.
            message = (
                f"`{call}()` raises on a machine without an accelerator (CPU-only CI, a server or laptop without a GPU); "
                "run it only where one is (`if torch.accelerator.is_available():`) or only for an accelerator device "
                "(`if device.type != \"cpu\":`)"
            )
        else:
            message = (
                f"`{call}()` raises on a machine without CUDA (a laptop, a Mac, CPU-only CI); run it only where CUDA is "
                "(`if torch.cuda.is_available():`) or only for a CUDA device (`if device.type == \"cuda\":`)"
            )
        self.report_unless_guarded(node, message)

