"""`# noqa`, file-level `# devlint: noqa: CODES`, the unused-noqa rule (DL900) and `--add-noqa`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main

BUGGY = """\
import torch

device = torch.device("cuda")  # the GPU box
model = torch.nn.Linear(2, 2)
model.cuda()  # noqa: E501
state = torch.load(
    "w.pt",
)
msg = \"\"\"a long
text\"\"\"; x = torch.zeros(1).cuda()
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "buggy.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str):  # noqa: ANN201 - click's Result
    return CliRunner().invoke(main, ["check", "--no-cache", *args])


def found(*args: str) -> list[tuple[str, int]]:
    result = check("--output-format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return [(r["code"], r["line"]) for r in json.loads(result.stdout)]


# -- --add-noqa ----------------------------------------------------------------------------------------------
def test_add_noqa_silences_every_finding_and_keeps_comments(project: Path) -> None:
    assert found("pkg") == [("DL102", 3), ("DL101", 5), ("DL501", 6), ("DL101", 10)]
    result = check("--add-noqa", "pkg")
    assert result.exit_code == 0
    assert result.stderr == "Added 4 noqa directives.\n"
    assert (project / "pkg" / "buggy.py").read_text() == (
        "import torch\n"
        "\n"
        'device = torch.device("cuda")  # the GPU box  # noqa: DL102\n'
        "model = torch.nn.Linear(2, 2)\n"
        "model.cuda()  # noqa: E501, DL101\n"
        "state = torch.load(  # noqa: DL501\n"
        '    "w.pt",\n'
        ")\n"
        'msg = """a long\n'
        'text"""; x = torch.zeros(1).cuda()  # noqa: DL101\n'
    )
    assert found("pkg") == []
    # Idempotent: nothing more to add, nothing changed.
    before = (project / "pkg" / "buggy.py").read_bytes()
    again = check("--add-noqa", "pkg")
    assert (again.exit_code, again.stderr) == (0, "Added 0 noqa directives.\n")
    assert (project / "pkg" / "buggy.py").read_bytes() == before


def test_add_noqa_where_a_string_ends_and_merges_codes(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text(
        'import torch\nx = torch.load("""a\nb""")\ny = torch.zeros(1, device="cuda").cuda()  # noqa: DL101\n'
    )
    check("--add-noqa", "pkg")
    assert (project / "pkg" / "buggy.py").read_text() == (
        'import torch\nx = torch.load("""a\nb""")  # noqa: DL501\n'
        'y = torch.zeros(1, device="cuda").cuda()  # noqa: DL101, DL102\n'
    )
    assert found("pkg") == []


def test_add_noqa_keeps_line_endings_and_refuses_fix(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_bytes(b"import torch\r\nmodel = torch.nn.Linear(2, 2).cuda()\r\n")
    check("--add-noqa", "pkg")
    assert (project / "pkg" / "buggy.py").read_bytes() == (
        b"import torch\r\nmodel = torch.nn.Linear(2, 2).cuda()  # noqa: DL101\r\n"
    )
    refused = check("--add-noqa", "--fix", "pkg")
    assert (refused.exit_code, refused.stderr) == (2, "devlint: error: --add-noqa cannot be used with --fix or --diff\n")


# -- file-level suppression ------------------------------------------------------------------------------------
def test_file_level_noqa_for_some_codes(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text("# devlint: noqa: DL501, DL102\n" + BUGGY)
    assert found("pkg") == [("DL101", 6), ("DL101", 11)]
    (project / "pkg" / "buggy.py").write_text("import torch\n# devlint: noqa\n" + BUGGY)
    assert found("pkg") == []
    # Only on a line of its own, as the other file-level comments.
    (project / "pkg" / "buggy.py").write_text('x = 1  # devlint: noqa: DL501\n' + BUGGY)
    assert ("DL501", 7) in found("pkg")


# -- DL900: unused-noqa -------------------------------------------------------------------------------------------
UNUSED = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
a = torch.zeros(1).to(device)  # noqa: DL101
b = torch.zeros(1).cuda()  # noqa: DL101, DL102, E501
c = torch.zeros(1).to(device)  # noqa: DL777  # keep me
d = torch.zeros(1).to(device)  # noqa
e = torch.zeros(1).to(device)  # noqa: DL402
s = "not a comment  # noqa: DL101"
f = torch.zeros(1).to(device)  # noqa: DL101 because reasons
"""


def test_unused_noqa_is_off_by_default(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text(UNUSED)
    assert found("pkg") == []


def test_unused_noqa_reports_devlint_codes_that_silence_nothing(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text(UNUSED)
    result = check("--output-format", "json", "--extend-select", "DL900", "--ignore", "DL402", "pkg")
    records = json.loads(result.stdout)
    assert [(r["code"], r["line"], r["column"], r["message"]) for r in records] == [
        ("DL900", 4, 32, "Unused `noqa` directive (unused: `DL101`)"),
        ("DL900", 5, 28, "Unused `noqa` directive (unused: `DL102`)"),
        ("DL900", 6, 32, "Unused `noqa` directive (unknown: `DL777`)"),
        ("DL900", 8, 32, "Unused `noqa` directive (non-enabled: `DL402`)"),
        ("DL900", 10, 32, "Unused `noqa` directive (unused: `DL101`)"),
    ]
    assert all(r["fixable"] for r in records)
    fixed = check("--extend-select", "DL900", "--ignore", "DL402", "--fix", "pkg")
    assert fixed.exit_code == 0, fixed.output
    assert (project / "pkg" / "buggy.py").read_text() == (
        "import torch\n"
        "\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "a = torch.zeros(1).to(device)\n"
        "b = torch.zeros(1).cuda()  # noqa: DL101, E501\n"
        "c = torch.zeros(1).to(device)  # keep me\n"
        "d = torch.zeros(1).to(device)  # noqa\n"
        "e = torch.zeros(1).to(device)\n"
        's = "not a comment  # noqa: DL101"\n'
        "f = torch.zeros(1).to(device)  # because reasons\n"
    )


def test_unused_noqa_honours_its_own_suppression(project: Path) -> None:
    (project / "pkg" / "buggy.py").write_text("import torch\nx = 1  # noqa: DL101, DL900\n")
    assert found("--extend-select", "DL900", "pkg") == []
    (project / "pkg" / "buggy.py").write_text("# devlint: noqa: DL900\nimport torch\nx = 1  # noqa: DL101\n")
    assert found("--extend-select", "DL900", "pkg") == []
    (project / "pkg" / "buggy.py").write_text("import torch\nx = 1  # noqa: DL101\n")
    assert found("--extend-select", "DL900", "pkg") == [("DL900", 2)]


def test_a_noqa_where_the_string_ends_suppresses_and_counts_as_used(project: Path) -> None:
    head = 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    (project / "pkg" / "buggy.py").write_text(head + 'x = torch.load("""a\nb""")\n')
    assert found("--extend-select", "DL900", "pkg") == [("DL501", 3)]
    (project / "pkg" / "buggy.py").write_text(head + 'x = torch.load("""a\nb""")  # noqa: DL501\n')
    assert found("--extend-select", "DL900", "pkg") == []
