"""DL103: a CUDA runtime call that raises on a machine without CUDA."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.guards import string_value
from devlint.analysis.torchapi import CUDA_RAISING_CALLS
from devlint.names import ImportTable
from devlint.rule import Rule
from devlint.tree import descendants

# The legacy typed constructors and storages place data: DL102's business, not a runtime call.
_PLACING_SUFFIXES = ("Tensor", "Storage")
_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group"})
_SET_DEVICE = frozenset({"torch.cuda.set_device"})


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
    DL101, `strict` included), and files that are GPU-only by construction:
    multi-GPU scripts that initialise NCCL (`init_process_group("nccl")`) or
    give each process its GPU with `torch.cuda.set_device(local_rank)`.
    """

    code = "DL103"
    name = "cuda-runtime-call"
    summary = "a CUDA runtime call (`torch.cuda.synchronize()`, `current_device()`, `Event`...) that raises without CUDA, outside an availability check"
    needles = ("cuda", "accelerator")

    def __init__(self, ctx) -> None:  # noqa: ANN001 - FileContext
        super().__init__(ctx)
        self._gpu_only: bool | None = None

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualify(node.func)
        if qualified not in CUDA_RAISING_CALLS or qualified.endswith(_PLACING_SUFFIXES):
            return
        if self.ctx.guards.guarded and not self.ctx.settings.strict:
            return
        if self._gpu_only is None:
            self._gpu_only = _gpu_only_by_construction(self.ctx.module, self.ctx.names)
        if self._gpu_only:
            return
        call = " ".join(self.ctx.module.code_for_node(node.func).split())
        self.report(
            node,
            f"`{call}()` raises on a machine without CUDA (a laptop, a Mac, CPU-only CI); "
            "run it only where CUDA is (`if torch.cuda.is_available():`) or only for a CUDA device (`if device.type == \"cuda\":`)",
        )


def _gpu_only_by_construction(module: cst.Module, names: ImportTable) -> bool:
    """A multi-GPU script: NCCL process groups, or one GPU per process chosen from a variable."""
    for node in descendants(module):
        if type(node) is not cst.Call:
            continue
        qualified = names.qualify(node.func)  # type: ignore[attr-defined]
        if qualified in _PROCESS_GROUP:
            if any(string_value(arg.value) == "nccl" for arg in node.args):  # type: ignore[attr-defined]
                return True
        elif qualified in _SET_DEVICE and node.args and not isinstance(node.args[0].value, cst.Integer):  # type: ignore[attr-defined]
            return True
    return False
