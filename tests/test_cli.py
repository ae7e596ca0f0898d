"""The `devlint check` command line: formats, exit codes, suppression, determinism."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main

BUGGY = """\
import torch

device = torch.device("cuda")
model = torch.nn.Linear(2, 2)
model.cuda()
state = torch.load("w.pt")
"""
CLEAN = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(2, 2).to(device)
"""
TEXT = """\
pkg/buggy.py:3:23: DL102 `"cuda"` assigned as the device hardcodes an accelerator and fails on machines without one; select the device at run time (`"cuda" if torch.cuda.is_available() else "cpu"`) and pass it in
pkg/buggy.py:5:1: DL101 [*] `model.cuda()` hardcodes a CUDA GPU and fails on machines without one; use `.to(device)` with a selected device
pkg/buggy.py:6:9: DL501 `torch.load(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a machine without one; pass `map_location=device` (or `map_location="cpu"`)
Found 3 problems (1 fixable with --fix, 1 more with --unsafe-fixes).
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "buggy.py").write_text(BUGGY)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def run(*args: str, stdin: str | None = None):  # noqa: ANN201 - click's Result
    return CliRunner().invoke(main, ["check", "--no-cache", *args], input=stdin)


def test_text_output_and_exit_code(project: Path) -> None:
    result = run("pkg")
    assert result.exit_code == 1
    assert result.stdout == TEXT
    assert "\x1b[" not in result.output


def test_clean_exit_code(project: Path) -> None:
    result = run("pkg/clean.py")
    assert result.exit_code == 0
    assert result.stdout == "All checks passed!\n"


def test_exit_zero(project: Path) -> None:
    result = run("--exit-zero", "pkg")
    assert result.exit_code == 0
    assert result.stdout == TEXT


def test_quiet_drops_the_summary(project: Path) -> None:
    result = run("--quiet", "pkg")
    assert result.exit_code == 1
    assert result.stdout == "".join(TEXT.splitlines(keepends=True)[:-1])
    assert run("-q", "pkg/clean.py").stdout == ""


def test_statistics(project: Path) -> None:
    result = run("--statistics", "pkg")
    assert result.exit_code == 1
    assert result.stdout == (
        "    1\tDL101\t[*] cuda-call\n"
        "    1\tDL102\t    accelerator-literal\n"
        "    1\tDL501\t    load-without-map-location\n"
        "Found 3 problems (1 fixable with --fix, 1 more with --unsafe-fixes).\n"
    )


def test_output_file(project: Path) -> None:
    result = run("--output-file", "report.txt", "pkg")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert (project / "report.txt").read_text() == TEXT


def test_output_file_that_cannot_be_written(project: Path) -> None:
    result = run("--output-file", "missing/dir/report.txt", "pkg")
    assert result.exit_code == 2
    assert result.stderr.startswith("devlint: error: cannot write missing/dir/report.txt")
    assert "Traceback" not in result.output


def test_output_file_in_a_missing_folder_fails_before_the_check(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import devlint.engine

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the check ran")

    monkeypatch.setattr(devlint.engine, "check_files", must_not_run)
    result = run("--output-file", "missing/dir/report.txt", "pkg")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "devlint: error: cannot write missing/dir/report.txt: no such folder missing/dir\n"
    (project / "taken").write_text("")
    result = run("--output-file", "taken/report.txt", "pkg")
    assert (result.exit_code, result.stderr) == (2, "devlint: error: cannot write taken/report.txt: taken is not a folder\n")


def test_json_format(project: Path) -> None:
    result = run("--format", "json", "pkg")
    assert result.exit_code == 1
    records = json.loads(result.stdout)
    assert [(r["code"], r["path"], r["line"], r["column"], r["end_line"], r["end_column"], r["fixable"]) for r in records] == [
        ("DL102", "pkg/buggy.py", 3, 23, 3, 29, False),
        ("DL101", "pkg/buggy.py", 5, 1, 5, 13, True),
        ("DL501", "pkg/buggy.py", 6, 9, 6, 27, False),
    ]
    assert records[1]["message"] == (
        "`model.cuda()` hardcodes a CUDA GPU and fails on machines without one; use `.to(device)` with a selected device"
    )
    assert json.loads(run("--format", "json", "pkg/clean.py").stdout) == []


def test_json_paths_stay_as_given(project: Path) -> None:
    records = json.loads(run("--format", "json", "pkg/../pkg/buggy.py").stdout)
    assert {r["path"] for r in records} == {"pkg/../pkg/buggy.py"}
    absolute = str(project / "pkg" / "buggy.py")
    assert {r["path"] for r in json.loads(run("--format", "json", absolute).stdout)} == {absolute}


def test_github_format(project: Path) -> None:
    result = run("--format", "github", "pkg/buggy.py")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[1] == (
        "::error file=pkg/buggy.py,line=5,col=1,endLine=5,endColumn=13,title=DL101::DL101 `model.cuda()` hardcodes a "
        "CUDA GPU and fails on machines without one; use `.to(device)` with a selected device"
    )
    assert all(line.startswith("::error file=pkg/buggy.py,line=") for line in lines)


def test_sarif_format(project: Path) -> None:
    result = run("--format", "sarif", "pkg")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["version"] == "2.1.0"
    assert document["$schema"].endswith("/sarif-schema-2.1.0.json")
    (run_,) = document["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "devlint"
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert {"DL000", "DL101", "DL102", "DL501", "DL999"} <= set(rules)
    for rule in rules.values():
        assert rule["helpUri"].endswith(f"rules/{rule['id']}.md")
        assert rule["help"]["text"].startswith(f"# {rule['id']}: ")
        assert rule["shortDescription"]["text"]
    results = run_["results"]
    assert [r["ruleId"] for r in results] == ["DL102", "DL101", "DL501"]
    for r in results:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] == "error"
        assert r["message"]["text"]
        (location,) = r["locations"]
        assert location["physicalLocation"]["artifactLocation"] == {"uri": "pkg/buggy.py", "uriBaseId": "%SRCROOT%"}
    assert results[1]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 5,
        "startColumn": 1,
        "endLine": 5,
        "endColumn": 13,
    }


def test_stdin_filename(project: Path) -> None:
    result = run("--stdin-filename", "editor/buffer.py", stdin=BUGGY)
    assert result.exit_code == 1
    assert result.stdout == TEXT.replace("pkg/buggy.py", "editor/buffer.py")
    clean = run("--stdin-filename", "editor/buffer.py", stdin=CLEAN)
    assert (clean.exit_code, clean.stdout) == (0, "All checks passed!\n")


def test_stdin_filename_honours_per_file_ignores(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.devlint]\nper-file-ignores = {"scripts/*" = ["DL1"]}\n')
    result = run("--format", "json", "--stdin-filename", "scripts/x.py", stdin=BUGGY)
    assert [r["code"] for r in json.loads(result.stdout)] == ["DL501"]


def test_noqa(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text(
        textwrap.dedent(
            """\
            import torch

            device = torch.device("cuda")  # noqa: DL102
            model = torch.nn.Linear(2, 2)
            model.cuda()  # noqa: DL102
            state = torch.load("w.pt")  # noqa
            x = torch.zeros(1, device="cuda").cuda()  # noqa: DL101,DL102
            y = torch.zeros(1, device="cuda").cuda()  # NOQA:DL101, DL102
            z = torch.zeros(1, device="cuda").cuda()  # noqa: DL101
            """
        )
    )
    result = run("--format", "json", "pkg/buggy.py")
    assert [(r["code"], r["line"]) for r in json.loads(result.stdout)] == [("DL101", 5), ("DL102", 9)]


def test_skip_file(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text("import torch\n# devlint: skip-file\n" + BUGGY)
    result = run("pkg")
    assert (result.exit_code, result.stdout) == (0, "All checks passed!\n")


def test_unknown_selector_on_the_command_line(project: Path) -> None:
    result = run("--select", "DL777", "pkg")
    assert result.exit_code == 2
    assert result.stderr == "devlint: error: --select: unknown rule code 'DL777' (see `devlint rules`)\n"
    assert result.stdout == ""


def test_missing_config_file(project: Path) -> None:
    result = run("--config", "nope.toml", "pkg")
    assert result.exit_code == 2
    assert result.stderr == "devlint: error: nope.toml: no such configuration file\n"


def test_dl999_exits_2_and_other_files_are_reported(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from devlint.rules import dl101_cuda_call

    original = dl101_cuda_call.CudaCall.visit_Call

    def explode(self, node):  # noqa: ANN001, ANN202
        if self.ctx.path.endswith("buggy.py"):
            raise ValueError("boom")
        return original(self, node)

    monkeypatch.setattr(dl101_cuda_call.CudaCall, "visit_Call", explode)
    (project / "pkg" / "other.py").write_text('import torch\nx = torch.load("a.pt")\ndevice = "cuda:0"\n')
    result = run("--format", "json", "pkg")
    assert result.exit_code == 2
    records = json.loads(result.stdout)
    assert [(r["code"], r["path"], r["line"]) for r in records] == [
        ("DL999", "pkg/buggy.py", 1),
        ("DL501", "pkg/other.py", 2),
        ("DL102", "pkg/other.py", 3),
    ]
    assert records[0]["message"] == "devlint failed on this file (ValueError: boom); please report it"


def test_rules_command() -> None:
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["code", "name", "default", "fix", "summary"]
    rows = {line.split()[0]: line.split()[1:4] for line in lines[1:]}
    assert rows["DL101"] == ["cuda-call", "on", "safe"]
    assert rows["DL102"] == ["accelerator-literal", "on", "-"]
    assert rows["DL501"] == ["load-without-map-location", "on", "unsafe"]
    assert rows["DL000"] == ["unreadable-file", "on", "-"]
    codes = [json_rule["code"] for json_rule in json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).stdout)]
    assert codes == sorted(rows)


def test_version() -> None:
    from devlint import __version__

    result = CliRunner().invoke(main, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"devlint {__version__}\n")


# -- real processes: determinism, parallelism, colour on a terminal -------------------------------------------
def _devlint(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--no-cache", *args], cwd=cwd, capture_output=True, env=env
    )


def test_output_is_deterministic_across_runs_and_job_counts(project: Path) -> None:
    for index in range(12):  # enough files for the worker pool to start
        (project / "pkg" / f"m{index:02}.py").write_text(BUGGY if index % 3 else CLEAN)
    outputs = set()
    for jobs in ("1", "2", "2"):
        for output_format in ("text", "json"):
            done = _devlint("--jobs", jobs, "--format", output_format, "pkg", cwd=project)
            assert done.returncode == 1, done.stderr
            outputs.add((output_format, done.stdout))
    assert len(outputs) == 2
    text = next(out for fmt, out in outputs if fmt == "text").decode()
    assert text.endswith("Found 27 problems (9 fixable with --fix, 9 more with --unsafe-fixes).\n")
    paths = [line.split(":")[0] for line in text.splitlines()[:-1]]
    assert paths == sorted(paths)


def _on_a_terminal(*args: str, cwd: Path, env: dict[str, str]) -> bytes:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [sys.executable, "-m", "devlint", "check", "--no-cache", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=60,
        )
        assert process.returncode == 1
        os.close(terminal)
        terminal = -1
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(controller)
        if terminal != -1:
            os.close(terminal)


def test_colour_only_on_a_terminal(project: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    assert b"\x1b[" in _on_a_terminal("pkg", cwd=project, env=env)
    assert b"\x1b[" not in _on_a_terminal("--no-color", "pkg", cwd=project, env=env)
    assert b"\x1b[" not in _on_a_terminal("pkg", cwd=project, env={**env, "NO_COLOR": "1"})
    piped = _devlint("pkg", cwd=project, env=env)
    assert b"\x1b[" not in piped.stdout
    assert piped.stdout.decode() == TEXT


# -- issue 17: spelled as in ruff -------------------------------------------------------------------------
def test_output_format_its_alias_and_environment_variable(project: Path) -> None:
    by_option = run("--output-format", "json", "pkg")
    assert by_option.exit_code == 1
    assert [r["code"] for r in json.loads(by_option.stdout)] == ["DL102", "DL101", "DL501"]
    assert run("--format", "json", "pkg").stdout == by_option.stdout
    from_env = CliRunner().invoke(main, ["check", "--no-cache", "pkg"], env={"DEVLINT_OUTPUT_FORMAT": "json"})
    assert from_env.stdout == by_option.stdout
    # The option beats the environment.
    text = CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "text", "pkg"], env={"DEVLINT_OUTPUT_FORMAT": "json"})
    assert text.stdout == TEXT
    bad = CliRunner().invoke(main, ["check", "--no-cache", "pkg"], env={"DEVLINT_OUTPUT_FORMAT": "xml"})
    assert bad.exit_code == 2
    assert "Invalid value for '--output-format'" in bad.stderr


def test_short_exit_zero(project: Path) -> None:
    result = run("-e", "pkg")
    assert (result.exit_code, result.stdout) == (0, TEXT)


def test_color_option_and_force_color(project: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    piped = _devlint("--color", "always", "pkg", cwd=project, env=env)
    assert b"\x1b[" in piped.stdout
    assert b"\x1b[" in _devlint("pkg", cwd=project, env={**env, "FORCE_COLOR": "1"}).stdout
    # FORCE_COLOR wins over NO_COLOR, as in ruff; an explicit option wins over both.
    assert b"\x1b[" in _devlint("pkg", cwd=project, env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert _devlint("--color", "never", "pkg", cwd=project, env={**env, "FORCE_COLOR": "1"}).stdout.decode() == TEXT
    assert _devlint("--no-color", "pkg", cwd=project, env={**env, "FORCE_COLOR": "1"}).stdout.decode() == TEXT
    assert b"\x1b[" not in _on_a_terminal("--color", "never", "pkg", cwd=project, env=env)
    assert b"\x1b[" in _on_a_terminal("--color", "auto", "pkg", cwd=project, env=env)
    # A report written to a file is never coloured by the environment.
    _devlint("--output-file", "out.txt", "pkg", cwd=project, env={**env, "FORCE_COLOR": "1"})
    assert (project / "out.txt").read_text() == TEXT


# -- the unsafe-fix path, as ruff prints it ------------------------------------------------------------------
ONLY_UNSAFE = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
state = torch.load("w.pt")
"""


def test_summary_with_only_unsafe_fixes_states_the_base(project: Path) -> None:
    (project / "pkg" / "unsafe.py").write_text(ONLY_UNSAFE)
    result = run("pkg/unsafe.py")
    assert result.stdout.splitlines()[-1] == (
        "Found 1 problem (no fixes available; 1 hidden fix can be enabled with --unsafe-fixes)."
    )
    assert " [*] " not in result.stdout


def test_unsafe_fixes_alone_marks_and_counts_them(project: Path) -> None:
    result = run("--unsafe-fixes", "pkg/buggy.py")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[2].startswith("pkg/buggy.py:6:9: DL501 [*] `torch.load(...)` without `map_location`")
    assert lines[-1] == "Found 3 problems (2 fixable with --fix)."
    records = json.loads(run("--unsafe-fixes", "--output-format", "json", "pkg/buggy.py").stdout)
    assert [(r["code"], r["fixable"]) for r in records] == [("DL102", False), ("DL101", True), ("DL501", True)]
    stats = run("--unsafe-fixes", "--statistics", "pkg/buggy.py").stdout
    assert "    1\tDL501\t[*] load-without-map-location\n" in stats


def test_diff_with_only_unsafe_fixes_says_so(project: Path) -> None:
    (project / "pkg" / "unsafe.py").write_text(ONLY_UNSAFE)
    result = run("--diff", "pkg/unsafe.py")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "No problems would be fixed (1 fix available with --unsafe-fixes).\n"
    both = run("--diff", "pkg/buggy.py")
    assert both.exit_code == 1
    assert both.stdout.startswith("--- pkg/buggy.py\n+++ pkg/buggy.py\n")
    assert both.stderr == "Would fix 1 problem (1 additional fix available with --unsafe-fixes).\n"
    unsafe = run("--diff", "--unsafe-fixes", "pkg/unsafe.py")
    assert unsafe.exit_code == 1
    assert '+state = torch.load("w.pt", map_location=device)\n' in unsafe.stdout
    assert unsafe.stderr == "Would fix 1 problem.\n"
    assert run("--diff", "-q", "pkg/unsafe.py").stderr == ""


def test_show_fixes(project: Path) -> None:
    result = run("--fix", "--show-fixes", "pkg/buggy.py")
    assert result.exit_code == 1
    assert result.stdout == (
        "pkg/buggy.py:3:23: DL102 `\"cuda\"` assigned as the device hardcodes an accelerator and fails on machines "
        "without one; select the device at run time (`\"cuda\" if torch.cuda.is_available() else \"cpu\"`) and pass it in\n"
        "pkg/buggy.py:6:9: DL501 `torch.load(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a "
        "machine without one; pass `map_location=device` (or `map_location=\"cpu\"`)\n"
        "Fixed 1 problem:\n"
        "- pkg/buggy.py:\n"
        "    1 × DL101 (cuda-call)\n"
        "\n"
        "Found 2 problems (no fixes available; 1 hidden fix can be enabled with --unsafe-fixes).\n"
    )
    assert "model.to(device)\n" in (project / "pkg" / "buggy.py").read_text()
    (project / "pkg" / "buggy.py").write_text(BUGGY)
    listed = run("--show-fixes", "pkg/buggy.py").stdout.splitlines()
    assert listed[2] == "  help: Use `.to(device)`"
    assert listed[4] == '  help: Load onto `device` (unsafe)'
    diff = run("--diff", "--show-fixes", "pkg/buggy.py")
    assert diff.stderr == (
        "Would fix 1 problem:\n- pkg/buggy.py:\n    1 × DL101 (cuda-call)\n"
        "Would fix 1 problem (1 additional fix available with --unsafe-fixes).\n"
    )


# -- statistics, JSON edits, GitHub, SARIF ----------------------------------------------------------------------
def test_statistics_as_json(project: Path) -> None:
    (project / "pkg" / "more.py").write_text(BUGGY)
    result = run("--statistics", "--output-format", "json", "pkg")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == [
        {"code": "DL101", "name": "cuda-call", "count": 2, "fixable": True},
        {"code": "DL102", "name": "accelerator-literal", "count": 2, "fixable": False},
        {"code": "DL501", "name": "load-without-map-location", "count": 2, "fixable": False},
    ]
    bad = run("--statistics", "--output-format", "sarif", "pkg")
    assert bad.exit_code == 2
    assert bad.stderr == "devlint: error: --statistics prints text or JSON, not sarif\n"


def test_json_fix_edits_have_row_and_column_locations(project: Path) -> None:
    (project / "pkg" / "wide.py").write_text(
        'import torch\n\n\ndef load(path, device):\n    é = "ü"; state = torch.load(path)\n    return state\n'
    )
    (record,) = json.loads(run("--output-format", "json", "pkg/wide.py").stdout)
    assert (record["line"], record["column"]) == (5, 22)
    assert record["fix"] == {
        "applicability": "unsafe",
        "title": "Load onto `device`",
        "edits": [
            {"content": ", map_location=device", "location": {"row": 5, "column": 37}, "end_location": {"row": 5, "column": 37}}
        ],
    }
    line = (project / "pkg" / "wide.py").read_text().splitlines()[4]
    assert line[: 37 - 1] + ", map_location=device" + line[37 - 1 :] == '    é = "ü"; state = torch.load(path, map_location=device)'


def test_github_annotations_have_no_columns_on_multiline_spans(project: Path) -> None:
    (project / "pkg" / "multi.py").write_text("import torch\nstate = torch.load(\n    'a.pt',\n)\n")
    result = run("--output-format", "github", "pkg/multi.py")
    assert result.stdout == (
        "::error file=pkg/multi.py,line=2,endLine=4,title=DL501::DL501 `torch.load(...)` without `map_location`: "
        "a checkpoint saved on a GPU fails to load on a machine without one; pass `map_location=device` "
        "(or `map_location=\"cpu\"`)\n"
    )


SCHEMA = Path(__file__).resolve().parent.parent.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"


def _sarif_validator():  # noqa: ANN202 - a jsonschema validator
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra: pip install -e '.[test]'")
    if not SCHEMA.is_file():
        pytest.skip(f"the OASIS SARIF schema is not at {SCHEMA} (CI has ../shared beside the checkout)")
    # Every format jsonschema knows: SARIF's draft-4 schema says `uri-reference`, which only later drafts define.
    checker = jsonschema.FormatChecker()
    # Without rfc3986-validator (jsonschema[format-nongpl]) these formats pass unchecked: make sure they are checked.
    assert {"uri", "uri-reference"} <= set(checker.checkers), "install jsonschema[format-nongpl]"
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=checker)


def test_sarif_is_valid_against_the_oasis_schema(project: Path) -> None:
    validator = _sarif_validator()
    odd = project / "we ird:100%" / "ünï"
    odd.mkdir(parents=True)
    (odd / "m ö.py").write_text(BUGGY)
    document = json.loads(run("--output-format", "sarif", "pkg", str(odd.relative_to(project)), str(project.parent / "outside.py")).stdout)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors]
    # The validator does reject a bad URI: the check above is not empty.
    broken = json.loads(json.dumps(document))
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "a b:c"
    assert any(e.validator == "format" for e in validator.iter_errors(broken))


def test_sarif_locations_fixes_and_columns(project: Path) -> None:
    odd = project / "we ird:100%" / "ünï"
    odd.mkdir(parents=True)
    (odd / "m ö.py").write_text(BUGGY)
    outside = project.parent / f"{project.name}-outside.py"
    outside.write_text(BUGGY)
    (run_,) = json.loads(run("--output-format", "sarif", "pkg/buggy.py", "we ird:100%", str(outside)).stdout)["runs"]
    assert run_["columnKind"] == "unicodeCodePoints"
    assert run_["originalUriBaseIds"] == {"%SRCROOT%": {"uri": project.as_uri() + "/"}}
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run_["results"]]
    assert {"uri": "pkg/buggy.py", "uriBaseId": "%SRCROOT%"} in locations
    assert {"uri": "we%20ird%3A100%25/%C3%BCn%C3%AF/m%20%C3%B6.py", "uriBaseId": "%SRCROOT%"} in locations
    assert {"uri": "file://" + str(outside).replace(" ", "%20")} in locations
    dl101 = next(r for r in run_["results"] if r["ruleId"] == "DL101" and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/buggy.py")
    assert dl101["fixes"] == [
        {
            "description": {"text": "Use `.to(device)`"},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": "pkg/buggy.py", "uriBaseId": "%SRCROOT%"},
                    "replacements": [
                        {
                            "deletedRegion": {"startLine": 5, "startColumn": 7, "endLine": 5, "endColumn": 13},
                            "insertedContent": {"text": "to(device)"},
                        }
                    ],
                }
            ],
            "properties": {"applicability": "safe"},
        }
    ]


# -- explain -------------------------------------------------------------------------------------------------------
def test_explain_by_name_and_all() -> None:
    from devlint.pages import rule_page
    from devlint.rules import all_infos

    by_name = CliRunner().invoke(main, ["explain", "unmoved-batch"])
    assert (by_name.exit_code, by_name.stdout) == (0, rule_page("DL201"))
    every = CliRunner().invoke(main, ["explain", "--all"])
    assert every.exit_code == 0
    assert every.stdout == "\n".join(rule_page(info.code) for info in all_infos())
    assert CliRunner().invoke(main, ["explain"]).exit_code == 2
    unknown = CliRunner().invoke(main, ["explain", "no-such-rule"])
    assert (unknown.exit_code, unknown.stderr) == (2, "devlint: error: unknown rule code 'no-such-rule' (see `devlint rules`)\n")
