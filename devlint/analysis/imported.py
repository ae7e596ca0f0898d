"""What a file knows of the project names it imports: the view of the project index its imports reach.

Keys are the qualified names the file's own import table gives (`pkg.models.base.Aggregation`,
`config.device`, `utils.make_mask`), so the analysis looks them up exactly as it looks up torch.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from devlint.analysis.facts import PlaceFact


@dataclass(frozen=True)
class ImportedClass:
    module: bool  # an nn.Module, through the bases of every file it derives from
    dataset: bool
    stateless: bool
    where: str  # "models/base.py:12"
    wraps: tuple[int, ...] = ()  # positions of constructor arguments it keeps as a model it calls
    scatters: str = ""  # the DataParallel (or kin) it derives from: it copies its inputs onto its devices
    places_itself: bool = False  # its constructor moves itself or its state: not on the CPU when built


@dataclass(frozen=True)
class ImportedFunction:
    params: tuple[str, ...]
    returns: PlaceFact
    where: str


@dataclass(frozen=True)
class ImportedVariable:
    fact: PlaceFact
    where: str


@dataclass(frozen=True)
class Caller:
    """A call from another file of the project of one of this file's functions: the tensors it passes."""

    positional: tuple[PlaceFact | None, ...]  # None: not known to be a tensor
    keywords: tuple[tuple[str, PlaceFact | None], ...]
    where: str  # "datasets/coco.py:57"


@dataclass
class ImportedFacts:
    classes: dict[str, ImportedClass] = field(default_factory=dict)
    functions: dict[str, ImportedFunction] = field(default_factory=dict)
    variables: dict[str, ImportedVariable] = field(default_factory=dict)
    # Names imported from a file that is GPU-only by construction (its Triton kernels), with where.
    gpu_only: dict[str, str] = field(default_factory=dict)
    # Functions of other files that start an NCCL process group: the backend parameter a call
    # may pass instead ("", -1: none), by qualified name.
    nccl: dict[str, tuple[str, int]] = field(default_factory=dict)
    # The project's files whose `torch.save` writes module state copied to the CPU
    # (analysis/checkpoints.py), told to a file that restores module state.
    state_writers: tuple[str, ...] = ()
    # The calls other files of the project make of this file's top-level functions, by name,
    # for the functions whose findings depend on their callers.
    callers: dict[str, tuple[Caller, ...]] = field(default_factory=dict)
    # Functions of other files answering "is this a multi-process job" with torch.distributed's
    # answer only (analysis/distributed_checks.py): the question, by qualified name.
    distributed: dict[str, str] = field(default_factory=dict)
    # The devices the tensors of the project's own checkpoint files were saved on, by the literal
    # path the file loads them by (project/saved_tensors.py): `("cpu",)` loads anywhere.
    saved: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.classes or self.functions or self.variables or self.gpu_only or self.nccl or self.state_writers or self.callers or self.distributed
            or self.saved
        )

    def digest(self) -> str:
        """Changes exactly when what the file sees of the project changes (the cache's key)."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    def is_module(self, qualified: str) -> bool:
        found = self.classes.get(qualified)
        return found is not None and found.module

    def is_dataset(self, qualified: str) -> bool:
        found = self.classes.get(qualified)
        return found is not None and found.dataset


NO_FACTS = ImportedFacts()


@dataclass(frozen=True)
class FilePlace:
    """A file's place in its project, as the engine hands it to the analysis."""

    module_name: str | None = None  # its dotted name, for relative imports
    is_package: bool = False  # an `__init__.py`
    facts: ImportedFacts = field(default_factory=ImportedFacts)
    summarise: bool = False  # produce the summary other files will import
