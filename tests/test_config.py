"""`[tool.devlint]` and the selection options: what is checked, and clear errors for bad settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main

SOURCE = """\
import torch

device = torch.device("cuda")
model = torch.nn.Linear(2, 2)
model.cuda()
state = torch.load("w.pt")
if torch.cuda.is_available():
    model.cuda()
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("src/a.py", "src/sub/b.py", "scripts/run.py", "tests/test_x.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def configure(project: Path, body: str) -> None:
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.devlint]\n" + body)


def found(*args: str) -> list[tuple[str, str, int]]:
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return [(r["path"], r["code"], r["line"]) for r in json.loads(result.stdout)]


def codes(*args: str) -> set[str]:
    return {code for _, code, _ in found(*args)}


def error(*args: str) -> str:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.output
    assert result.stderr.count("\n") == 1
    return result.stderr


def test_defaults(project: Path) -> None:
    assert found("src/a.py") == [("src/a.py", "DL102", 3), ("src/a.py", "DL101", 5), ("src/a.py", "DL501", 6)]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (("--select", "DL101"), {"DL101"}),
        (("--select", "DL1"), {"DL101", "DL102"}),
        (("--select", "dl5,DL101"), {"DL101", "DL501"}),
        (("--ignore", "DL1"), {"DL501"}),
        (("--ignore", "DL102,DL501"), {"DL101"}),
        (("--select", "DL1", "--ignore", "DL102"), {"DL101"}),
        (("--select", "DL101", "--extend-select", "DL5"), {"DL101", "DL501"}),
        (("--ignore", "DL1", "--select", "DL102"), {"DL102"}),  # the more specific selector wins
        (("--select", "ALL", "--ignore", "DL"), set()),
    ],
)
def test_command_line_selection(project: Path, options: tuple[str, ...], expected: set[str]) -> None:
    assert codes(*options, "src/a.py") == expected


def test_more_specific_select_wins_over_a_broad_ignore(project: Path) -> None:
    configure(project, 'ignore = ["DL1"]\nextend-select = ["DL101"]\n')
    assert codes("src/a.py") == {"DL101", "DL501"}
    assert codes("--extend-select", "DL102", "src/a.py") == {"DL101", "DL102", "DL501"}


def test_configured_selection(project: Path) -> None:
    configure(project, 'select = ["DL1"]\nignore = ["DL102"]\n')
    assert codes("src/a.py") == {"DL101"}
    # The command line replaces the file's select.
    assert codes("--select", "DL5", "src/a.py") == {"DL501"}


def test_strict(project: Path) -> None:
    assert [line for _, code, line in found("--select", "DL101", "src/a.py")] == [5]
    configure(project, "strict = true\n")
    assert [line for _, code, line in found("--select", "DL101", "src/a.py")] == [5, 8]
    configure(project, "strict = false\n")
    assert [line for _, code, line in found("--strict", "--select", "DL101", "src/a.py")] == [5, 8]


def test_per_file_ignores(project: Path) -> None:
    configure(project, '[tool.devlint.per-file-ignores]\n"tests/*" = ["DL1", "DL501"]\n"scripts/run.py" = ["DL102"]\n')
    result = found(".")
    assert {path for path, _, _ in result} == {"src/a.py", "src/sub/b.py", "scripts/run.py"}
    assert {code for path, code, _ in result if path == "scripts/run.py"} == {"DL101", "DL501"}


def test_exclude_and_extend_exclude(project: Path) -> None:
    assert {path for path, _, _ in found(".")} == {"src/a.py", "src/sub/b.py", "scripts/run.py", "tests/test_x.py"}
    configure(project, 'exclude = ["scripts"]\nextend-exclude = ["src/sub/*"]\n')
    assert {path for path, _, _ in found(".")} == {"src/a.py", "tests/test_x.py"}
    # --extend-exclude adds to both configured lists.
    assert {path for path, _, _ in found("--extend-exclude", "tests", ".")} == {"src/a.py"}
    # --exclude replaces the configured exclude (extend-exclude still applies).
    assert {path for path, _, _ in found("--exclude", "tests", ".")} == {"src/a.py", "scripts/run.py"}
    # A file named explicitly is always checked.
    assert {path for path, _, _ in found("scripts/run.py")} == {"scripts/run.py"}


def test_default_excludes_and_gitignore(project: Path) -> None:
    for folder in (".venv/lib", "build", "node_modules/x", "generated", "src/__pycache__"):
        (project / folder).mkdir(parents=True, exist_ok=True)
        (project / folder / "m.py").write_text(SOURCE)
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("generated/\n*.tmp.py\n")
    (project / "src" / "scratch.tmp.py").write_text(SOURCE)
    assert {path for path, _, _ in found(".")} == {"src/a.py", "src/sub/b.py", "scripts/run.py", "tests/test_x.py"}
    # Named explicitly, a folder inside an ignored one is walked as asked.
    assert {path for path, _, _ in found(".venv/lib")} == {".venv/lib/m.py"}


def test_nested_gitignores_negation_and_repositories(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("*_gen.py\nlegacy/\n")
    for folder in ("src/models", "src/legacy", "vendored/lib"):
        (project / folder).mkdir(parents=True, exist_ok=True)
    (project / "src" / "models" / ".gitignore").write_text("!keep_gen.py\nscratch*.py\n")
    for name in ("src/models/net.py", "src/models/net_gen.py", "src/models/keep_gen.py", "src/models/scratch1.py", "src/legacy/old.py"):
        (project / name).write_text(SOURCE)
    # A repository of its own inside the project: the outer rules stop at its root.
    (project / "vendored" / ".git").mkdir()
    (project / "vendored" / "lib" / "util_gen.py").write_text(SOURCE)
    # A link inside the walk is judged where it points.
    (project / "src" / "models" / "alias.py").symlink_to(project / "src" / "models" / "net_gen.py")
    paths = {path for path, _, _ in found(".")}
    assert paths == {
        "src/a.py", "src/sub/b.py", "scripts/run.py", "tests/test_x.py",
        "src/models/net.py", "src/models/keep_gen.py", "vendored/lib/util_gen.py",
    }


def test_config_option_with_a_bare_devlint_table(project: Path) -> None:
    (project / "lint.toml").write_text('select = ["DL501"]\n')
    assert codes("--config", "lint.toml", "src/a.py") == {"DL501"}


def test_nearest_pyproject_with_a_devlint_table_wins(project: Path) -> None:
    configure(project, 'select = ["DL501"]\n')
    (project / "src" / "pyproject.toml").write_text("[project]\nname = 'inner'\n")  # no [tool.devlint]: skipped
    assert codes("src/a.py") == {"DL501"}
    (project / "src" / "pyproject.toml").write_text('[tool.devlint]\nselect = ["DL102"]\n')
    assert codes("src/a.py") == {"DL102"}


def test_unknown_key(project: Path) -> None:
    configure(project, 'select = ["DL1"]\nselct = ["DL101"]\n')
    message = error("src/a.py")
    assert message.startswith(f"devlint: error: {project / 'pyproject.toml'}: unknown key 'selct' in [tool.devlint]")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("select = 5\n", "'select' must be a list of strings, not 5"),
        ('ignore = ["DL101", 3]\n', "'ignore' must be a list of strings"),
        ('strict = "yes"\n', "'strict' must be true or false, not 'yes'"),
        ('per-file-ignores = ["x"]\n', "'per-file-ignores' must be a table of pattern = [codes]"),
        ('select = ["DL777"]\n', "'select': unknown rule code 'DL777'"),
        ('[tool.devlint.per-file-ignores]\n"a.py" = ["XYZ1"]\n', "'per-file-ignores.a.py': unknown rule code 'XYZ1'"),
    ],
)
def test_bad_values(project: Path, body: str, expected: str) -> None:
    configure(project, body)
    message = error("src/a.py")
    assert message.startswith(f"devlint: error: {project / 'pyproject.toml'}: ")
    assert expected in message


def test_invalid_toml(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.devlint\nselect = [\n")
    message = error("src/a.py")
    assert message.startswith(f"devlint: error: {project / 'pyproject.toml'}: not valid TOML: ")


def test_devlint_table_that_is_not_a_table(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool]\ndevlint = "on"\n')
    assert "[tool.devlint] must be a table" in error("src/a.py")


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_code_on_the_command_line(project: Path, option: str) -> None:
    assert error(option, "DL101,NOPE", "src/a.py") == f"devlint: error: {option}: unknown rule code 'NOPE' (see `devlint rules`)\n"
