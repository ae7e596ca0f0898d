"""Large literal tables are blanked before libcst parses the file; nothing a user sees may change."""

from __future__ import annotations

import ast
from pathlib import Path

from click.testing import CliRunner

from devlint.cli import main
from devlint.config import Settings
from devlint.elision import MIN_ELIDED_CHARS, elide_data_tables
from tests.linting import lint

ROWS = MIN_ELIDED_CHARS // 40 + 10


def _table(name: str = "TABLE", value: str = "(1, -2.5, 'x')", newline: str = "\n") -> str:
    rows = "".join(f"    ({i}, torch.float16, 'ñ{i}'): {value},{newline}" for i in range(ROWS))
    return f"{name} = {{{newline}    # generated{newline}{rows}}}{newline}"


def _elided(text: str) -> str:
    return elide_data_tables(text, ast.parse(text))


def test_a_large_table_is_blanked_keeping_every_offset_and_line_break() -> None:
    text = "import torch\n" + _table() + "x = 1\n"
    out = _elided(text)
    assert out != text
    assert len(out) == len(text)
    assert [i for i, c in enumerate(out) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]
    table_start = text.index("{")
    assert out[: table_start + 1] == text[: table_start + 1]
    assert out[text.rindex("}") :] == text[text.rindex("}") :]
    assert "..." in out and "torch.float16" not in out
    assert ast.dump(ast.parse(out).body[-1]) == ast.dump(ast.parse(text).body[-1])


def test_crlf_tables_keep_their_line_breaks() -> None:
    text = "import torch\r\n" + _table(newline="\r\n") + "x = 1\r\n"
    out = _elided(text)
    assert out != text and out.count("\r\n") == text.count("\r\n") and len(out) == len(text)


def test_small_tables_calls_and_device_strings_are_left_alone() -> None:
    small = "import torch\nT = {1: 2, 3: 4}\n" + "# pad\n" * 3000
    with_call = "import torch\n" + _table(value="torch.zeros(2)")
    with_device = "import torch\n" + _table(value="'cuda:0'")
    in_function = "import torch\ndef f():\n" + "".join("    " + line + "\n" for line in _table().splitlines())
    bare_tuple = "import torch\nT = " + ", ".join(str(i) for i in range(MIN_ELIDED_CHARS // 3)) + "\n"
    for text in (small, with_call, with_device, in_function, bare_tuple):
        assert _elided(text) == text


def test_cpu_and_meta_strings_do_not_keep_a_table() -> None:
    # Only accelerator names matter to DL102; torch's generated tables name "meta" freely.
    for value in ("'cpu'", "'meta'", "'device'"):
        text = "import torch\n" + _table(value=value)
        assert _elided(text) != text


def test_findings_after_a_table_keep_their_exact_positions() -> None:
    source = "import torch\n" + _table() + "y = torch.ones(3).cuda()  # 'é'\n"
    findings = lint(source, Settings(select=("DL101",)))
    line = source.count("\n")
    assert [(f.code, f.start.line, f.start.column, f.end.column) for f in findings] == [("DL101", line, 5, 25)]


def test_fix_next_to_a_table_keeps_the_table_byte_for_byte(tmp_path: Path) -> None:
    table = _table()
    path = tmp_path / "tables.py"
    head = "import torch\n" + table + "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    path.write_bytes((head + "sd = torch.load('w.pt')\n").encode())
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "--no-cache", "--select", "DL501", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes().decode() == head + "sd = torch.load('w.pt', map_location=device)\n"


def test_a_table_that_mentions_an_accelerator_stays_for_dl501() -> None:
    # The table is the file's only accelerator word: blanking it would make the file
    # look CPU-only, and DL501 stays silent on CPU-only files.
    rows = "".join(f"    ({i}, 0, 0): (0, 0, 0),\n" for i in range(ROWS))
    source = f'import torch\nCONFIGS = {{\n    "backend": "cuda_graphs",\n{rows}}}\n\n\ndef load_model(path):\n    return torch.load(path)\n'
    assert _elided(source) == source
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL501", source.count("\n"))]
    for word in ("ngpu", "torch.cuda.Stream", "x.device"):
        table = "import torch\n" + _table(value=word)
        assert _elided(table) == table, word
