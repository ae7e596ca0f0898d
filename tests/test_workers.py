"""Worker processes never outlive the run: SIGTERM, SIGKILL and Ctrl-C of the main process.

Each wait here has a limit, so that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import devlint.engine as engine
from devlint.cli import main

WAIT_S = 60
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")

# Slow enough to parse that the workers are still busy when the main process is stopped.
_BODY = "import torch\n\n" + "".join(f"def f{i}(x):\n    y = torch.zeros(3) + x * {i}\n    return y.sum()\n\n" for i in range(1500))


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped (a reparented one may never be in a container)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(predicate, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT_S} s for {what}")
        time.sleep(0.05)


@pytest.fixture
def slow_tree(tmp_path: Path) -> Path:
    for index in range(16):
        (tmp_path / f"m{index:02}.py").write_text(_BODY)
    return tmp_path


@pytest.fixture
def started(slow_tree: Path) -> Iterator[tuple[subprocess.Popen[str], set[int]]]:
    """devlint checking the slow tree with two workers, once both workers are running."""
    process = subprocess.Popen(
        [sys.executable, "-m", "devlint", "check", "--no-cache", "--jobs", "2", "."],
        cwd=slow_tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell job would have
    )
    workers: set[int] = set()
    try:
        def two_workers() -> bool:
            workers.update(_children(process.pid))
            return len(workers) >= 2 or process.poll() is not None

        _wait_for(two_workers, "two worker processes")
        assert process.poll() is None, "the check ended before it could be stopped"
        yield process, workers
    finally:
        for pid in [process.pid, *workers]:  # only what this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        process.communicate(timeout=WAIT_S)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_stopping_the_main_process_stops_the_workers(started: tuple[subprocess.Popen[str], set[int]], how: signal.Signals) -> None:
    process, workers = started
    os.kill(process.pid, how)
    _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == (128 + signal.SIGTERM if how == signal.SIGTERM else -signal.SIGKILL)
    assert "Traceback" not in stderr
    _wait_for(lambda: not any(_alive(pid) for pid in workers), "the workers to exit")


def test_ctrl_c_exits_130_and_stops_the_workers(started: tuple[subprocess.Popen[str], set[int]]) -> None:
    process, workers = started
    os.killpg(process.pid, signal.SIGINT)  # what the terminal sends the whole job on Ctrl-C
    _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 130
    assert stderr == "devlint: interrupted\n"
    _wait_for(lambda: not any(_alive(pid) for pid in workers), "the workers to exit")


def test_ctrl_c_without_workers_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.py").write_text("import torch\n")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "check_files", interrupted)
    result = CliRunner().invoke(main, ["check", "--no-cache", str(tmp_path)])
    assert (result.exit_code, result.stdout, result.stderr) == (130, "", "devlint: interrupted\n")
