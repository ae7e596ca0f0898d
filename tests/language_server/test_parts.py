"""The server's parts without a client: positions, the worker, the scheduler, the command."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from devlint.config import Settings
from devlint.finding import Finding, Position
from devlint.server.jobs import Job, Outcome
from devlint.server.scheduler import Analysed, Scheduler, Snapshot
from devlint.server.text_positions import TextLines
from devlint.server.worker import Worker, as_saved
from devlint.server.worker_process import WorkerGone

ROOT = Path(__file__).resolve().parent.parent.parent


# -- positions -------------------------------------------------------------
def test_columns_count_utf16_units_and_only_real_line_breaks_end_lines() -> None:
    text = 'a = "\U0001f600"; b.cuda()\fx = 1\ny = 2\r\nz = 3\r'
    lines = TextLines(text)
    # The emoji is one character for devlint, two UTF-16 units for LSP; \f is no line break.
    assert lines.at(Position(1, 13)) == types.Position(0, 13)
    assert lines.at(Position(2, 1)) == types.Position(1, 0)
    assert lines.at(Position(3, 5)) == types.Position(2, 4)
    assert lines.line_count == 4
    assert lines.offset(types.Position(0, 13)) == 12
    assert TextLines(text, "utf-8").at(Position(1, 13)) == types.Position(0, 15)
    assert TextLines(text, "utf-32").at(Position(1, 13)) == types.Position(0, 12)


def test_a_position_past_the_end_is_clamped() -> None:
    lines = TextLines("x = 1\n")
    assert lines.at(Position(1, 40)) == types.Position(0, 5)
    assert lines.at(Position(9, 1)) == types.Position(1, 0)


# -- the worker ------------------------------------------------------------
def test_text_is_checked_as_the_bytes_its_coding_line_names() -> None:
    text = "# -*- coding: latin-1 -*-\nname = 'café'\n"
    assert as_saved(text) == text.encode("latin-1")
    assert as_saved("x = 'café'\n") == "x = 'café'\n".encode()


def test_the_worker_checks_fixes_and_forgets_a_document() -> None:
    worker = Worker()
    text = (ROOT / "fixtures" / "inference_buggy.py").read_text(encoding="utf-8")
    checked = worker.handle(Job("check", "doc", "inference.py", text, Settings()))
    assert [(f.code, f.start.line) for f in checked.findings] == [("DL501", 12), ("DL101", 14), ("DL101", 18), ("DL302", 21)]
    fixed = worker.handle(Job("fix_all", "doc", "inference.py", text, Settings()))
    assert fixed.fixed_text is not None and "logits.softmax(dim=1).cpu().numpy()" in fixed.fixed_text
    assert [f.code for f in fixed.findings] == ["DL501", "DL101", "DL101"]
    assert worker.handle(Job("forget", "doc", "inference.py")) == Outcome()


def test_the_worker_reads_jobs_until_its_input_ends_and_answers_each() -> None:
    from devlint.server import jobs

    requests = jobs.encode(Job("check", "a", "a.py", "import torch\nx = torch.zeros(1).cuda()\n", Settings()))
    requests += jobs.encode(Job("check", "b", "b.py", "import torch\n\ndef f(:\n", Settings()))
    done = subprocess.run([sys.executable, "-m", "devlint.server.worker"], input=requests, capture_output=True, check=True)
    import io

    stream = io.BytesIO(done.stdout)
    first, second = jobs.read_message(stream), jobs.read_message(stream)
    assert jobs.read_message(stream) is None
    assert isinstance(first, Outcome) and [f.code for f in first.findings] == ["DL101"]
    assert isinstance(second, Outcome) and [(f.code, f.message) for f in second.findings] == [("DL000", "syntax error: invalid syntax")]


# -- the scheduler ---------------------------------------------------------
class FakeWorker:
    """Answers each check once the test lets it; dies when killed."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.release = asyncio.Event()
        self.killed = 0
        self.fail_next = False

    async def run(self, job: Job) -> Outcome:
        self.jobs.append(job)
        killed = self.killed
        if self.fail_next:
            self.fail_next = False
            raise WorkerGone("crashed")
        while not self.release.is_set():
            if self.killed != killed:
                raise WorkerGone("killed")
            await asyncio.sleep(0.001)
        return Outcome((Finding("DL101", job.text, job.path, Position(1, 1), Position(1, 2)),))

    def kill(self) -> None:
        self.killed += 1

    async def close(self) -> None:
        return None


class Documents:
    def __init__(self) -> None:
        self.texts: dict[str, tuple[int, str]] = {}

    def snapshot(self, uri: str) -> Snapshot | None:
        if uri not in self.texts:
            return None
        version, text = self.texts[uri]
        return Snapshot(uri, version, text, uri, Settings())


def _scheduler(slow: float = 60.0, debounce: float = 0.0) -> tuple[Scheduler, FakeWorker, Documents, list[Analysed], list[str]]:
    worker, documents, published, logged = FakeWorker(), Documents(), [], []
    scheduler = Scheduler(worker, documents.snapshot, published.append, logged.append, debounce=debounce, slow=slow)  # type: ignore[arg-type]
    return scheduler, worker, documents, published, logged


async def _until(condition, what: str) -> None:  # noqa: ANN001
    for _ in range(5000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never happened: {what}")


def test_changes_during_a_check_are_checked_once_newest_first_and_stale_results_are_dropped() -> None:
    async def scenario() -> None:
        scheduler, worker, documents, published, _ = _scheduler()
        scheduler.start()
        documents.texts["a"] = (1, "v1")
        scheduler.request("a")
        await _until(lambda: len(worker.jobs) == 1, "the first check starts")
        for version in (2, 3, 4):
            documents.texts["a"] = (version, f"v{version}")
            scheduler.request("a", debounced=True)
        worker.release.set()
        await _until(lambda: len(published) == 1, "a result is published")
        await scheduler.close()
        assert [job.text for job in worker.jobs] == ["v1", "v4"]
        assert [(r.snapshot.version, r.findings[0].message) for r in published] == [(4, "v4")]

    asyncio.run(scenario())


def test_a_burst_of_changes_within_the_debounce_is_checked_once() -> None:
    async def scenario() -> None:
        # Changes 10 ms apart against a 1 s debounce: without it, the first would be checked at once.
        scheduler, worker, documents, published, _ = _scheduler(debounce=1.0)
        scheduler.start()
        worker.release.set()
        for version in (1, 2, 3):
            documents.texts["a"] = (version, f"v{version}")
            scheduler.request("a", debounced=True)
            await asyncio.sleep(0.01)
        await _until(lambda: len(published) == 1, "the burst is published")
        await scheduler.close()
        assert [job.text for job in worker.jobs] == ["v3"]

    asyncio.run(scenario())


def test_a_check_still_running_after_a_newer_version_arrived_is_cancelled() -> None:
    async def scenario() -> None:
        scheduler, worker, documents, published, logged = _scheduler(slow=0.05)
        scheduler.start()
        documents.texts["a"] = (1, "v1")
        scheduler.request("a")
        await _until(lambda: len(worker.jobs) == 1, "the first check starts")
        documents.texts["a"] = (2, "v2")
        scheduler.request("a", debounced=True)
        await _until(lambda: worker.killed == 1, "the slow check is killed")
        worker.release.set()
        await _until(lambda: len(published) == 1, "the newer version is published")
        await scheduler.close()
        assert [job.text for job in worker.jobs] == ["v1", "v2"]
        assert published[0].snapshot.version == 2
        assert len(logged) == 1 and logged[0].startswith("cancelled the check of a (version 1) after ")

    asyncio.run(scenario())


def test_a_worker_that_dies_on_its_own_gives_dl999_and_the_next_check_runs() -> None:
    async def scenario() -> None:
        scheduler, worker, documents, published, logged = _scheduler()
        scheduler.start()
        worker.fail_next = True
        worker.release.set()
        documents.texts["a"] = (1, "v1")
        scheduler.request("a")
        await _until(lambda: len(published) == 1, "the crash is reported")
        [crash] = published[0].findings
        assert crash.code == "DL999"
        assert crash.message == "the devlint worker process died while checking this file (a crash or out of memory); please report it"
        assert logged == ["the devlint worker died while checking a (crashed); starting another"]
        documents.texts["a"] = (2, "v2")
        scheduler.request("a")
        await _until(lambda: len(published) == 2, "the next check is published")
        await scheduler.close()
        assert published[1].findings[0].message == "v2"

    asyncio.run(scenario())


# -- the command -----------------------------------------------------------
def test_without_the_server_extra_the_command_says_what_to_install() -> None:
    probe = "import sys; sys.modules['pygls'] = None; from devlint.cli import main; main(['server'])"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("devlint: error: devlint server needs the `server` extra: pip install 'devlint[server]' (")
    assert done.stdout == ""


def test_checking_never_imports_the_server_dependencies() -> None:
    probe = (
        "import sys; from click.testing import CliRunner; from devlint.cli import main; "
        "CliRunner().invoke(main, ['check', '--no-cache', 'fixtures/']); "
        "print(sorted(m for m in ('pygls', 'lsprotocol', 'devlint.server') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
