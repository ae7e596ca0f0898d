"""Checks files: decode, parse, walk once with every selected rule, collect findings.

The engine knows rules only through their metadata and their visit methods.
"""

from __future__ import annotations

import functools
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol
from pathlib import Path

import libcst as cst

from devlint.analysis.imported import FilePlace
from devlint.analysis.summary import ModuleSummary
from devlint.config import Settings, enabled_codes, ignored_for_file, selector_match
from devlint.context import NOWHERE_IN_PARTICULAR, FileContext
from devlint.elision import elide_data_tables
from devlint.file_result import FileResult
from devlint.finding import Finding, Position, with_edit_positions
from devlint.notebook import NotebookSource, is_notebook, read_notebook
from devlint.parsing import parse_module
from devlint.positions import line_starts
from devlint.reading import NotRegularFile, read_regular
from devlint.respelling import respelled
from devlint.rule import Rule
from devlint.rules import ENGINE_CODES, all_infos, all_rules
from devlint.source import (
    MAX_PARSED_TOKENS,
    PythonVerdict,
    SourceText,
    UnreadableSource,
    count_tokens,
    decode,
    libcst_syntax_message,
    python_verdict,
    too_large,
    too_many_tokens,
)
from devlint.statement_facts import StatementFacts
from devlint.suppression import UNUSED_NOQA, NoqaMap, skips_file
from devlint.tree import LEAF_TYPES, Walker

# libcst walks the tree recursively; real code that nests a few hundred levels
# deep (generated tables, long `a + b + ...` chains) needs more than the default.
_RECURSION_LIMIT = 20_000
# How often a worker looks whether the main process is still there, and how long
# a stopped worker is given to exit.
_PARENT_POLL_S = 0.5
_JOIN_S = 5.0
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


_SCOPES = frozenset({cst.FunctionDef, cst.Lambda})


@functools.cache
def _hook_names(visitor_type: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A visitor class's `visit_*` and `leave_*` methods, found once per class, not per file."""
    names = dir(visitor_type)
    return tuple(n for n in names if n.startswith("visit_")), tuple(n for n in names if n.startswith("leave_"))


class _Dispatcher:
    """One walk of the tree that calls every rule's visit_/leave_ methods."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]) -> None:
        self.ctx = ctx
        self._visit: dict[str, list[Callable[..., object]]] = {}
        self._leave: dict[str, list[Callable[..., object]]] = {}
        for visitor in (ctx.guards, *rules):
            visits, leaves = _hook_names(type(visitor))
            for name in visits:
                self._visit.setdefault(name[6:], []).append(getattr(visitor, name))
            for name in leaves:
                self._leave.setdefault(name[6:], []).append(getattr(visitor, name))
        self._hooks = frozenset(name for name in (*self._visit, *self._leave) if "_" in name)

    def walk(self, module: cst.Module) -> None:
        # The walker is not kept: it holds this dispatcher's methods, and the
        # cycle would keep the tree alive after the file is done.
        skipped = frozenset(kind for kind in LEAF_TYPES if kind.__name__ not in self._visit and kind.__name__ not in self._leave)
        Walker(self.on_visit, self.on_leave, self._hooks, self.on_visit_attribute, self.on_leave_attribute, skipped).walk(module)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in _SCOPES:
            self.ctx.enter_scope(node)  # type: ignore[arg-type]
        descend = True
        for method in self._visit.get(type(node).__name__, ()):
            if method(node) is False:
                descend = False
        return descend

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for method in self._leave.get(type(original_node).__name__, ()):
            method(original_node)
        if type(original_node) in _SCOPES:
            self.ctx.leave_scope()

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        for method in self._visit.get(f"{type(node).__name__}_{attribute}", ()):
            method(node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        for method in self._leave.get(f"{type(original_node).__name__}_{attribute}", ()):
            method(original_node)


def _input_error(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(ENGINE_CODES[0].code, message, path, Position(line, column), Position(line, column))


def _internal_error(path: str, error: BaseException) -> Finding:
    message = f"devlint failed on this file ({type(error).__name__}: {error}); please report it"
    return Finding(ENGINE_CODES[1].code, message, path, Position(1, 1), Position(1, 1))


def selected_rules(settings: Settings) -> tuple[frozenset[str], tuple[type[Rule], ...]]:
    defaults = {info.code: info.default_enabled for info in ENGINE_CODES}
    defaults.update({rule.code: rule.default_enabled for rule in all_rules()})
    enabled = enabled_codes(settings, defaults)
    return enabled, tuple(rule for rule in all_rules() if rule.code in enabled)


def check_text(
    path: str,
    source: SourceText,
    settings: Settings,
    rule_types: Sequence[type[Rule]],
    parse: Callable[[str], cst.Module] = parse_module,
    place: FilePlace = NOWHERE_IN_PARTICULAR,
) -> list[Finding]:
    """Findings of the given rules on already-decoded text (no suppression applied).

    `parse` turns text into a tree; the language server passes one that
    reuses the unchanged statements of the previous version of the file.
    """
    return analyse_text(path, source, settings, rule_types, parse, place)[0]


def analyse_text(
    path: str,
    source: SourceText,
    settings: Settings,
    rule_types: Sequence[type[Rule]],
    parse: Callable[[str], cst.Module] = parse_module,
    place: FilePlace = NOWHERE_IN_PARTICULAR,
    statement_facts: StatementFacts | None = None,
    verdict_of: Callable[[str], PythonVerdict] = python_verdict,
) -> tuple[list[Finding], ModuleSummary | None]:
    """Findings (no suppression applied), and the file's summary when `place` asks for it.

    `statement_facts`: what earlier versions of the same document taught about the
    statements `parse` reused (the language server's); a fresh table otherwise.
    `verdict_of`: CPython's verdict on the text; the language server's compiles only
    what an edit changed."""
    text = source.text
    nothing = ModuleSummary(path) if place.summarise else None  # a file with nothing to tell
    active = [rule for rule in rule_types if any(needle in text for needle in rule.needles)]
    if not active:
        return [], _imports_only(path, text, place) if place.summarise else None
    refusal = too_large(text)
    tokens = count_tokens(text) if refusal is None else None
    if tokens is not None and tokens.total - tokens.in_literals > MAX_PARSED_TOKENS:
        # More tokens than libcst may parse even were every data table elided: refused
        # before CPython builds its syntax tree, which would take as much memory again.
        refusal = too_many_tokens(tokens.total)
    verdict = verdict_of(text) if refusal is None else None
    if verdict is not None and verdict.too_deep is not None:
        refusal = verdict.too_deep
    if refusal is not None:
        return [_input_error(path, str(refusal), refusal.line, refusal.column)], nothing
    parsed_text = text if verdict is None or verdict.tree is None else elide_data_tables(text, verdict.tree)
    if tokens is not None:
        parsed_tokens = count_tokens(parsed_text) if parsed_text is not text else tokens
        refusal = too_many_tokens(parsed_tokens.total) if parsed_tokens is not None else None
        if refusal is not None:
            return [_input_error(path, str(refusal), refusal.line, refusal.column)], nothing
    try:
        try:
            module = parse(parsed_text)
        except cst.ParserSyntaxError:
            if verdict is None or verdict.tree is None:
                raise
            # Valid Python that libcst refuses as written (tabs in indentation, a backslash
            # at the end): the same text spelled its way, every position unchanged.
            module = parse(respelled(parsed_text, verdict.tree))
    except cst.ParserSyntaxError as error:
        # CPython's message and position are the precise ones; libcst's stand
        # alone only for code CPython accepts (newer syntax than this Python).
        if verdict is not None and verdict.syntax_error is not None:
            known = verdict.syntax_error
            return [_input_error(path, str(known), known.line, known.column)], nothing
        message = (
            "not analysed: CPython accepts this code but libcst, the parser devlint uses, "
            f"does not ({libcst_syntax_message(error.message)})"
        )
        return [_input_error(path, message, error.raw_line, error.raw_column + 1)], nothing
    ctx = FileContext(path, text, module, settings, verdict.tree if verdict is not None else None, place, statement_facts)
    rules = [rule_type(ctx) for rule_type in active]
    _Dispatcher(ctx, rules).walk(module)
    summary = ctx.summary() if place.summarise else None
    findings = ctx.findings()
    ctx.release()
    return findings, summary


def check_file(path: Path, display: str, settings: Settings, keep_source: bool = False, place: FilePlace = NOWHERE_IN_PARTICULAR) -> FileResult:
    enabled, rule_types = selected_rules(settings)
    try:
        data = read_regular(path)[0] if display != "-" else sys.stdin.buffer.read()
    except OSError as error:
        return unreadable(path, display, settings, error)
    return check_bytes(data, path, display, settings, keep_source, enabled, rule_types, place)


def unreadable(path: Path, display: str, settings: Settings, error: OSError) -> FileResult:
    """The result of a path that could not be read: one DL000 naming why (filtered like any finding)."""
    if isinstance(error, NotRegularFile):
        message = f"not a regular file ({error.kind}): devlint reads only regular files"
    else:
        what = "folder" if os.path.isdir(path) else "file"
        message = f"cannot read {what}: {error.strerror or error}"
    result = FileResult(display, [_input_error(display, message)])
    return _filtered(result, selected_rules(settings)[0], settings, path, None)


def check_bytes(
    data: bytes,
    path: Path,
    display: str,
    settings: Settings,
    keep_source: bool = False,
    enabled: frozenset[str] | None = None,
    rule_types: Sequence[type[Rule]] | None = None,
    place: FilePlace = NOWHERE_IN_PARTICULAR,
    parse: Callable[[str], cst.Module] = parse_module,
    statement_facts: StatementFacts | None = None,
    verdict_of: Callable[[str], PythonVerdict] = python_verdict,
) -> FileResult:
    if enabled is None or rule_types is None:
        enabled, rule_types = selected_rules(settings)
    # A file that cannot be read or is skipped has nothing to tell its importers.
    result = FileResult(display, summary=ModuleSummary(display) if place.summarise else None)
    try:
        # A notebook is analysed as its code cells joined (devlint/notebook.py), never as its JSON.
        source = read_notebook(data) if is_notebook(path) else decode(data)
    except UnreadableSource as error:
        result.findings = [_input_error(display, str(error), error.line, error.column)]
        return _filtered(result, enabled, settings, path, None)
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        result.findings = [_internal_error(display, error)]
        return _filtered(result, enabled, settings, path, None)
    if keep_source:
        result.source = source  # kept even for skipped files: --stdin-filename --fix echoes it
        result.checked_with = (settings, place)
    if skips_file(source.text):
        return result
    try:
        with _collector_paused():
            result.findings, result.summary = analyse_text(display, source, settings, rule_types, parse, place, statement_facts, verdict_of)
        result.facts = place.facts.digest() if place.facts else ""
    except RecursionError:
        result.findings = [_input_error(display, "too deeply nested to analyse")]
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        result.findings = [_internal_error(display, error)]
    result = _filtered(result, enabled, settings, path, source.text)
    if isinstance(source, NotebookSource):
        try:
            result.findings = source.located(result.findings)
        except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
            result.findings = _filtered(FileResult(display, [_internal_error(display, error)]), enabled, settings, path, None).findings
    return result


def _imports_only(path: str, text: str, place: FilePlace) -> ModuleSummary:
    """A file no rule looks at may still re-export a project class, or derive from one."""
    from devlint.analysis.summary import summarise_imports

    if "import" not in text or too_large(text) is not None:
        return ModuleSummary(path)
    tokens = count_tokens(text)
    if tokens is not None and too_many_tokens(tokens.total) is not None:
        return ModuleSummary(path)  # CPython's tree of it would take as much memory as a parse
    verdict = python_verdict(text)
    if verdict.tree is None:
        return ModuleSummary(path)
    return summarise_imports(path, verdict.tree, place.module_name, place.is_package)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file is checked; one pass after it.

    A parse allocates hundreds of thousands of nodes, and each young-generation
    pass the allocations trigger walks every node still alive: a third of the
    parse time went there. The tree is freed by reference counting; what few
    cycles the analysis makes are collected by the first pass after the file.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _filtered(result: FileResult, enabled: frozenset[str], settings: Settings, path: Path, text: str | None) -> FileResult:
    per_file = ignored_for_file(settings, path)
    if per_file:
        enabled = frozenset(code for code in enabled if not selector_match(code, per_file))
    noqa = NoqaMap(text) if text is not None else None
    kept = []
    for finding in result.findings:
        if finding.code not in enabled:
            continue
        if noqa is not None and noqa.silences(finding.code, finding.start.line):
            continue
        kept.append(finding)
    if noqa is not None and UNUSED_NOQA in enabled and UNUSED_NOQA not in noqa.file_codes:
        # After every other finding: a code in `# noqa` is unused if it silenced none of them.
        kept.extend(noqa.unused(result.path, enabled, _known_codes()))
    if text is not None and any(f.fix is not None for f in kept):
        kept = with_edit_positions(kept, line_starts(text))
    result.findings = sorted(kept, key=lambda f: f.sort_key)
    return result


@functools.cache
def _known_codes() -> frozenset[str]:
    return frozenset(info.code for info in all_infos())


def _worker_init(parent: int | None = None) -> None:
    sys.setrecursionlimit(_RECURSION_LIMIT)
    if parent is None:
        return  # checking in this process
    # Ctrl-C reaches the whole process group: the main process alone decides, and stops the
    # workers. Forked workers inherit its handlers; a worker is ended by SIGTERM, at once.
    # Both signals were held back while the worker started (`_signals_held`).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD_SIGNALS)
    threading.Thread(target=_exit_with, args=(parent,), name="devlint-parent-watch", daemon=True).start()


def _exit_with(parent: int) -> None:
    """End this worker once the main process is gone.

    A main process killed outright (SIGKILL, the OOM killer) cannot stop its
    workers, and they would wait for work forever: the pipe they wait on is
    held open by each of them. An orphan is adopted by another process, so its
    parent id changes.
    """
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_S)
    os._exit(1)


def _terminate_on_sigterm() -> Callable[[], None]:
    """SIGTERM ends the run like Ctrl-C does (workers stopped, exit 128 + 15); returns the undo.

    Only in the main thread, and only where no one else handles SIGTERM.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def terminated(number: int, frame: object) -> None:
        raise SystemExit(128 + number)

    signal.signal(signal.SIGTERM, terminated)
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def _worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """Worker processes that never outlive the run.

    When the run ends early (Ctrl-C, SIGTERM, an error), the executor's own
    shutdown would wait for every batch already queued: the workers are
    stopped instead. Each worker also watches the main process (`_exit_with`).
    """
    undo = _terminate_on_sigterm()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(), initializer=_worker_init, initargs=(os.getpid(),))
    try:
        with _signals_held():
            # The first task starts the workers, here, while Ctrl-C and SIGTERM wait: a worker
            # they reached before it set its own handlers would die half-started, or worse,
            # raise in the middle of the executor's code.
            pool.submit(int)
        yield pool
    except BaseException:
        _stop_workers(pool)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        undo()


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait (they are delivered when the block ends); new processes inherit the hold."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now; the executor then marks the queued work broken, and nothing waits for it."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public handle before Python 3.14
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=_JOIN_S)
        if process.is_alive():
            process.kill()
            process.join(timeout=_JOIN_S)
    pool.shutdown(wait=False)


_Checked = tuple[FileResult, "str | None", "tuple[int, ...] | None"]
_Task = tuple[Path, str, Settings, bool, bool, FilePlace]


def _check_one(args: _Task) -> _Checked:
    """One file's result, with the hash and stat of the very bytes it came from (for the cache)."""
    path, display, settings, keep_source, want_digest, place = args
    if not want_digest or display == "-":
        return check_file(path, display, settings, keep_source, place), None, None
    from devlint.cache import content_hash, stat_key

    try:
        data, st = read_regular(path)
    except OSError as error:
        return unreadable(path, display, settings, error), None, None
    return check_bytes(data, path, display, settings, keep_source, place=place), content_hash(data), stat_key(st)


def _check_batch(batch: list[_Task]) -> list[_Checked]:
    return [_check_one(task) for task in batch]


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1  # the cores this process may use (taskset, containers)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _batches(tasks: list[_Task], jobs: int) -> list[list[int]]:
    """Task indices grouped for the workers: largest files first, each alone; small ones bundled.

    Largest-first keeps one big generated file from finishing last while the
    other workers idle; bundling the many small files saves a round trip
    between processes for each.
    """
    sizes = []
    for path, *_ in tasks:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    order = sorted(range(len(tasks)), key=lambda i: -sizes[i])
    budget = max(16_384, sum(sizes) // (jobs * 64))
    batches: list[list[int]] = []
    current: list[int] = []
    weight = 0
    for index in order:
        current.append(index)
        weight += sizes[index]
        if weight >= budget or len(current) >= 64:
            batches.append(current)
            current, weight = [], 0
    if current:
        batches.append(current)
    return batches


def _pool_context():  # noqa: ANN202 - a multiprocessing context
    import multiprocessing

    # fork: workers start in milliseconds with libcst and the rules already
    # imported, where spawn would import them again in each (~0.3 s apiece).
    # macOS's fork is unsafe with system frameworks, hence spawn there.
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


class ResultCache(Protocol):
    def lookup(self, path: Path, display: str, settings: Settings | None = None) -> FileResult | None: ...

    def store(
        self,
        path: Path,
        result: FileResult,
        digest: str | None = None,
        stat: tuple[int, ...] | None = None,
        settings: Settings | None = None,
    ) -> None: ...

    def restamp(self, path: Path, facts: str, settings: Settings | None = None) -> None: ...

    def flush(self) -> None: ...


def _recheck_alone(tasks: list[_Task], fresh: list[_Checked | None]) -> None:
    """After a worker died (a native crash, the OOM killer), check the files it left one at a time.

    Only the file that kills its process again is lost, as DL999; every other
    file keeps its result.
    """
    pending = [index for index, item in enumerate(fresh) if item is None]
    while pending:
        with _worker_pool(1) as pool:
            for position, index in enumerate(pending):
                try:
                    fresh[index] = pool.submit(_check_one, tasks[index]).result()
                except BrokenProcessPool:
                    path, display, settings, *_ = tasks[index]
                    message = "the devlint worker process checking this file died (a crash or out of memory); please report it"
                    crash = FileResult(display, [Finding(ENGINE_CODES[1].code, message, display, Position(1, 1), Position(1, 1))])
                    fresh[index] = (_filtered(crash, selected_rules(settings)[0], settings, path, None), None, None)
                    pending = pending[position + 1 :]
                    break
            else:
                pending = []


def check_files(
    files: Iterable[tuple[Path, str] | tuple[Path, str, Settings]],
    settings: Settings,
    jobs: int | None = None,
    keep_source: bool = False,
    cache: ResultCache | None = None,
    project: bool = True,
) -> list[FileResult]:
    """Check files in parallel; results come back in input order whatever the job count.

    A file given with settings of its own (its nearest configuration) is checked
    under those; the others under `settings`. With `project`, each file is
    checked knowing what the project's other files tell it (project/index.py): a
    first pass analyses every file and summarises it; a file whose imports reach
    facts that change its analysis (a Module base class, a device variable, a
    helper returning a CPU tensor) is checked again with them.
    """
    files = [(item[0], item[1], item[2] if len(item) > 2 else settings) for item in files]  # type: ignore[misc]
    if keep_source:
        cache = None  # a cached result has no source to fix
    jobs = jobs or _default_jobs()
    places = [_place_of(path, display, project) for path, display, _ in files]
    results: list[FileResult | None] = [None] * len(files)
    todo: list[int] = []
    for index, (path, display, own) in enumerate(files):
        hit = cache.lookup(path, display, own) if cache is not None else None
        if hit is not None and (not project or hit.summary is not None or not places[index].summarise):
            results[index] = hit
        else:
            todo.append(index)
    _check_in_parallel([(*files[i], keep_source, cache is not None, places[i]) for i in todo], todo, results, files, cache, jobs)
    if project:
        again = _to_check_again(files, places, results, settings, cache)
        _check_in_parallel([(*files[i], keep_source, cache is not None, place) for i, place in again], [i for i, _ in again], results, files, cache, jobs)
    if cache is not None:
        cache.flush()
    return [result for result in results if result is not None]


def _place_of(path: Path, display: str, project: bool) -> FilePlace:
    if not project or display == "-":
        return NOWHERE_IN_PARTICULAR
    from devlint.project.layout import module_name, project_root, real

    resolved = real(path)
    return FilePlace(module_name(resolved, project_root(resolved.parent)), path.name == "__init__.py", summarise=True)


def _to_check_again(
    files: list[tuple[Path, str, Settings]],
    places: list[FilePlace],
    results: list[FileResult | None],
    settings: Settings,
    cache: ResultCache | None,
) -> list[tuple[int, FilePlace]]:
    """The files whose imported project facts differ from those their result was computed with."""
    from devlint.analysis.imported import ImportedFacts
    from devlint.project.index import ProjectIndex, only_silences, significant

    from devlint.project.layout import real

    silenced = frozenset(rule.code for rule in all_rules() if rule.silent_on_gpu_only)
    summaries = {real(path): result.summary for (path, _, _), result in zip(files, results) if result is not None and result.summary is not None}
    index = ProjectIndex(summaries, functools.partial(_dependency_summary, settings=settings, cache=cache))
    again = []
    for position, ((path, _, own), place, result) in enumerate(zip(files, places, results)):
        if result is None or result.summary is None:
            continue
        facts = index.facts_for(path, result.summary)
        wanted = facts if significant(facts) else ImportedFacts()
        digest = wanted.digest() if wanted else ""
        if result.facts == "" and only_silences(wanted, {finding.code for finding in result.findings}, silenced):
            # Facts that only silence rules this file has no finding of (imports of a Triton or
            # NCCL file) cannot change its result: it holds under them as it is.
            result.facts = digest
            if cache is not None:
                cache.restamp(path, digest, own)
            continue
        if result.facts != digest:
            # The index is made of first-pass summaries only: the second pass makes none, so a warm
            # run sees exactly what a cold one does.
            again.append((position, FilePlace(place.module_name, place.is_package, wanted)))
    return again


def _dependency_summary(path: Path, settings: Settings, cache: ResultCache | None) -> ModuleSummary | None:
    """The summary of a project file the run does not check (an import of a file named alone)."""
    display = os.path.relpath(path)
    hit = cache.lookup(path, display, settings) if cache is not None else None
    if hit is not None and hit.summary is not None:
        return hit.summary
    _worker_init()
    result, digest, stat = _check_one((path, display, settings, False, cache is not None, _place_of(path, display, True)))
    if cache is not None and digest is not None:
        cache.store(path, result, digest, stat, settings)
    return result.summary


def _check_in_parallel(
    tasks: list[_Task],
    positions: list[int],
    results: list[FileResult | None],
    files: list[tuple[Path, str, Settings]],
    cache: ResultCache | None,
    jobs: int,
) -> None:
    """Check `tasks` and put each result at its position (a re-check keeps the first summary)."""
    fresh: list[_Checked | None] = [None] * len(tasks)
    # Starting worker processes costs more than checking a handful of files.
    if jobs <= 1 or len(tasks) < 8:
        _worker_init()
        fresh = [_check_one(task) for task in tasks]
    else:
        batches = _batches(tasks, jobs)
        # Forked workers share the parent's memory until they write to it; the
        # collector's passes over inherited objects would copy those pages in
        # every worker. Frozen objects are left out of its passes.
        gc.freeze()
        try:
            with _worker_pool(min(jobs, len(batches))) as pool:
                # Not `pool.map`: on an interruption it cancels the queued futures, which
                # Python 3.11's executor then fails to mark broken when the workers stop.
                futures = [pool.submit(_check_batch, [tasks[i] for i in batch]) for batch in batches]
                for batch, future in zip(batches, futures):
                    for task_index, item in zip(batch, future.result()):
                        fresh[task_index] = item
        except BrokenProcessPool:
            _recheck_alone(tasks, fresh)
        finally:
            gc.unfreeze()
    for index, item in zip(positions, fresh):
        assert item is not None
        result, digest, stat = item
        previous = results[index]
        if result.summary is None and previous is not None:
            result.summary = previous.summary
        results[index] = result
        if cache is not None and digest is not None:
            cache.store(files[index][0], result, digest, stat, files[index][2])
