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


def test_install_in_a_users_project_and_the_cpu_wheel() -> None:
    section = README[README.index("## Install") : README.index("## Quick start")]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    assert "pip install devlint" in commands
    assert 'pip install "devlint[runtime]"' in commands
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in commands
    # The development set-up's pinned torch, from the same CPU index.
    assert "--index-url https://download.pytorch.org/whl/cpu" in README[README.index("## Quick start") : README.index("## What it finds")]


def test_pre_commit_rev_is_the_version_tag() -> None:
    from devlint import __version__

    section = README[README.index("## pre-commit") :]
    (rev,) = re.findall(r"^    rev: (\S+)$", section, re.MULTILINE)
    assert rev == f"v{__version__}"
    assert "tag is pushed when" in section


def test_every_check_option_is_documented() -> None:
    from devlint.cli import check

    section = README[README.index("## Command line") : README.index("## Configuration")]
    for param in check.params:
        for option in getattr(param, "opts", ()):
            if option.startswith("--"):
                assert f"`{option}" in section, option
    assert "DEVLINT_OUTPUT_FORMAT" in section and "FORCE_COLOR" in section


def test_notebook_sample_output_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    match = re.search(r"```console\n\$ devlint check (fixtures/\S+\.ipynb)\n(.*?)```", README, re.DOTALL)
    assert match is not None
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["check", "--no-cache", match.group(1)])
    assert result.stdout == match.group(2)
