"""Findings of unchanged files, kept between runs in `.devlint_cache/`.

One JSON file per (devlint build, configuration) holds every file's entry, so
a warm run reads one file and stats each source: no parse, no libcst import,
no read of an unchanged file. The file is named by a key made of devlint's
version, a stamp of its own source files (an edited rule in a development
checkout must not serve stale findings), the libcst it parses with, and every
setting that changes which findings a file gets. Each entry is checked
against the file's stat first (mtime, ctime, size, inode) and, when that
differs, against a hash of its content: a `touch` or a checkout that
rewrites identical bytes costs one read, not a parse.

The cache is only ever an accelerator. A missing, unreadable, corrupted or
foreign file is ignored and rebuilt; a write that fails is skipped; two
runs at once each replace the file atomically, so the last one wins and
the file is always whole.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from devlint import __version__
from devlint.atomic import write_atomic
from devlint.analysis.summary import ModuleSummary
from devlint.finding import CellSpan, Edit, Finding, Fix, Position
from devlint.reading import read_regular

from devlint.file_result import FileResult

if TYPE_CHECKING:
    from devlint.config import Settings

CACHE_DIR = ".devlint_cache"
_FORMAT = 4  # 2: fix edits carry their lines and columns; 3: project summaries and facts; 4: notebook cells
# A file changed this recently may change again within the same timestamp
# tick after we read it (the "racy git" problem): its stat is not trusted,
# only its content hash.
_RACY_NS = 2_000_000_000
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by devlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

# ctime too: a write that restores the old mtime (and size) still moves it.
StatKey = tuple[int, int, int, int]  # mtime_ns, ctime_ns, size, inode


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def trusted_stat(st: os.stat_result, now_ns: int) -> StatKey | None:
    """The stat to remember for a file just read, or None while it is too fresh to trust."""
    if now_ns - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_NS:
        return None
    return stat_key(st)


def _code_stamp() -> str:
    """What identifies the analysis code: version, devlint's own sources, libcst, Python."""
    parts = [__version__, sys.version]
    package = Path(__file__).resolve().parent
    for folder, dirnames, filenames in os.walk(package):
        # The runtime half never changes a static finding.
        dirnames[:] = sorted(d for d in dirnames if d not in ("runtime", "__pycache__"))
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                parts.append(f"{os.path.relpath(path, package)}:{st.st_size}:{st.st_mtime_ns}")
    spec = importlib.util.find_spec("libcst")  # finds, does not import
    if spec is not None and spec.origin:
        try:
            st = os.stat(spec.origin)
            parts.append(f"libcst:{spec.origin}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            pass
    return "\n".join(parts)


def settings_key(settings: "Settings") -> str:
    """Every setting that changes the findings a file gets once filtered.

    The engine filters by selection, per-file-ignores and noqa after the
    analysis, so the cache holds filtered findings and the key names the
    selection too, not only `Settings.fingerprint()`.
    """
    return repr(
        (
            settings.fingerprint(),
            settings.select,
            settings.ignore,
            settings.extend_select,
            settings.extend_ignore,
            # Each pattern carries the folder it is relative to.
            settings.per_file_ignores,
        )
    )


def cache_key(settings: "Settings") -> str:
    material = f"{_FORMAT}\n{_code_stamp()}\n{settings_key(settings)}"
    return hashlib.blake2b(material.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


# -- findings as JSON ----------------------------------------------------------

def _dump_finding(finding: Finding) -> list[Any]:
    fix = finding.fix
    dumped_fix = None
    if fix is not None:
        dumped_fix = [fix.safe, fix.title, [[e.start, e.end, e.replacement, *_dump_positions(e)] for e in fix.edits]]
    dumped = [
        finding.code,
        finding.message,
        finding.start.line,
        finding.start.column,
        finding.end.line,
        finding.end.column,
        dumped_fix,
    ]
    if finding.cell is not None:  # a notebook's: the cell, and the span within it and in the file
        span = finding.cell
        dumped.append([span.cell, *(value for p in (span.start, span.end, span.file_start, span.file_end) for value in (p.line, p.column))])
    return dumped


def _dump_positions(edit: Edit) -> list[int]:
    if edit.start_position is None or edit.end_position is None:
        return []
    positions = [edit.start_position.line, edit.start_position.column, edit.end_position.line, edit.end_position.column]
    return positions if edit.cell is None else [*positions, edit.cell]


def _load_edit(raw: list[Any]) -> Edit:
    start, end, replacement, *positions = raw
    if positions:
        line, column, end_line, end_column, *cell = (int(value) for value in positions)
        start_position, end_position = Position(line, column), Position(end_line, end_column)
        return Edit(int(start), int(end), str(replacement), start_position, end_position, cell[0] if cell else None)
    return Edit(int(start), int(end), str(replacement))


def _load_cell(raw: list[Any]) -> CellSpan:
    number, *values = (int(value) for value in raw)
    if len(values) != 8:
        raise ValueError("bad cell span")
    start, end, file_start, file_end = (Position(values[i], values[i + 1]) for i in range(0, 8, 2))
    return CellSpan(number, start, end, file_start, file_end)


def _load_finding(raw: list[Any], path: str) -> Finding:
    code, message, line, column, end_line, end_column, raw_fix, *raw_cell = raw
    cell = _load_cell(raw_cell[0]) if raw_cell else None
    fix = None
    if raw_fix is not None:
        safe, title, edits = raw_fix
        fix = Fix(tuple(_load_edit(edit) for edit in edits), bool(safe), str(title))
    for value in (line, column, end_line, end_column):
        if type(value) is not int:
            raise ValueError("bad position")
    if not isinstance(code, str) or not isinstance(message, str):
        raise ValueError("bad finding")
    return Finding(code, message, path, Position(line, column), Position(end_line, end_column), fix, cell=cell)


# -- the cache -------------------------------------------------------------------

@dataclass
class _Entry:
    stat: StatKey | None  # None: not trusted, compare the hash
    digest: str
    findings: list[list[Any]]
    summary: dict[str, Any] | None = None  # what the file tells its importers (first pass)
    facts: str = ""  # the digest of the imported project facts the findings were computed with


class Cache:
    """The results of one root's files under one configuration."""

    def __init__(self, file: Path | None, key: str) -> None:
        self.file = file  # None: a cache that keeps nothing
        self.key = key
        self._entries: dict[str, _Entry] = {}
        self._dirty = False
        self._now_ns = time.time_ns()
        self._load()

    @classmethod
    def for_root(cls, root: Path, settings: "Settings | None" = None) -> "Cache":
        from devlint.config import Settings

        settings = settings if settings is not None else Settings(root=root)
        key = cache_key(settings)
        return cls(Path(root) / CACHE_DIR / __version__ / f"{key}.json", key)

    # -- reading -------------------------------------------------------------
    def _load(self) -> None:
        if self.file is None:
            return
        try:
            # A named pipe or a link to /dev/zero in its place is not read: it would block or never end.
            data = json.loads(read_regular(self.file)[0])
            if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != self.key:
                return
            files = data["files"]
            if not isinstance(files, dict):
                return
            entries = {}
            for path, (stat, digest, findings, summary, facts) in files.items():
                if stat is not None:
                    stat = tuple(stat)
                    if len(stat) != 4 or not all(type(value) is int for value in stat):
                        return
                if not isinstance(digest, str) or not isinstance(findings, list) or not isinstance(facts, str):
                    return
                if summary is not None and not isinstance(summary, dict):
                    return
                entries[path] = _Entry(stat, digest, findings, summary, facts)
        except (OSError, ValueError, TypeError, KeyError, RecursionError):
            # Missing, unreadable, truncated or foreign: start afresh.
            return
        self._entries = entries

    def lookup(self, path: Path, display: str, settings: "Settings | None" = None) -> "FileResult | None":
        """The cached result if the file is unchanged, its findings reported under `display`."""

        name = os.path.abspath(path)
        entry = self._entries.get(name)
        if entry is None:
            return None
        try:
            st = os.stat(name)
        except OSError:
            return None
        if not S_ISREG(st.st_mode):
            return None  # no longer a regular file: the check says what it is
        if entry.stat is None or entry.stat != stat_key(st):
            # Changed stat: the content decides (a touch, a re-checkout).
            try:
                data = read_regular(name)[0]
            except OSError:
                return None
            if content_hash(data) != entry.digest:
                return None
            fresh = trusted_stat(st, self._now_ns)
            if fresh != entry.stat:
                entry.stat = fresh
                self._dirty = True
        try:
            findings = [_load_finding(raw, display) for raw in entry.findings]
            summary = ModuleSummary.from_json(entry.summary) if entry.summary is not None else None
        except (ValueError, TypeError, KeyError, AttributeError):
            del self._entries[name]
            self._dirty = True
            return None
        return FileResult(display, findings, summary=summary, facts=entry.facts)

    # -- writing -------------------------------------------------------------
    def store(
        self,
        path: Path,
        result: "FileResult",
        digest: str | None = None,
        stat: StatKey | None = None,
        settings: "Settings | None" = None,
    ) -> None:
        """Remember a result. `digest`/`stat` describe the bytes the result came from.

        Without them the file is read again here, which can attribute a result
        to bytes written after it was computed; the engine passes both.
        """
        if self.file is None:
            return
        name = os.path.abspath(path)
        if digest is None:
            try:
                data, st = read_regular(name)
            except OSError:
                return
            digest = content_hash(data)
            stat = trusted_stat(st, self._now_ns)
        elif stat is not None and self._now_ns - max(stat[0], stat[1]) < _RACY_NS:
            stat = None
        summary = result.summary.to_json() if result.summary is not None else None
        self._entries[name] = _Entry(stat, digest, [_dump_finding(f) for f in result.findings], summary, result.facts)
        self._dirty = True

    def restamp(self, path: Path, facts: str, settings: "Settings | None" = None) -> None:
        """The stored result holds under these project facts too (they could not change it)."""
        entry = self._entries.get(os.path.abspath(path))
        if entry is not None and entry.facts != facts:
            entry.facts = facts
            self._dirty = True

    def flush(self) -> None:
        """Write the cache if anything changed: a whole file, put in place atomically."""
        if self.file is None or not self._dirty:
            return
        payload = {
            "format": _FORMAT,
            "key": self.key,
            "files": {name: [e.stat, e.digest, e.findings, e.summary, e.facts] for name, e in self._entries.items()},
        }
        try:
            _prepare_dir(self.file.parent.parent.parent)
            self.file.parent.mkdir(parents=True, exist_ok=True)
            data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
            write_atomic(self.file, data, keep_mode=False, durable=False, suffix=".tmp")
        except OSError:
            # A read-only tree or a full disk costs speed, never the run.
            return
        self._dirty = False


class Caches:
    """One cache per configuration: each file's findings are kept under the key of its own settings,
    in the `.devlint_cache/` beside the configuration that governs it."""

    def __init__(self) -> None:
        self._caches: dict[tuple[str, Path], Cache] = {}

    def _cache(self, settings: "Settings | None") -> Cache:
        from devlint.config import Settings

        settings = settings if settings is not None else Settings()
        key = (settings_key(settings), Path(settings.root))
        cache = self._caches.get(key)
        if cache is None:
            cache = self._caches[key] = Cache.for_root(settings.root, settings)
        return cache

    def lookup(self, path: Path, display: str, settings: "Settings | None" = None) -> "FileResult | None":
        return self._cache(settings).lookup(path, display)

    def store(
        self,
        path: Path,
        result: "FileResult",
        digest: str | None = None,
        stat: StatKey | None = None,
        settings: "Settings | None" = None,
    ) -> None:
        self._cache(settings).store(path, result, digest, stat)

    def restamp(self, path: Path, facts: str, settings: "Settings | None" = None) -> None:
        self._cache(settings).restamp(path, facts)

    def flush(self) -> None:
        for cache in self._caches.values():
            cache.flush()


def _prepare_dir(root: Path) -> None:
    """Create `.devlint_cache/` with a `.gitignore` so that it is never committed."""
    folder = root / CACHE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", "# Automatically created by devlint.\n*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
        path = folder / name
        if not path.exists():
            try:
                with open(path, "x", encoding="utf-8") as out:
                    out.write(text)
            except FileExistsError:
                pass
