"""The project index: every file's summary, and what each file sees of the others through its imports.

Imports are resolved the way Python would find the modules: from the importing
file's folder, the project root and its `src/`. A name that resolves to no
file of the project (a library, a module outside the tree) is left out: it
stays unknown, never guessed. A class is an nn.Module when its own file says
so or when one of its bases, followed from file to file, is one. One fact
goes through the disk, not the imports: which files of the project write
module state copied to the CPU (analysis/checkpoints.py), told to the files
that load module state.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

from devlint.analysis.checkpoints import may_write_cpu_state
from devlint.analysis.imported import Caller, ImportedClass, ImportedFacts, ImportedFunction, ImportedVariable
from devlint.analysis.gpu_only import imports_gpu_only_library
from devlint.analysis.nccl_start import LOCAL
from devlint.analysis.summary import ModuleSummary, star_sources
from devlint.analysis.torchapi import is_torch_module_class, scattering_base
from devlint.analysis.torchapi.frameworks import DATASET_BASES, MODULE_BASES
from devlint.discovery import never_walked
from devlint.project.layout import import_roots, marked_root, module_file, project_root, real
from devlint.project.saved_tensors import saved_locations

_MAX_HOPS = 8  # re-exports followed through `__init__.py` files, and base classes


class ProjectIndex:
    def __init__(self, summaries: dict[Path, ModuleSummary], load: Callable[[Path], ModuleSummary | None]) -> None:
        self._summaries = dict(summaries)  # by resolved path
        self._run_files = frozenset(self._summaries)  # the files the run checks, not those it loads
        self._load = load  # a summary for a project file the run does not check (from the cache or a check)
        self._module_memo: dict[tuple[Path, str], bool] = {}
        self._nccl_memo: dict[tuple[Path, str], tuple[str, int] | None] = {}
        self._writers: dict[Path, tuple[str, ...]] = {}
        self._listings: dict[str, tuple[Path, ...]] = {}
        self._call_memo: dict[tuple[str, tuple[Path, ...]], tuple[Path, str] | None] = {}
        self._calls_in: dict[str, dict[tuple[Path, str], list[Caller]]] = {}  # by project root

    def summary(self, path: Path) -> ModuleSummary | None:
        path = real(path)
        if path not in self._summaries:
            self._summaries[path] = self._load(path)  # type: ignore[assignment]
        return self._summaries[path]

    # -- what a file sees -----------------------------------------------------------------
    def facts_for(self, path: Path, summary: ModuleSummary) -> ImportedFacts:
        """The project facts behind each name the file imports, and, for a file that restores
        module state, the project's writers of CPU module state."""
        facts = self._imported_facts(path, summary.imports)
        if summary.loads_state:
            facts.state_writers = self.state_writers(path)
        if summary.asks_callers:
            facts.callers = self.callers_of(path, summary.asks_callers)
        if summary.literal_loads:
            facts.saved = self.saved_checkpoints(path, summary.literal_loads)
        return facts

    def _imported_facts(self, path: Path, bindings: dict[str, str]) -> ImportedFacts:
        """The project facts behind each name the file imports (`bindings`: local -> qualified)."""
        facts = ImportedFacts()
        roots = _roots(real(path).parent)
        for qualified in sorted({module for local, module in bindings.items() if not local.startswith("*")}):
            if qualified.split(".", 1)[0] in ("torch",):
                continue  # torch's own names are torch's API, even inside torch's tree
            found = self._resolve(qualified, roots, 0)
            if found is None:
                continue
            where, summary, member = found
            if imports_gpu_only_library(summary.imports.values()):
                facts.gpu_only[qualified] = summary.path
            if member is None:
                # A module: `import pkg.utils as U`, then `U.make_mask(...)`.
                for name in (*summary.classes, *summary.functions, *summary.variables, *summary.distributed_checks):
                    self._add(facts, f"{qualified}.{name}", where, summary, name)
                for name in (*summary.nccl_starts, *summary.nccl_calls):
                    self._add_nccl(facts, f"{qualified}.{name}", where, name)
                self._add_reexports(facts, qualified, where, summary)
            else:
                self._add(facts, qualified, where, summary, member)
                self._add_nccl(facts, qualified, where, member)
        return facts

    def state_writers(self, path: Path) -> tuple[str, ...]:
        """The files of `path`'s project whose `torch.save` writes CPU copies of module state, found
        among every Python file of the project (not only the imported ones: a checkpoint goes from
        the file that saves it to the one that loads it through the disk, not through an import)."""
        folder = real(path).parent
        marked = marked_root(folder)
        root = marked or folder
        if root not in self._writers:
            found = []
            # Without a marker the folder is no known project: a script in a home or temporary
            # folder shares it with its neighbours only, never with everything below.
            candidates = _files_below(str(root), self._listings) if marked is not None else _files_in(root)
            for candidate in candidates:
                # A file of the run has its summary already; another is read only if its text
                # may hold such a save (a run over a few staged files reads the rest so).
                if candidate in self._summaries or _may_save_cpu_copies(candidate):
                    summary = self.summary(candidate)
                    if summary is not None and summary.writes_cpu_state:
                        found.append(summary.path)
            self._writers[root] = tuple(sorted(found))
        return self._writers[root]

    def saved_checkpoints(self, path: Path, literals: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        """Where the tensors of each checkpoint the file loads by a literal path were saved, for
        the paths that name a checkpoint file of the project. A relative path is read from the
        folder the script runs in, which the code does not say: the file's own folder, or one
        above it up to the project's root; the first that holds the file is taken."""
        folder = real(path).parent
        top = marked_root(folder) or folder
        found = {}
        for literal in literals:
            candidate = Path(literal)
            if candidate.is_absolute():
                continue  # a path on the author's machine, not the project's file
            place: Path | None = folder
            while place is not None:
                target = place / candidate
                if target.is_file():
                    locations = saved_locations(target)
                    if locations is not None:
                        found[literal] = locations
                    break
                place = place.parent if place != top and place.parent != place else None
        return found

    def callers_of(self, path: Path, names: tuple[str, ...]) -> dict[str, tuple[Caller, ...]]:
        """The calls of `path`'s functions `names` that the project's other files make, passing
        tensors. Found among every Python file of the project, as the writers of checkpoints are:
        a run over a few staged files reads those whose text calls one of the names. Test files
        (pytest collects `test_*.py` and `*_test.py`) are left out: their CPU tensors say where the
        tests run, not where the code's users call it."""
        target = real(path)
        marked = marked_root(target.parent)
        # Without a marker the folder is no known project: its own files only.
        candidates = _files_below(str(marked), self._listings) if marked is not None else _files_in(target.parent)
        key = str(marked or target.parent)
        if key not in self._calls_in:
            # Every call the run's own files make, once per project: most files ask of none.
            table: dict[tuple[Path, str], list[Caller]] = {}
            for candidate in candidates:
                if real(candidate) in self._run_files:
                    self._add_calls(table, candidate)
            self._calls_in[key] = table
        table = self._calls_in[key]
        found: dict[str, list[Caller]] = {name: list(table.get((target, name), ())) for name in names}
        for candidate in candidates:
            if real(candidate) not in self._run_files and _may_call(candidate, names):
                extra: dict[tuple[Path, str], list[Caller]] = {}
                self._add_calls(extra, candidate)
                for name in names:
                    found[name].extend(extra.get((target, name), ()))
        return {name: tuple(sorted(calls, key=lambda c: c.where)) for name, calls in sorted(found.items()) if calls}

    def _add_calls(self, table: dict[tuple[Path, str], list[Caller]], candidate: Path) -> None:
        """The calls `candidate` makes of the project's functions, under the file and name called."""
        if _is_test_file(candidate.name):
            return
        summary = self.summary(candidate)
        if summary is None or not summary.calls_out:
            return
        here = real(candidate)
        roots = _roots(here.parent)
        for call in summary.calls_out:
            resolved = self._resolve_call(call.callee, roots)
            if resolved is not None and resolved[0] != here:
                table.setdefault(resolved, []).append(Caller(call.positional, call.keywords, f"{summary.path}:{call.line}"))

    def _resolve_call(self, qualified: str, roots: tuple[Path, ...]) -> tuple[Path, str] | None:
        key = (qualified, roots)
        if key not in self._call_memo:
            found = self._resolve(qualified, roots, 0)
            self._call_memo[key] = (found[0], found[2]) if found is not None and found[2] is not None else None
        return self._call_memo[key]

    def _add_nccl(self, facts: ImportedFacts, qualified: str, where: Path, name: str) -> None:
        parameter = self._starts_nccl(where, name, 0)
        if parameter is not None:
            facts.nccl[qualified] = parameter

    def _starts_nccl(self, path: Path, name: str, hops: int) -> tuple[str, int] | None:
        """Does function `name` of the file at `path` start an NCCL process group, itself or
        through the unconditional calls of its body, file to file (analysis/nccl_start.py)?"""
        key = (path, name)
        if key in self._nccl_memo:
            return self._nccl_memo[key]
        self._nccl_memo[key] = None  # a cycle of calls starts nothing
        summary = self.summary(path)
        found: tuple[str, int] | None = None
        if summary is not None:
            found = summary.nccl_starts.get(name)
            if found is None and hops < _MAX_HOPS:
                for call in summary.nccl_calls.get(name, ()):
                    if call.name.startswith(LOCAL):
                        target: tuple[Path, ModuleSummary, str | None] | None = (path, summary, call.name[len(LOCAL) :])
                    else:
                        target = self._resolve(call.name, _roots(path.parent), 0)
                    if target is None or target[2] is None:
                        continue
                    parameter = self._starts_nccl(target[0], target[2], hops + 1)
                    if parameter is not None and not call.passes(parameter):
                        found = ("", -1)
                        break
        self._nccl_memo[key] = found
        return found

    def _add_reexports(self, facts: ImportedFacts, qualified: str, where: Path, summary: ModuleSummary) -> None:
        """What a package's `__init__.py` imports is reached through it (`flair.nn.DefaultClassifier`,
        `from .model import DefaultClassifier` in flair/nn/__init__.py), as `from flair.nn import
        DefaultClassifier` would reach it."""
        for name, target in summary.imports.items():
            if "." in name or name in summary.classes or target.split(".", 1)[0] == "torch":
                continue
            found = self._resolve(target, _roots(where.parent), 1)
            if found is not None and found[2] is not None:
                self._add(facts, f"{qualified}.{name}", found[0], found[1], found[2])

    def _add(self, facts: ImportedFacts, qualified: str, where: Path, summary: ModuleSummary, name: str) -> None:
        question = summary.distributed_checks.get(name)
        if question is not None:
            facts.distributed[qualified] = question
        cls = summary.classes.get(name)
        if cls is not None:
            module = self._is_module(where, name, 0)
            dataset = cls.dataset or any(base in DATASET_BASES for base in cls.bases)
            if module or dataset:
                facts.classes[qualified] = ImportedClass(
                    module, dataset, cls.stateless, f"{summary.path}:{cls.line}", cls.wraps, scattering_base(cls.bases), cls.places_itself
                )
            return
        function = summary.functions.get(name)
        if function is not None:
            facts.functions[qualified] = ImportedFunction(function.params, function.returns, f"{summary.path}:{function.line}")
            return
        variable = summary.variables.get(name)
        if variable is not None:
            facts.variables[qualified] = ImportedVariable(variable, summary.path)

    # -- resolution --------------------------------------------------------------------------
    def _resolve(self, qualified: str, roots: tuple[Path, ...], hops: int) -> tuple[Path, ModuleSummary, str | None] | None:
        """The file `qualified` lives in, its summary, and the member it names (None: the module)."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            path = _module_path(".".join(parts[:cut]), roots)
            if path is None:
                continue
            summary = self.summary(path)
            if summary is None:
                return None
            rest = parts[cut:]
            if not rest:
                return path, summary, None
            if len(rest) > 1:
                return None  # an attribute of a member: a class's method, an object's field
            name = rest[0]
            if name in summary.classes or name in summary.functions or name in summary.variables:
                return path, summary, name
            target = summary.imports.get(name)
            if target is not None and hops < _MAX_HOPS:
                # Re-exported: `from .base import Aggregation` in a package's `__init__.py`.
                return self._resolve(target, _roots(path.parent), hops + 1)
            starred = self._star_exported(path, summary, name, hops)
            if starred is not None:
                return starred
            # A member the summary tells nothing of (a helper whose result follows its inputs):
            # still a name from that file, which may be GPU-only.
            return path, summary, name
        return None

    def _star_exported(self, path: Path, summary: ModuleSummary, name: str, hops: int) -> tuple[Path, ModuleSummary, str] | None:
        """`from .pytorch import *` binds every public name the module defines; of several such
        imports, the last that defines the name binds it last."""
        if name.startswith("_") or hops >= _MAX_HOPS:
            return None
        for module in reversed(star_sources(summary.imports)):
            found = self._resolve(f"{module}.{name}", _roots(path.parent), hops + 1)
            if found is not None and found[2] is not None and _defines(found[1], found[2]):
                return found  # type: ignore[return-value]
        return None

    def _is_module(self, path: Path, name: str, hops: int) -> bool:
        key = (path, name)
        if key in self._module_memo:
            return self._module_memo[key]
        self._module_memo[key] = False  # a cycle of bases: not a module
        summary = self.summary(path)
        cls = summary.classes.get(name) if summary is not None else None
        module = False
        if cls is not None:
            module = cls.module
            for base in cls.bases:
                if module or hops >= _MAX_HOPS:
                    break
                if base in MODULE_BASES or is_torch_module_class(base):
                    module = True
                elif base in summary.classes:  # type: ignore[union-attr]
                    module = self._is_module(path, base, hops + 1)
                else:
                    found = self._resolve(base, _roots(path.parent), 0)
                    if found is not None and found[2] is not None:
                        module = self._is_module(found[0], found[2], hops + 1)
        self._module_memo[key] = module
        return module


def _defines(summary: ModuleSummary, name: str) -> bool:
    return name in summary.classes or name in summary.functions or name in summary.variables or name in summary.distributed_checks


def significant(facts: ImportedFacts) -> bool:
    """Would these facts change what the file's own analysis found? Module and dataset classes,
    device variables, and helpers that return something on a known device or a module do, and
    so do helpers whose result follows an argument: `y = adjust(x)` is on `x`'s device, where
    the file alone knows nothing of `y`."""
    if facts.classes or facts.variables or facts.gpu_only or facts.nccl or facts.state_writers or facts.callers or facts.distributed or facts.saved:
        return True
    return any(
        f.returns.known or f.returns.kind == "module" or f.returns.place == "follows" and f.returns.name in f.params
        for f in facts.functions.values()
    )


def only_silences(facts: ImportedFacts, codes: set[str], silenced: frozenset[str]) -> bool:
    """Do these facts matter only by making the file GPU-only (it imports a Triton file, calls a
    function that starts NCCL), where the file has no finding of the `silenced` rules, those a
    GPU-only file gets none of?"""
    if not (facts.gpu_only or facts.nccl) or not codes.isdisjoint(silenced):
        return False
    rest = ImportedFacts(facts.classes, facts.functions, facts.variables, state_writers=facts.state_writers, callers=facts.callers)
    return not significant(rest)


def _files_below(folder: str, memo: dict[str, tuple[Path, ...]]) -> tuple[Path, ...]:
    """The Python files at and below `folder`, in a fixed order, outside the folders a run never
    walks; each folder listed once a run (without a root marker, every folder is a root)."""
    if folder in memo:
        return memo[folder]
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        entries = []
    found: list[Path] = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if not never_walked(entry.name):
                    found.extend(_files_below(entry.path, memo))
            elif entry.name.endswith(".py"):
                found.append(Path(entry.path))
        except OSError:
            continue
    memo[folder] = tuple(found)
    return memo[folder]


def _files_in(folder: Path) -> tuple[Path, ...]:
    try:
        return tuple(sorted(Path(e.path) for e in os.scandir(folder) if e.name.endswith(".py") and e.is_file()))
    except OSError:
        return ()


def _is_test_file(name: str) -> bool:
    """pytest's default `python_files`: `test_*.py` and `*_test.py`."""
    return name.startswith("test_") or name.endswith("_test.py")


def _may_call(path: Path, names: tuple[str, ...]) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(f"{name}(" in text for name in names)


def _may_save_cpu_copies(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return may_write_cpu_state(text)


@functools.lru_cache(maxsize=8192)
def _roots(folder: Path) -> tuple[Path, ...]:
    """Where Python looks for a module imported from a file in `folder`: the folder (a script's
    own folder is first on `sys.path`), then the project root and its `src/`."""
    root = project_root(folder)
    return (folder, *(r for r in import_roots(root) if r != folder))


@functools.lru_cache(maxsize=65536)
def _module_path(name: str, roots: tuple[Path, ...]) -> Path | None:
    found = module_file(name, roots)
    return real(found) if found is not None else None
