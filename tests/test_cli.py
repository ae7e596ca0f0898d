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
    assert document["$schema"].endswith("sarif-2.1.0.json")
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
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "pkg/buggy.py"
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
