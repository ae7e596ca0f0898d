"""Is this file GPU-only by construction?

Some code cannot run without a GPU whatever it is told: Triton kernels and
their launchers, and multi-GPU scripts that start an NCCL process group
(NCCL has no CPU backend; a script meant to run anywhere chooses
`"nccl" if torch.cuda.is_available() else "gloo"`). Naming CUDA there is no
portability bug, and the hardcoded-device rules stay silent on it.
"""

from __future__ import annotations

import libcst as cst

from devlint.analysis.guards import string_value
from devlint.names import ImportTable
from devlint.tree import descendants

_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group"})
_GPU_ONLY_LIBRARIES = ("triton",)  # compiles kernels for GPUs only


def gpu_only_by_construction(module: cst.Module, names: ImportTable) -> bool:
    if any(target == library or target.startswith(f"{library}.") for target in names.bindings.values() for library in _GPU_ONLY_LIBRARIES):
        return True
    for node in descendants(module):
        if type(node) is not cst.Call:
            continue
        qualified = names.qualify(node.func)  # type: ignore[attr-defined]
        if qualified in _PROCESS_GROUP and any(string_value(arg.value) == "nccl" for arg in node.args):  # type: ignore[attr-defined]
            return True
    return False
