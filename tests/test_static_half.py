"""The static half never imports torch: it must run where torch is not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import sys
from click.testing import CliRunner
from devlint.cli import main

result = CliRunner().invoke(main, ["check", "--no-cache", "--jobs", "1", "--fix", "--diff", "--unsafe-fixes", "fixtures/"])
assert result.exit_code == 1, result.output
result = CliRunner().invoke(main, ["check", "--no-cache", "--jobs", "1", "--format", "sarif", "fixtures/"])
assert result.exit_code == 1, result.output
print(sorted(name for name in ("torch", "numpy") if name in sys.modules))
"""


def test_checking_fixing_and_reporting_never_import_torch() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
