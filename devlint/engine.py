"""Checks files: decode, parse, walk once with every selected rule, collect findings.

The engine knows rules only through their metadata and their visit methods.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol
from pathlib import Path

import libcst as cst

from devlint.config import Settings, enabled_codes, ignored_for_file, selector_match
from devlint.context import FileContext
from devlint.finding import Finding, Position
from devlint.names import LocalBindings
from devlint.rule import Rule
from devlint.rules import ENGINE_CODES, all_rules
from devlint.source import SourceText, UnreadableSource, decode
from devlint.suppression import NoqaMap, skips_file

# libcst walks the tree recursively; real code that nests a few hundred levels
# deep (generated tables, long `a + b + ...` chains) needs more than the default.
_RECURSION_LIMIT = 20_000


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    source: SourceText | None = None  # kept only when fixes are wanted


class _Dispatcher(cst.CSTVisitor):
    """One walk of the tree that calls every rule's visit_/leave_ methods."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]) -> None:
        super().__init__()
        self.ctx = ctx
        self._visit: dict[str, list[Callable[..., object]]] = {}
        self._leave: dict[str, list[Callable[..., object]]] = {}
        for visitor in (ctx.guards, *rules):
            for name in dir(type(visitor)):
                if name.startswith("visit_"):
                    self._visit.setdefault(name[6:], []).append(getattr(visitor, name))
                elif name.startswith("leave_"):
                    self._leave.setdefault(name[6:], []).append(getattr(visitor, name))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            self.ctx.enter_scope(LocalBindings.of(node))
        descend = True
        for method in self._visit.get(type(node).__name__, ()):
            if method(node) is False:
                descend = False
        return descend

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for method in self._leave.get(type(original_node).__name__, ()):
            method(original_node)
        if isinstance(original_node, (cst.FunctionDef, cst.Lambda)):
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


def check_text(path: str, source: SourceText, settings: Settings, rule_types: Sequence[type[Rule]]) -> list[Finding]:
    """Findings of the given rules on already-decoded text (no suppression applied)."""
    text = source.text
    active = [rule for rule in rule_types if any(needle in text for needle in rule.needles)]
    if not active:
        return []
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return [_input_error(path, f"syntax error: {error.message}", error.raw_line, error.raw_column + 1)]
    ctx = FileContext(path, text, module, settings)
    rules = [rule_type(ctx) for rule_type in active]
    module.visit(_Dispatcher(ctx, rules))
    return ctx.findings()


def check_file(path: Path, display: str, settings: Settings, keep_source: bool = False) -> FileResult:
    result = FileResult(display)
    enabled, rule_types = selected_rules(settings)
    try:
        data = path.read_bytes() if display != "-" else sys.stdin.buffer.read()
    except OSError as error:
        result.findings = [_input_error(display, f"cannot read file: {error.strerror or error}")]
        return _filtered(result, enabled, settings, path, None)
    return check_bytes(data, path, display, settings, keep_source, enabled, rule_types)


def check_bytes(
    data: bytes,
    path: Path,
    display: str,
    settings: Settings,
    keep_source: bool = False,
    enabled: frozenset[str] | None = None,
    rule_types: Sequence[type[Rule]] | None = None,
) -> FileResult:
    if enabled is None or rule_types is None:
        enabled, rule_types = selected_rules(settings)
    result = FileResult(display)
    try:
        source = decode(data)
    except UnreadableSource as error:
        result.findings = [_input_error(display, str(error), error.line, error.column)]
        return _filtered(result, enabled, settings, path, None)
    if skips_file(source.text):
        return result
    if keep_source:
        result.source = source
    try:
        result.findings = check_text(display, source, settings, rule_types)
    except RecursionError:
        result.findings = [_input_error(display, "too deeply nested to analyse")]
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        result.findings = [_internal_error(display, error)]
    return _filtered(result, enabled, settings, path, source.text)


def _filtered(result: FileResult, enabled: frozenset[str], settings: Settings, path: Path, text: str | None) -> FileResult:
    per_file = ignored_for_file(settings, path)
    noqa = NoqaMap(text) if text is not None else None
    kept = []
    for finding in result.findings:
        if finding.code not in enabled or (per_file and selector_match(finding.code, per_file)):
            continue
        if noqa is not None and noqa.silences(finding.code, finding.start.line):
            continue
        kept.append(finding)
    result.findings = sorted(kept, key=lambda f: f.sort_key)
    return result


def _worker_init() -> None:
    sys.setrecursionlimit(_RECURSION_LIMIT)


def _check_one(args: tuple[Path, str, Settings, bool]) -> FileResult:
    return check_file(*args)


class ResultCache(Protocol):
    def lookup(self, path: Path, display: str) -> FileResult | None: ...

    def store(self, path: Path, result: FileResult) -> None: ...

    def flush(self) -> None: ...


def check_files(
    files: Iterable[tuple[Path, str]],
    settings: Settings,
    jobs: int | None = None,
    keep_source: bool = False,
    cache: ResultCache | None = None,
) -> list[FileResult]:
    """Check files in parallel; results come back in input order whatever the job count."""
    files = list(files)
    results: list[FileResult | None] = [None] * len(files)
    todo: list[int] = []
    for index, (path, display) in enumerate(files):
        hit = cache.lookup(path, display) if cache is not None else None
        if hit is not None:
            results[index] = hit
        else:
            todo.append(index)
    tasks = [(files[i][0], files[i][1], settings, keep_source) for i in todo]
    jobs = jobs or os.cpu_count() or 1
    # Starting worker processes costs more than checking a handful of files.
    if jobs <= 1 or len(tasks) < 8:
        _worker_init()
        fresh = [_check_one(task) for task in tasks]
    else:
        chunk = max(1, min(16, len(tasks) // (jobs * 8)))
        with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init) as pool:
            fresh = list(pool.map(_check_one, tasks, chunksize=chunk))
    for index, result in zip(todo, fresh):
        results[index] = result
        if cache is not None:
            cache.store(files[index][0], result)
    if cache is not None:
        cache.flush()
    return [result for result in results if result is not None]
