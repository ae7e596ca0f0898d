"""The shipped fixtures and their pinned output (regenerate with tests/update_fixtures.py, review the diff)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
# Scripts and notebooks (each notebook's .expected beside it, as a script's).
FIXTURES = sorted([*(ROOT / "fixtures").glob("*.py"), *(ROOT / "fixtures").glob("*.ipynb")])


def test_fixture_set_is_complete() -> None:
    names = {path.stem for path in FIXTURES}
    for base in ("mnist_train", "transformer", "inference", "ddp_train", "lightning_module", "accelerate_loop", "notebook_train"):
        assert {base, f"{base}_buggy"} <= names
    for path in FIXTURES:
        assert path.with_suffix(".expected").is_file(), f"{path.name} has no .expected (run tests/update_fixtures.py)"


@pytest.mark.parametrize("fixture", FIXTURES, ids=[path.stem for path in FIXTURES])
def test_fixture_output_is_pinned(fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    result = CliRunner().invoke(main, ["check", "--no-cache", f"fixtures/{fixture.name}"])
    expected = fixture.with_suffix(".expected").read_text(encoding="utf-8")
    assert result.stdout == expected
    assert result.exit_code == (0 if expected == "All checks passed!\n" else 1)


@pytest.mark.parametrize("fixture", [path for path in FIXTURES if path.stem.endswith("_buggy")], ids=lambda path: path.stem)
def test_buggy_fixtures_have_issue2_findings(fixture: Path) -> None:
    """Whatever the dataflow rules add later, the hardcoded devices of each buggy script are found today."""
    text = fixture.with_suffix(".expected").read_text(encoding="utf-8")
    assert any(f" {code} " in text for code in ("DL101", "DL102", "DL501"))


def test_whole_folder_matches_the_pinned_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--quiet", "--extend-exclude", "projects", "fixtures/"])
    pinned = "".join(
        line
        for path in FIXTURES
        for line in path.with_suffix(".expected").read_text(encoding="utf-8").splitlines(keepends=True)[:-1]
    )
    assert result.stdout == pinned
