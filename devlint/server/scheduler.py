"""When each open document is checked: newest version only, debounced, slow checks cancelled.

One worker checks one document at a time. A change asks for a check after a
short debounce; changes that arrive meanwhile only move the request to the
newest text. A result that no longer matches the document is dropped rather
than published at wrong positions. A check still running `slow` seconds
after a newer version arrived is cancelled by killing the worker (the next
job starts a fresh one): waiting for it would hold every other document up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from devlint.config import Settings
from devlint.finding import Finding, Position
from devlint.server.jobs import Job, Outcome
from devlint.server.notebooks import NotebookCell
from devlint.server.worker_process import WorkerGone, WorkerProcess

# Coalesces the bursts an editor sends for one action (a paste, an auto-closed
# bracket, a formatter's edits) without adding a noticeable delay to typing.
DEBOUNCE_S = 0.005
# A check running this long after its document changed again is cancelled.
SLOW_S = 0.25


@dataclass(frozen=True)
class Snapshot:
    """A document as the editor has it now, with the settings that apply to it."""

    uri: str
    version: int | None
    text: str
    path: str
    settings: Settings
    excluded: bool = False  # matched by `exclude` with `force-exclude`: reported clean, as by the CLI
    cells: "tuple[NotebookCell, ...]" = ()  # a notebook's cells, whose documents get its findings

    def same_text(self, other: "Snapshot | None") -> bool:
        return other is not None and other.version == self.version and other.text == self.text


@dataclass(frozen=True)
class Analysed:
    snapshot: Snapshot
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class _Running:
    snapshot: Snapshot
    started: float


class Scheduler:
    def __init__(
        self,
        worker: WorkerProcess,
        snapshot: Callable[[str], Snapshot | None],
        publish: Callable[[Analysed], None],
        log: Callable[[str], None],
        debounce: float = DEBOUNCE_S,
        slow: float = SLOW_S,
    ) -> None:
        self._worker = worker
        self._snapshot = snapshot
        self._publish = publish
        self._log = log
        self._debounce = debounce
        self._slow = slow
        self.results: dict[str, Analysed] = {}
        self._due: dict[str, float] = {}
        self._running: _Running | None = None
        self._cancelled: _Running | None = None
        self._wake = asyncio.Event()
        self._published = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._loop())

    def request(self, uri: str, debounced: bool = False) -> None:
        """Check `uri` again: now, or after the debounce when the user is typing."""
        loop = asyncio.get_running_loop()
        self._due[uri] = loop.time() + (self._debounce if debounced else 0.0)
        self._wake.set()
        running = self._running
        if running is not None and running.snapshot.uri == uri:
            loop.call_at(max(loop.time(), running.started + self._slow), self._cancel_if_superseded, running)

    def _cancel_if_superseded(self, running: _Running) -> None:
        if self._running is running and running.snapshot.uri in self._due:
            elapsed = asyncio.get_running_loop().time() - running.started
            self._log(
                f"cancelled the check of {running.snapshot.uri} (version {running.snapshot.version}) "
                f"after {elapsed:.2f} s: a newer version arrived"
            )
            self._cancelled = running
            self._worker.kill()

    def forget(self, uri: str, path: str) -> None:
        self._due.pop(uri, None)
        self.results.pop(uri, None)
        asyncio.ensure_future(self._quietly(Job("forget", uri, path)))

    async def _quietly(self, job: Job) -> None:
        try:
            await self._worker.run(job)
        except WorkerGone:
            pass  # a new worker has no tree of that document anyway

    async def fix_all(self, uri: str) -> tuple[Snapshot, Outcome] | None:
        """The document with every safe fix applied, computed by the worker."""
        snap = self._snapshot(uri)
        if snap is None:
            return None
        try:
            return snap, await self._worker.run(Job("fix_all", uri, snap.path, snap.text, snap.settings))
        except WorkerGone:
            return None

    async def settled(self, uri: str, timeout: float) -> Analysed | None:
        """The result for the document's current text, waiting up to `timeout` s for it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = self.results.get(uri)
            current = self._snapshot(uri)
            if current is None:
                return None
            if result is not None and result.snapshot.same_text(current):
                return result
            running = self._running
            if uri not in self._due and (running is None or running.snapshot.uri != uri):
                self.request(uri)
            left = deadline - loop.time()
            if left <= 0:
                return None
            published = self._published
            try:
                await asyncio.wait_for(published.wait(), left)
            except asyncio.TimeoutError:
                return None

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        await self._worker.close()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._due:
                await self._wake.wait()
                self._wake.clear()
                continue
            uri, due = min(self._due.items(), key=lambda item: item[1])
            if due > loop.time():
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), due - loop.time())
                except asyncio.TimeoutError:
                    pass
                continue
            del self._due[uri]
            snap = self._snapshot(uri)
            if snap is None:
                continue
            await self._check(snap, loop.time())

    async def _check(self, snap: Snapshot, started: float) -> None:
        running = self._running = _Running(snap, started)
        try:
            if snap.excluded:
                outcome = Outcome()
            else:
                outcome = await self._worker.run(Job("check", snap.uri, snap.path, snap.text, snap.settings))
        except WorkerGone as gone:
            if self._cancelled is running:
                return  # on purpose: the newer version is already due
            self._log(f"the devlint worker died while checking {snap.uri} ({gone}); starting another")
            message = "the devlint worker process died while checking this file (a crash or out of memory); please report it"
            outcome = Outcome((Finding("DL999", message, snap.path, Position(1, 1), Position(1, 1)),))
        finally:
            self._running = None
            self._cancelled = None
        if not snap.same_text(self._snapshot(snap.uri)):
            return  # stale: the newer text is due already
        result = Analysed(snap, outcome.findings)
        self.results[snap.uri] = result
        self._publish(result)
        published, self._published = self._published, asyncio.Event()
        published.set()
