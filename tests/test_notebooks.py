"""Jupyter notebooks: discovery, cells joined top to bottom, IPython syntax, positions in every
format, suppression, --fix/--diff written back byte for byte, bad notebooks, the cache."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main
from devlint.ipython_syntax import blank_ipython
from devlint.notebook import read_notebook

ROOT = Path(__file__).resolve().parent.parent
BUGGY = ROOT / "fixtures" / "notebook_train_buggy.ipynb"
CORRECT = ROOT / "fixtures" / "notebook_train.ipynb"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _notebook(*cells: str | tuple[str, str], indent: int = 1, ensure_ascii: bool = False, **top: object) -> str:
    """A notebook of code cells (a tuple is (cell_type, source)), as Jupyter would save it."""
    listed = []
    for cell in cells:
        kind, text = cell if isinstance(cell, tuple) else ("code", cell)
        lines = text.splitlines(keepends=True)
        entry: dict[str, object] = {"cell_type": kind, "metadata": {}, "source": lines}
        if kind == "code":
            entry |= {"execution_count": None, "outputs": []}
        listed.append(entry)
    document = {"cells": listed, "metadata": {}, "nbformat": 4, "nbformat_minor": 5} | top
    return json.dumps(document, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# -- what is found, and where ---------------------------------------------------------

def test_a_folder_walk_reports_a_notebook_cell_with_its_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb").mkdir()
    _write(tmp_path / "nb", "train.ipynb", _notebook(("markdown", "# Title\n"), "import torch\n", "x = torch.zeros(2)\n\nx = x.cuda()\n"))
    code, out, _ = _run("nb")
    assert out == (
        "nb/train.ipynb:cell 3:3:5: DL101 `x.cuda()` hardcodes a CUDA GPU and fails on machines without one; "
        "use `.to(device)` with a selected device\nFound 1 problem.\n"
    )
    assert code == 1


def test_checkpoints_and_excluded_notebooks_are_not_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = _notebook("import torch\nm = torch.nn.Linear(1, 1).cuda()\n")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    _write(tmp_path / ".ipynb_checkpoints", "train-checkpoint.ipynb", bad)
    (tmp_path / "scratch").mkdir()
    _write(tmp_path / "scratch", "try.ipynb", bad)
    _write(tmp_path, "train.ipynb", bad)
    code, out, _ = _run("--show-files", "--extend-exclude", "scratch", ".")
    assert out == "train.ipynb\n"


def test_a_notebook_named_explicitly_is_never_green_when_a_cell_has_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The JSON of a notebook is a valid Python expression: read as Python it passed, a false green.
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "nb.ipynb", _notebook("import torch\nstate = torch.load('ckpt.pt')\n"))
    code, out, _ = _run("nb.ipynb")
    assert code == 1
    assert "All checks passed!" not in out
    assert out.startswith("nb.ipynb:cell 1:2:9: DL501 ")


def test_dataflow_follows_the_cells_top_to_bottom() -> None:
    _, out, _ = _run(str(BUGGY))
    # The model moved in cell 7 meets the batches of cell 8; the messages name the other cell.
    assert f"{BUGGY}:cell 8:5:23: DL201 `data` comes from `train_loader` (line 3) on the CPU, but `model` lives on `cuda` " in out
    assert "(moved by `.cuda()`, cell 7, line 1)" in out


def test_json_gives_the_cell_and_lines_within_it() -> None:
    _, out, _ = _run("--output-format", "json", str(BUGGY))
    findings = json.loads(out)
    assert [(f["code"], f["cell"], f["line"], f["column"], f["end_line"], f["end_column"]) for f in findings] == [
        ("DL102", 3, 1, 23, 1, 29),
        ("DL101", 7, 1, 9, 1, 21),
        ("DL201", 8, 5, 12, 5, 43),
        ("DL201", 8, 5, 23, 5, 34),
        ("DL202", 9, 6, 9, 6, 26),
        ("DL302", 9, 7, 28, 7, 61),
        ("DL501", 11, 2, 9, 2, 58),
    ]
    dl101 = findings[1]
    assert list(dl101) == ["code", "message", "path", "cell", "line", "column", "end_line", "end_column", "fixable", "fix"]
    assert dl101["fix"]["edits"] == [
        {"content": "to(device)", "location": {"row": 1, "column": 15}, "end_location": {"row": 1, "column": 21}, "cell": 7}
    ]


def test_json_of_a_python_file_has_no_cell(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.py", "import torch\nx = torch.zeros(1).cuda()\n")
    _, out, _ = _run("--output-format", "json", str(path))
    assert "cell" not in json.loads(out)[0]


def test_sarif_and_github_point_at_the_line_of_the_json_that_holds_the_code() -> None:
    document_lines = BUGGY.read_text(encoding="utf-8").splitlines()
    _, out, _ = _run("--output-format", "github", str(BUGGY))
    first = out.splitlines()[1]
    match = re.match(r"::error file=(.*?),line=(\d+),col=(\d+),endLine=\d+,endColumn=(\d+),title=DL101::DL101 cell 7, line 1, column 9: ", first)
    assert match is not None, first
    line, col, end_col = int(match.group(2)), int(match.group(3)), int(match.group(4))
    assert document_lines[line - 1][col - 1 : end_col - 1] == "Net().cuda()"
    _, sarif, _ = _run("--output-format", "sarif", str(BUGGY))
    result = json.loads(sarif)["runs"][0]["results"][1]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (line, col)
    assert result["properties"] == {"cell": 7, "cellLine": 1, "cellColumn": 9}
    assert result["message"]["text"].startswith("cell 7, line 1: `Net().cuda()` hardcodes")
    assert "fixes" not in result


def test_a_position_after_escapes_is_found_in_the_json_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "nb.ipynb", _notebook('import torch\nname = "a \\"quoted\\" é"; x = torch.zeros(1).cuda()\n', ensure_ascii=True))
    _, out, _ = _run("--output-format", "github", str(path))
    match = re.search(r"line=(\d+),col=(\d+),endLine=\d+,endColumn=(\d+)", out)
    assert match is not None
    line = path.read_text(encoding="utf-8").splitlines()[int(match.group(1)) - 1]
    assert line[int(match.group(2)) - 1 : int(match.group(3)) - 1] == "torch.zeros(1).cuda()"


# -- IPython syntax --------------------------------------------------------------------

MAGICS = """\
%matplotlib inline
!pip install -q torch
files = !ls *.pt
?torch.load
torch.load??
for f in files:
    %time load(f)
    !echo {f} \\
        done
x = (10
     % 3)
doc = '''
%not a magic inside a string
'''
model = torch.nn.Linear(2, 2).cuda()
"""


def test_magics_and_shell_escapes_are_analysed_not_dl000(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "nb.ipynb",
        _notebook("import torch\n", MAGICS, "%%bash\nfor x in 1 2; do echo $x; done\n", "%%timeit\ny = torch.ones(1).cuda()\n"),
    )
    _, out, _ = _run("--select", "DL000,DL101", str(path))
    assert out == (
        f"{path}:cell 2:15:9: DL101 `torch.nn.Linear(2, 2).cuda()` hardcodes a CUDA GPU and fails on machines without one; "
        "use `.to(device)` with a selected device\n"
        f"{path}:cell 4:2:5: DL101 `torch.ones(1).cuda()` hardcodes a CUDA GPU and fails on machines without one; "
        "use `.to(device)` with a selected device\nFound 2 problems.\n"
    )


def test_blanking_keeps_every_position_and_python_untouched() -> None:
    blanked = blank_ipython(MAGICS)
    assert len(blanked) == len(MAGICS)
    assert [len(line) for line in blanked.split("\n")] == [len(line) for line in MAGICS.split("\n")]
    compile(blanked, "<cell>", "exec")
    assert blanked.split("\n")[2] == "files = ...     "
    assert blanked.split("\n")[6] == "    ...          "
    assert "% 3)" in blanked and "%not a magic inside a string" in blanked
    plain = "x = 1 % 2\nprint(x)\n"
    assert blank_ipython(plain) is plain
    bash = "%%bash\necho hi\n"
    assert blank_ipython(bash) == "      \n       \n"


def test_automagic_lines_are_ipythons_and_python_names_stay_python() -> None:
    # BiRefNet's ONNX tutorial: `cd ..` runs the `%cd` magic (IPython's automagic is on by default).
    assert blank_ipython("cd ..\nimport torch\n") == "...  \nimport torch\n"
    assert blank_ipython("pip install onnx\nx = 1\n") == "...             \nx = 1\n"
    shadowed = "cd = 3\nprint(cd)\n"
    assert blank_ipython(shadowed) is shadowed


def test_a_cell_that_does_not_parse_is_one_dl000_in_that_cell(tmp_path: Path) -> None:
    path = _write(tmp_path, "nb.ipynb", _notebook("import torch\n", "def f(:\n    pass\n"))
    other = _write(tmp_path, "b.py", "import torch\nx = torch.zeros(1).cuda()\n")
    code, out, err = _run(str(path), str(other))
    lines = out.splitlines()
    assert lines[0] == f"{other}:2:5: DL101 `torch.zeros(1).cuda()` hardcodes a CUDA GPU and fails on machines without one; use `.to(device)` with a selected device"
    assert lines[1] == f"{path}:cell 2:1:7: DL000 syntax error: invalid syntax"
    assert code == 1 and "Traceback" not in out + err


# -- suppression --------------------------------------------------------------------------

def test_noqa_in_a_cell_skip_file_in_any_cell_and_per_file_ignores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cuda = "import torch\nx = torch.zeros(1).cuda()\n"
    _write(tmp_path, "noqa.ipynb", _notebook(cuda, "y = torch.zeros(1).cuda()  # noqa: DL101\n"))
    _write(tmp_path, "skip.ipynb", _notebook(cuda, ("markdown", "# devlint: skip-file\n"), "# devlint: skip-file\n"))
    (tmp_path / "explore").mkdir()
    _write(tmp_path / "explore", "gpu.ipynb", _notebook(cuda))
    _write(tmp_path, "pyproject.toml", '[tool.devlint.per-file-ignores]\n"explore/*.ipynb" = ["DL101"]\n')
    _, out, _ = _run(".")
    assert [line.split(" DL")[0] for line in out.splitlines()[:-1]] == ["noqa.ipynb:cell 1:2:5:"]


def test_a_notebook_of_another_language_has_nothing_to_check(tmp_path: Path) -> None:
    text = _notebook("x <- c(1, 2)\nlibrary(torch)\n", metadata={"kernelspec": {"language": "R", "name": "ir"}})
    assert _run(str(_write(tmp_path, "r.ipynb", text)))[:2] == (0, "All checks passed!\n")


# -- bad notebooks ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"cells": [}\n', "bad.ipynb:1:12: DL000 not a Jupyter notebook: invalid JSON (Expecting value)"),
        (
            '{"nbformat": 3, "worksheets": [{"cells": []}], "metadata": {}}\n',
            "bad.ipynb:1:1: DL000 notebook format 3 is not supported: devlint reads nbformat 4 "
            "(convert it with `jupyter nbconvert --to notebook --inplace`)",
        ),
        ('{"nbformat": 4, "metadata": {}}\n', "bad.ipynb:1:1: DL000 not a Jupyter notebook: no list of cells"),
        ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}\n',
         "bad.ipynb:1:1: DL000 not a Jupyter notebook: the source of cell 1 is neither a string nor a list of strings"),
        ("", "bad.ipynb:1:1: DL000 not a Jupyter notebook: invalid JSON (Expecting value)"),
        ('{"cells": []}\x00', "bad.ipynb:1:14: DL000 not a Jupyter notebook: invalid JSON (Extra data)"),
    ],
)
def test_a_bad_notebook_is_one_clear_line_and_the_others_are_still_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, line: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "bad.ipynb", text)
    _write(tmp_path, "good.ipynb", _notebook("import torch\nx = torch.zeros(1).cuda()\n"))
    code, out, err = _run(".")
    assert out.splitlines()[0] == line
    assert out.splitlines()[1].startswith("good.ipynb:cell 1:2:5: DL101 ")
    assert code == 1 and err == "" and "Traceback" not in out


def test_a_huge_notebook_of_image_outputs_is_read_for_its_cells(tmp_path: Path) -> None:
    image = "iVBORw0KGgo" * 3_000_000  # 33 MB of base64, as a notebook full of plots holds
    document = json.loads(_notebook("import torch\nx = torch.zeros(1).cuda()\n"))
    document["cells"][0]["outputs"] = [{"data": {"image/png": image}, "metadata": {}, "output_type": "display_data"}] * 3
    path = _write(tmp_path, "big.ipynb", json.dumps(document, indent=1))
    _, out, _ = _run(str(path))
    assert out.startswith(f"{path}:cell 1:2:5: DL101 ")


# -- --fix and --diff ---------------------------------------------------------------------------

FIXED_LINES = {
    '    "model = Net().cuda()\\n",': '    "model = Net().to(device)\\n",',
    '    "        target.to(device)\\n",': '    "        target = target.to(device)\\n",',
    '    "        predictions.append(model(data).argmax(dim=1).numpy())"': '    "        predictions.append(model(data).argmax(dim=1).cpu().numpy())"',
}


def test_fix_changes_only_the_cell_sources_it_fixes_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    shutil.copyfile(BUGGY, path)
    before = path.read_bytes()
    code, out, err = _run("--fix", str(path))
    assert err == "Fixed 3 problems.\n"
    after = path.read_bytes()
    expected = before.decode("utf-8")
    for old, new in FIXED_LINES.items():
        assert expected.count(old) == 1
        expected = expected.replace(old, new)
    assert after.decode("utf-8") == expected  # every other byte, outputs and metadata included, as it was
    old, new = json.loads(before), json.loads(after)
    assert [cell for cell in old["cells"] if cell not in new["cells"]] == [old["cells"][6], old["cells"][8]]
    assert "".join(new["cells"][6]["source"]) == "model = Net().to(device)\noptimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)\nnn.Linear?"
    assert code == 1 and "cell 11:2:9: DL501" in out
    assert _run("--fix", str(path))[2] == "Fixed 0 problems.\n"
    assert path.read_bytes() == after


def test_diff_shows_each_cell_source_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    shutil.copyfile(BUGGY, path)
    code, out, err = _run("--diff", str(path))
    assert out == (
        f"--- {path}:cell 7\n+++ {path}:cell 7\n@@ -1,3 +1,3 @@\n-model = Net().cuda()\n+model = Net().to(device)\n"
        " optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)\n nn.Linear?\n\\ No newline at end of file\n"
        f"--- {path}:cell 9\n+++ {path}:cell 9\n@@ -3,5 +3,5 @@\n with torch.no_grad():\n     for data, target in test_loader:\n"
        "         data = data.to(device)\n-        target.to(device)\n-        predictions.append(model(data).argmax(dim=1).numpy())\n"
        "\\ No newline at end of file\n+        target = target.to(device)\n"
        "+        predictions.append(model(data).argmax(dim=1).cpu().numpy())\n\\ No newline at end of file\n"
    )
    assert code == 1 and err == "Would fix 3 problems (1 additional fix available with --unsafe-fixes).\n"
    assert path.read_bytes() == BUGGY.read_bytes()


@pytest.mark.parametrize(("indent", "ensure_ascii"), [(1, False), (2, True), (4, False)])
def test_fix_keeps_the_layout_the_notebook_was_written_with(tmp_path: Path, indent: int, ensure_ascii: bool) -> None:
    cells = ("import torch\n# café ☕\n", "x = torch.zeros(1)\nx.to(\"meta\")  # é\ny = 1\n")
    path = _write(tmp_path, "nb.ipynb", _notebook(*cells, indent=indent, ensure_ascii=ensure_ascii))
    assert _run("--fix", str(path))[2] == "Fixed 1 problem.\n"
    fixed = (cells[0], "x = torch.zeros(1)\nx = x.to(\"meta\")  # é\ny = 1\n")
    assert path.read_text(encoding="utf-8") == _notebook(*fixed, indent=indent, ensure_ascii=ensure_ascii)


def test_fix_keeps_a_source_written_as_one_string_and_the_magics(tmp_path: Path) -> None:
    document = {
        "cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": "%%time\n!nvidia-smi\nimport torch\nx = torch.zeros(1)\nx.to(\"meta\")"}],
        "metadata": {"custom": {"b": 1, "a": 2}},
        "nbformat_minor": 2,
        "nbformat": 4,
    }
    path = _write(tmp_path, "nb.ipynb", json.dumps(document, indent=2))  # no final newline, keys unsorted
    _run("--fix", str(path))
    document["cells"][0]["source"] = "%%time\n!nvidia-smi\nimport torch\nx = torch.zeros(1)\nx = x.to(\"meta\")"
    assert path.read_text(encoding="utf-8") == json.dumps(document, indent=2)


def test_stdin_fix_prints_the_fixed_notebook(tmp_path: Path) -> None:
    text = _notebook("import torch\nx = torch.zeros(1)\nx.to(\"meta\")\n")
    result = CliRunner().invoke(main, ["check", "--fix", "--stdin-filename", "nb.ipynb"], input=text)
    assert result.stdout == _notebook("import torch\nx = torch.zeros(1)\nx = x.to(\"meta\")\n")


def test_unchanged_notebooks_encode_to_their_own_bytes() -> None:
    for path in (BUGGY, CORRECT):
        data = path.read_bytes()
        source = read_notebook(data)
        assert source.encode(source.text) == data


# -- the cache ------------------------------------------------------------------------------------

def test_the_cache_keeps_cells_and_notices_an_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path, "nb.ipynb", _notebook("import torch\n", "x = torch.zeros(1).cuda()\n"))
    runs = [CliRunner().invoke(main, ["check", "--output-format", "json", "nb.ipynb"]).stdout for _ in range(2)]
    assert runs[0] == runs[1] == _run("--output-format", "json", "nb.ipynb")[1]
    assert json.loads(runs[1])[0]["cell"] == 2
    path.write_text(_notebook("import torch\n", "\nx = torch.zeros(1).cuda()\n"), encoding="utf-8")
    assert json.loads(CliRunner().invoke(main, ["check", "--output-format", "json", "nb.ipynb"]).stdout)[0]["line"] == 2


def test_the_language_server_leaves_notebooks_alone() -> None:
    pytest.importorskip("pygls")
    from devlint.server.language_server import is_python

    assert not is_python("vscode-notebook-cell:/home/me/train.ipynb#W2sZmlsZQ%3D%3D", "python")
    assert not is_python("file:///home/me/train.ipynb", None)
    assert is_python("file:///home/me/train.py", "python")


def test_add_noqa_writes_into_the_cells(tmp_path: Path) -> None:
    path = _write(tmp_path, "nb.ipynb", _notebook("%matplotlib inline\nimport torch\n", "x = torch.zeros(1).cuda()\n"))
    assert _run("--add-noqa", str(path))[2] == "Added 1 noqa directive.\n"
    assert path.read_text(encoding="utf-8") == _notebook("%matplotlib inline\nimport torch\n", "x = torch.zeros(1).cuda()  # noqa: DL101\n")
    assert _run(str(path))[:2] == (0, "All checks passed!\n")
