"""The pre-commit hook, run for real with `pre-commit try-repo` against a copy of this working tree.

pre-commit installs devlint into its own environment (pip, from PyPI for the
dependencies). The test is skipped only when pre-commit itself is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")

pytestmark = pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install -e '.[test]')")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=devlint-tests", "-c", "user.email=tests@devlint.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


_NOT_SOURCE = {".git", ".venv", "venv", "__pycache__", "build", "dist", ".devlint_cache", ".pytest_cache"}


def _working_tree_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True
    )
    if listed.returncode == 0:
        return [name for name in listed.stdout.decode().split("\0") if name]
    # Not a git checkout (an exported tree): everything but environments and build output.
    names = []
    for folder, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in _NOT_SOURCE and not d.endswith(".egg-info")]
        names.extend(os.path.relpath(os.path.join(folder, name), ROOT) for name in filenames)
    return names


def _snapshot_of_working_tree(target: Path) -> Path:
    """Tracked and untracked (not ignored) files, committed in a fresh repository: the hook as it is now."""
    for name in _working_tree_files():
        source = ROOT / name
        if source.is_file():
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    _git("init", "-q", cwd=target)
    _git("add", "-A", cwd=target)
    _git("commit", "-q", "-m", "snapshot", cwd=target)
    return target


def test_hook_definition() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: devlint\n" in text
    # pre-commit names the staged files: --force-exclude makes `exclude` apply to them, as ruff's hook does.
    assert "entry: devlint check --force-exclude\n" in text
    assert "language: python\n" in text
    # Notebooks too (pre-commit's `jupyter` type is `*.ipynb`).
    assert "types_or: [python, jupyter]\n" in text


def test_try_repo_runs_the_hook(tmp_path: Path) -> None:
    hook_repo = _snapshot_of_working_tree(tmp_path / "hook")
    project = tmp_path / "project"
    project.mkdir()
    (project / "bad.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                           "source": ["!nvidia-smi\n", "import torch\n", "x = torch.zeros(1).cuda()"]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    (project / "good.py").write_text(
        'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "model = torch.nn.Linear(2, 2).to(device)\n"
    )
    # A vendored copy of someone else's code, excluded by the project's configuration.
    (project / "pyproject.toml").write_text('[tool.devlint]\nexclude = ["third_party"]\n')
    (project / "third_party").mkdir()
    (project / "third_party" / "vendored.py").write_text("import torch\nnet = torch.nn.Linear(2, 2).cuda()\n")
    _git("init", "-q", cwd=project)
    _git("add", "-A", cwd=project)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PRE_COMMIT, "try-repo", str(hook_repo), "devlint", "--color", "never", "--files", *files],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )

    failing = try_repo("bad.py", "third_party/vendored.py")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "devlint" in failing.stdout and "Failed" in failing.stdout
    assert "bad.py:2:9: DL101 `torch.nn.Linear(2, 2).cuda()` hardcodes a CUDA GPU" in failing.stdout
    assert "vendored.py" not in failing.stdout
    assert "Found 1 problem" in failing.stdout

    # The hook sees notebooks too (`types_or: [python, jupyter]`).
    in_notebook = try_repo("nb.ipynb")
    assert in_notebook.returncode == 1, in_notebook.stdout + in_notebook.stderr
    assert "nb.ipynb:cell 1:3:5: DL101 `torch.zeros(1).cuda()` hardcodes a CUDA GPU" in in_notebook.stdout

    vendored_only = try_repo("third_party/vendored.py")
    assert vendored_only.returncode == 0, vendored_only.stdout + vendored_only.stderr
    assert "Passed" in vendored_only.stdout

    passing = try_repo("good.py")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
