"""Is this file GPU-only by construction?

Some code cannot run without a GPU whatever it is told: Triton kernels and
their launchers, files importing NVIDIA's runtimes (TensorRT, Transformer
Engine) at their top level, scripts whose every Lightning runner is built
for CUDA (`L.Fabric(accelerator="cuda")`, which raises without it), and
multi-GPU scripts that start an NCCL process group
(NCCL has no CPU backend; a script meant to run anywhere chooses
`"nccl" if torch.cuda.is_available() else "gloo"`), also when the file passes the
backend through a name it can only set to "nccl" (`args.dist_backend = "nccl"`, a
parameter or command-line default no call of the file overrides). Naming CUDA there is
no portability bug, and the hardcoded-device rules stay silent on it.
"""

from __future__ import annotations

import libcst as cst

from collections.abc import Collection, Iterable, Iterator

from devlint.analysis.guards import string_value
from devlint.analysis.imported import NO_FACTS, ImportedFacts
from devlint.analysis.only_string import OnlyString
from devlint.analysis.torchapi.frameworks import LIGHTNING_RUNNERS
from devlint.names import ImportTable, imports_any
from devlint.tree import descendants

_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group"})
_GPU_ONLY_LIBRARIES = ("triton",)  # compiles kernels for GPUs only
# NVIDIA's runtimes, which need an NVIDIA GPU to import or to run: a file that imports one at its
# top level, outside `try:` and `if`, runs only where CUDA is (ChatTTS's Transformer Engine
# model, F5-TTS's and ByteTrack's TensorRT runners, threestudio's tiny-cuda-nn encodings).
# Often imported in one branch of a portable file instead, where they say nothing of the rest.
_NVIDIA_RUNTIMES = ("tensorrt", "tensorrt_llm", "torch2trt", "transformer_engine", "tinycudann")


def imports_gpu_only_library(targets: Iterable[str]) -> bool:
    return imports_any(targets, _GPU_ONLY_LIBRARIES)


def gpu_only_by_construction(module: cst.Module, text: str, names: ImportTable, imported: ImportedFacts = NO_FACTS) -> bool:
    """Also GPU-only: a file that imports, unconditionally, from a project file that is (the
    tests and benchmarks of a Triton kernel library), and one that calls a project function
    that starts NCCL on every run (analysis/nccl_start.py)."""
    if imports_gpu_only_library(names.bindings.values()) or imports_any(_top_level_imports(module, names), _NVIDIA_RUNTIMES):
        return True
    if imported.gpu_only and _imports_unconditionally(module, names, imported.gpu_only.keys()):
        return True
    if imported.nccl and _calls_an_nccl_starter(module, names, imported.nccl):
        return True
    if "accelerator" in text and _lightning_on_cuda_only(module, names):
        return True
    if "nccl" not in text:
        return False  # most files: no need to look at every call
    values: OnlyString | None = None
    for node in descendants(module):
        if type(node) is not cst.Call:
            continue
        qualified = names.qualify(node.func)  # type: ignore[attr-defined]
        if qualified not in _PROCESS_GROUP:
            continue
        if any(string_value(arg.value) == "nccl" for arg in node.args):  # type: ignore[attr-defined]
            return True
        backend = _backend(node)  # type: ignore[arg-type]
        if backend is not None:
            values = values or OnlyString(module)
            if values.holds_only(backend, node, "nccl"):
                return True
    return False


def requires_cuda(module: cst.Module, text: str, names: ImportTable) -> bool:
    """Every line of the file needs CUDA, not only a branch of it: it imports Triton or one
    of NVIDIA's runtimes at its top level, outside `try:` and `if`, or builds Lightning runners
    all for CUDA. A file that starts NCCL somewhere may take a CPU path elsewhere
    (simpletransformers' models start it only for `local_rank != -1`), and a project file
    that imports Triton may do so under `try:` (lit-llama's quantization kernels)."""
    if imports_any(_top_level_imports(module, names), _GPU_ONLY_LIBRARIES + _NVIDIA_RUNTIMES):
        return True
    return "accelerator" in text and _lightning_on_cuda_only(module, names)


def _top_level_imports(module: cst.Module, names: ImportTable) -> Iterator[str]:
    """What each import statement at the file's top level (not under `try:` or `if`) binds,
    qualified: `import pkg.kernels` gives `pkg.kernels`, `from triton import language as tl`
    gives `triton.language`."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
                continue
            for alias in small.names:
                if isinstance(small, cst.Import) and alias.asname is None:
                    dotted = names.qualify(alias.name)  # `import pkg.kernels` binds `pkg`; the module is its own target
                else:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    dotted = names.bindings.get(local.value) if isinstance(local, cst.Name) else None
                if dotted is not None:
                    yield dotted


def _imports_unconditionally(module: cst.Module, names: ImportTable, targets: Collection[str]) -> bool:
    """A top-level import statement (not under `try:` or `if`) binds one of `targets`."""
    return any(bound in targets for bound in _top_level_imports(module, names))


def _lightning_on_cuda_only(module: cst.Module, names: ImportTable) -> bool:
    """The file builds a Lightning Fabric or Trainer, and every one it builds names
    `accelerator="cuda"` (lit-llama's fine-tuning scripts). One built for another accelerator,
    or for one a variable holds, may run without CUDA."""
    built = False
    for node in descendants(module):
        if type(node) is not cst.Call or names.qualify(node.func) not in LIGHTNING_RUNNERS:  # type: ignore[attr-defined]
            continue
        accelerator = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "accelerator"), None)  # type: ignore[attr-defined]
        if accelerator is None or string_value(accelerator) != "cuda":
            return False
        built = True
    return built


def _calls_an_nccl_starter(module: cst.Module, names: ImportTable, starters: dict[str, tuple[str, int]]) -> bool:
    """A call of a project function that starts NCCL (dinov2's `setup(args)`), passing no
    backend of its own where the function takes one (Depth-Anything-V2's `setup_distributed(port=...)`)."""
    for node in descendants(module):
        if type(node) is not cst.Call:
            continue
        parameter = starters.get(names.qualify(node.func) or "")  # type: ignore[attr-defined]
        if parameter is None:
            continue
        name, index = parameter
        args = node.args  # type: ignore[attr-defined]
        positional = sum(1 for arg in args if arg.keyword is None and not arg.star)
        if not name or not (any(arg.star or arg.keyword is not None and arg.keyword.value == name for arg in args) or 0 <= index < positional):
            return True
    return False


def _backend(call: cst.Call) -> cst.BaseExpression | None:
    """`init_process_group(backend, ...)`'s first parameter, by name or position."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "backend":
            return arg.value
    first = call.args[0] if call.args else None
    return first.value if first is not None and first.keyword is None and not first.star else None
