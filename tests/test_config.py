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


# -- issue 17: a ruff user's expectations ------------------------------------------------------------
def run_check(*args: str, env: dict[str, str] | None = None):  # noqa: ANN201 - click's Result
    return CliRunner().invoke(main, ["check", "--no-cache", *args], env=env)


def test_a_string_where_a_list_is_required_is_an_error(project: Path) -> None:
    configure(project, 'select = "DL1"\n')
    assert "'select' must be a list of strings, not 'DL1'" in error("src/a.py")
    configure(project, 'exclude = "scripts"\n')
    assert "'exclude' must be a list of strings, not 'scripts'" in error(".")


def test_double_star_patterns_match_a_top_level_folder(project: Path) -> None:
    configure(project, '[tool.devlint.per-file-ignores]\n"**/tests/**" = ["DL1", "DL501"]\n')
    assert {path for path, _, _ in found(".")} == {"src/a.py", "src/sub/b.py", "scripts/run.py"}
    configure(project, 'extend-exclude = ["**/sub/**"]\n')
    assert {path for path, _, _ in found(".")} == {"src/a.py", "scripts/run.py", "tests/test_x.py"}


def test_patterns_follow_gitignore_semantics(project: Path) -> None:
    (project / "src" / "sub" / "deep").mkdir()
    (project / "src" / "sub" / "deep" / "c.py").write_text(SOURCE)
    # No slash: a name at any depth. A slash: anchored to the configuration's folder.
    configure(project, 'exclude = ["sub"]\n')
    assert {path for path, _, _ in found(".")} == {"src/a.py", "scripts/run.py", "tests/test_x.py"}
    configure(project, 'exclude = ["/sub"]\n')
    assert len({path for path, _, _ in found(".")}) == 5
    configure(project, 'exclude = ["src/sub/*.py"]\n')
    assert {path for path, _, _ in found(".")} == {"src/a.py", "src/sub/deep/c.py", "scripts/run.py", "tests/test_x.py"}


def test_repeated_selection_options_add_up(project: Path) -> None:
    assert codes("--select", "DL101", "--select", "DL501", "src/a.py") == {"DL101", "DL501"}
    assert codes("--ignore", "DL101", "--ignore", "DL501", "src/a.py") == {"DL102"}
    assert {path for path, _, _ in found("--exclude", "scripts", "--exclude", "tests", ".")} == {"src/a.py", "src/sub/b.py"}


def test_extend_ignore(project: Path) -> None:
    assert codes("--extend-ignore", "DL501", "src/a.py") == {"DL101", "DL102"}
    configure(project, 'ignore = ["DL102"]\nextend-ignore = ["DL501"]\n')
    assert codes("src/a.py") == {"DL101"}
    assert codes("--extend-ignore", "DL101", "src/a.py") == set()
    assert error("--extend-ignore", "NOPE", "src/a.py") == (
        "devlint: error: --extend-ignore: unknown rule code 'NOPE' (see `devlint rules`)\n"
    )


def test_config_key_value_overrides(project: Path) -> None:
    configure(project, 'select = ["DL1"]\n')
    assert codes("--config", 'select = ["DL501"]', "src/a.py") == {"DL501"}
    # An override comes first, the options on top of it, as in ruff.
    assert codes("--config", 'select = ["DL501"]', "--select", "DL102", "src/a.py") == {"DL102"}
    assert [line for _, _, line in found("--config", "strict = true", "--config", 'select = ["DL101"]', "src/a.py")] == [5, 8]
    assert "--config: unknown key 'selct'" in error("--config", 'selct = ["DL1"]', "src/a.py")
    assert "'select' must be a list of strings" in error("--config", 'select = "DL1"', "src/a.py")
    assert error("--config", "missing.toml", "src/a.py") == "devlint: error: missing.toml: no such configuration file\n"


def test_isolated_ignores_configuration_files(project: Path) -> None:
    configure(project, 'select = ["DL501"]\nexclude = ["scripts"]\n')
    assert codes("src/a.py") == {"DL501"}
    assert codes("--isolated", "src/a.py") == {"DL101", "DL102", "DL501"}
    assert "scripts/run.py" in {path for path, _, _ in found("--isolated", ".")}
    assert codes("--isolated", "--config", "strict = true", "--select", "DL101", "src/a.py") == {"DL101"}
    (project / "lint.toml").write_text('select = ["DL501"]\n')
    assert "cannot be used with --config PATH" in error("--isolated", "--config", "lint.toml", "src/a.py")


# -- force-exclude: what pre-commit needs ---------------------------------------------------------------
def test_force_exclude_applies_exclude_to_named_files(project: Path) -> None:
    (project / "third_party").mkdir()
    (project / "third_party" / "vendored.py").write_text(SOURCE)
    configure(project, 'exclude = ["third_party"]\n')
    # Named explicitly: checked, unless --force-exclude.
    assert {path for path, _, _ in found("third_party/vendored.py", "src/a.py")} == {"third_party/vendored.py", "src/a.py"}
    assert {path for path, _, _ in found("--force-exclude", "third_party/vendored.py", "src/a.py")} == {"src/a.py"}
    # A named folder too, and the folders devlint never walks.
    (project / ".venv" / "lib").mkdir(parents=True)
    (project / ".venv" / "lib" / "m.py").write_text(SOURCE)
    assert found("--force-exclude", "third_party", ".venv/lib/m.py") == []
    # Configured instead of given; --no-force-exclude turns it off again.
    configure(project, 'exclude = ["third_party"]\nforce-exclude = true\n')
    assert {path for path, _, _ in found("third_party/vendored.py", "src/a.py")} == {"src/a.py"}
    assert {path for path, _, _ in found("--no-force-exclude", "third_party/vendored.py")} == {"third_party/vendored.py"}


def test_force_exclude_with_stdin_reports_nothing_and_echoes_the_buffer(project: Path) -> None:
    configure(project, 'exclude = ["third_party"]\n')
    result = CliRunner().invoke(
        main, ["check", "--force-exclude", "--stdin-filename", "third_party/x.py"], input=SOURCE
    )
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")
    result = CliRunner().invoke(
        main, ["check", "--force-exclude", "--fix", "--stdin-filename", "third_party/x.py"], input=SOURCE
    )
    assert (result.exit_code, result.stdout) == (0, SOURCE)


def test_nothing_to_check_is_said(project: Path) -> None:
    (project / "empty").mkdir()
    result = run_check("empty")
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")
    assert result.stderr == "devlint: warning: No Python files found under the given path(s)\n"
    configure(project, 'exclude = ["scripts"]\n')
    result = run_check("--force-exclude", "scripts/run.py")
    assert result.stderr == "devlint: warning: No Python files found under the given path(s)\n"
    assert run_check("-q", "empty").stderr == ""
    assert run_check("src").stderr == ""


# -- per-directory configuration (a monorepo) -----------------------------------------------------------------
@pytest.fixture
def monorepo(project: Path) -> Path:
    configure(project, 'select = ["DL1"]\n')
    for name, body in (("svc", 'select = ["DL501"]\n'), ("lib", 'extend = "../pyproject.toml"\nignore = ["DL102"]\n')):
        (project / name).mkdir()
        (project / name / "pyproject.toml").write_text("[tool.devlint]\n" + body)
        (project / name / "m.py").write_text(SOURCE)
    return project


def test_each_file_is_checked_with_its_nearest_configuration(monorepo: Path) -> None:
    expected = [
        ("lib/m.py", "DL101", 5),  # the root's select, inherited; its own ignore
        ("src/a.py", "DL102", 3),  # the root's
        ("src/a.py", "DL101", 5),
        ("svc/m.py", "DL501", 6),  # its own
    ]
    assert found("svc", "src/a.py", "lib") == sorted(expected, key=lambda row: row[0])
    outputs = {run_check(*order).stdout for order in (("svc", "src/a.py", "lib"), ("lib", "src/a.py", "svc"), ("src/a.py", "lib", "svc"))}
    assert len(outputs) == 1
    # The same from inside a sub-project: the working folder does not decide.
    import os

    os.chdir(monorepo / "svc")
    assert found("m.py", "../src/a.py") == [("../src/a.py", "DL102", 3), ("../src/a.py", "DL101", 5), ("m.py", "DL501", 6)]


def test_config_file_governs_every_path(monorepo: Path) -> None:
    (monorepo / "lint.toml").write_text('select = ["DL102"]\n')
    assert {code for _, code, _ in found("--config", "lint.toml", "svc", "lib", "src/a.py")} == {"DL102"}


def test_extend_adds_up_and_keeps_patterns_where_they_were_written(project: Path) -> None:
    configure(project, 'exclude = ["/lib/gen"]\nextend-select = ["DL5"]\nselect = ["DL102"]\n')
    (project / "lib" / "gen").mkdir(parents=True)
    (project / "lib" / "gen" / "g.py").write_text(SOURCE)
    (project / "lib" / "m.py").write_text(SOURCE)
    (project / "lib" / "pyproject.toml").write_text('[tool.devlint]\nextend = "../pyproject.toml"\nextend-select = ["DL101"]\n')
    # `/lib/gen` is anchored where it was written (the root), not in lib/.
    assert found("lib") == [("lib/m.py", "DL102", 3), ("lib/m.py", "DL101", 5), ("lib/m.py", "DL501", 6)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('extend = "missing.toml"\n', "'extend' names 'missing.toml', which is not a file"),
        ("extend = 3\n", "'extend' must be the path of a configuration file, not 3"),
        ('extend = "pyproject.toml"\n', "'extend' makes a circle"),
    ],
)
def test_bad_extend(project: Path, body: str, expected: str) -> None:
    configure(project, body)
    assert expected in error("src/a.py")


def test_show_settings(monorepo: Path) -> None:
    result = run_check("--show-settings", "lib/m.py")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "Resolved settings for: lib/m.py",
        f"Settings path: {monorepo / 'lib' / 'pyproject.toml'}",
        f'root = "{monorepo / "lib"}"',
    ]
    assert 'select = ["DL1"]' in lines
    assert 'ignore = ["DL102"]' in lines
    from devlint.rules import all_infos

    expected = [i.code for i in all_infos() if i.code.startswith("DL1") and i.code != "DL102"]
    assert "enabled = [" + ", ".join(f'"{code}"' for code in expected) + "]" in lines
    isolated = run_check("--isolated", "--show-settings", "lib/m.py").stdout.splitlines()
    assert isolated[1] == "Settings path: (none: the defaults)"


def test_show_files(monorepo: Path) -> None:
    (monorepo / "svc" / "pyproject.toml").write_text('[tool.devlint]\nexclude = ["m.py"]\n')
    result = run_check("--show-files", ".")
    assert (result.exit_code, result.stdout) == (0, "lib/m.py\nscripts/run.py\nsrc/a.py\nsrc/sub/b.py\ntests/test_x.py\n")
