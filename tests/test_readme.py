"""The README's promises: its commands, its sample output, its rule table, and .ci/run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main
from devlint.config import KNOWN_KEYS
from devlint.rules import all_infos

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest'
DEMO_COMMAND = "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/devlint check fixtures/"


def test_the_two_commands_are_in_the_readme() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    assert DEMO_COMMAND + "\n" in blocks
    assert TEST_COMMAND + "\n" in blocks


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in script
    assert TEST_COMMAND in script
    assert '"$status" -eq 5' in script
    assert (ROOT / ".ci" / "run").stat().st_mode & 0o111


def test_sample_output_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    match = re.search(r"```console\n\$ devlint check (.*?)\n(.*?)```", README, re.DOTALL)
    assert match is not None
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["check", "--no-cache", *match.group(1).split()])
    assert result.stdout == match.group(2)


def test_rule_table_has_every_code() -> None:
    rows = dict(re.findall(r"^\| (DL\d{3}) \| ([a-z-]+) \|", README, re.MULTILINE))
    assert sorted(rows) == sorted(info.code for info in all_infos())
    for info in all_infos():
        assert rows[info.code] == info.name


def test_every_configuration_key_is_documented() -> None:
    section = README[README.index("## Configuration") :]
    for key in KNOWN_KEYS:
        assert re.search(rf"^{re.escape(key)} = |^\[tool\.devlint\.{re.escape(key)}\]", section, re.MULTILINE), key


def test_every_part_of_the_product_has_its_section() -> None:
    for heading in ("## Runtime mode", "## Simulated CUDA", "## Autofix", "## Speed"):
        assert heading in README
    assert "<!-- lead:" not in README
