"""Bad input: one clear line per file, the documented exit code, never a traceback, other files still checked."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import devlint.engine as engine
from devlint.cli import main
from devlint.config import Settings
from unprivileged import SKIP_REASON, unprivileged_prefix

GOOD = 'import torch\nx = torch.zeros(1).cuda()\n'  # one DL101 at 2:5: proves the other file was checked


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*paths: str) -> tuple[int, list[tuple[str, str, int, int, str]], str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", *paths])
    assert "Traceback" not in result.output
    records = json.loads(result.stdout)
    return result.exit_code, [(r["path"], r["code"], r["line"], r["column"], r["message"]) for r in records], result.stderr


def assert_reported(bad: str, line: int, column: int, message: str, *paths: str) -> None:
    code, records, stderr = check(*(paths or (bad, "good.py")))
    assert code == 1
    assert stderr == ""
    assert (bad, "DL000", line, column, message) in records
    assert ("good.py", "DL101", 2, 5) in [record[:4] for record in records]
    for record in records:
        assert "\n" not in record[4]


# Runs that could hang (a FIFO blocks its reader until a writer comes, /dev/zero never ends) or
# exhaust memory are subprocesses with a time limit: a regression fails instead of hanging the suite.
RUN_LIMIT_S = 60


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--output-format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
    )


def records_of(process: subprocess.CompletedProcess[str]) -> list[tuple[str, str, int, int, str]]:
    assert "Traceback" not in process.stderr
    return [(r["path"], r["code"], r["line"], r["column"], r["message"]) for r in json.loads(process.stdout)]


GOOD_RECORD = (
    "good.py",
    "DL101",
    2,
    5,
    "`torch.zeros(1).cuda()` hardcodes a CUDA GPU and fails on machines without one; use `.to(device)` with a selected device",
)


def test_syntax_error(folder: Path) -> None:
    (folder / "bad.py").write_text("import torch\nx = torch.zeros((3,)\ny = 1\n")
    assert_reported("bad.py", 2, 16, "syntax error: '(' was never closed")


def test_syntax_error_reported_by_cpython_position(folder: Path) -> None:
    (folder / "bad.py").write_text("import torch\n\ndef f(:\n    return torch.load('x')\n")
    assert_reported("bad.py", 3, 7, "syntax error: invalid syntax")


def test_code_python_accepts_but_libcst_cannot_parse(folder: Path) -> None:
    # Valid Python 3 (an annotated parenthesised name, as in CPython's own test_grammar.py).
    (folder / "odd.py").write_text("import torch\n\ndef f():\n    (x): int\n")
    assert_reported(
        "odd.py",
        4,
        1,
        "not analysed: CPython accepts this code but libcst, the parser devlint uses, does not (expected one of !=, %, "
        "&, (, *, **, +, ,, -, ., /, //, ;, <, <<, <=, =, ==, >, >=, >>, @, NEWLINE, [, ^, and, if, in, is, not, or, |)",
    )


# Valid Python that libcst's tokenizer refuses as written: respelled for it, character for
# character, so that every position stays where it is in the file.
RESPELLED = {
    # CPython reads a tab as up to 8 columns and accepts the mix when both readings agree.
    "tab-indented line in a space-indented block": (
        "import torch\n\ndef f(x):\n    if x:\n\t    x = x.cuda()\n    return x\n",
        [("DL101", 5, 10)],
    ),
    "tab and spaces in nested blocks": (
        "import torch\n\ndef f(x):\n \tdef g(y):\n\t  return y.cuda()\n \treturn g\n",
        [("DL101", 5, 11)],
    ),
    "continuation at the end of the file": ("import torch\nx = torch.zeros(1).cuda() \\\r\n", [("DL101", 2, 5)]),
}


@pytest.mark.parametrize(("source", "expected"), RESPELLED.values(), ids=RESPELLED.keys())
def test_valid_code_libcst_refuses_as_written_is_analysed(folder: Path, source: str, expected: list[tuple[str, int, int]]) -> None:
    compile(source, "odd.py", "exec")  # valid Python
    (folder / "odd.py").write_bytes(source.encode())
    code, records, _ = check("odd.py")
    assert (code, [record[1:4] for record in records]) == (1, expected)


def test_fix_in_a_tab_indented_line_keeps_the_tab(folder: Path) -> None:
    source = "import torch\n\ndef f(x, device):\n    if x:\n\t    x = x.cuda()\n    return x\n"
    (folder / "odd.py").write_bytes(source.encode())
    result = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "odd.py"])
    assert (result.exit_code, result.stderr) == (0, "Fixed 1 problem.\n")
    assert (folder / "odd.py").read_bytes() == source.replace(".cuda()", ".to(device)").encode()


def test_valid_code_libcst_cannot_parse_says_why(folder: Path) -> None:
    # A backslash continuation that starts an indented line: CPython takes the indentation before it.
    source = "import torch\n\ndef f():\n \\\n    return torch.load('x')\n"
    compile(source, "odd.py", "exec")
    (folder / "odd.py").write_text(source)
    assert_reported("odd.py", 5, 1, "not analysed: CPython accepts this code but libcst, the parser devlint uses, does not (expected INDENT)")


def test_latin1_without_coding_line(folder: Path) -> None:
    (folder / "bad.py").write_bytes("import torch\n# caf\xe9\nx = 1\n".encode("latin-1"))
    assert_reported(
        "bad.py", 2, 1, "cannot decode as utf-8 at byte 18 (add a PEP 263 coding line if the file is not UTF-8)"
    )


def test_latin1_with_coding_line_is_fine(folder: Path) -> None:
    (folder / "ok.py").write_bytes("# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\nx = torch.zeros(1).cuda()\n".encode("latin-1"))
    code, records, _ = check("ok.py")
    assert (code, [record[:4] for record in records]) == (1, [("ok.py", "DL101", 4, 5)])


def test_binary_file_named_py(folder: Path) -> None:
    (folder / "bad.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00torch.cuda")
    assert_reported("bad.py", 1, 1, "binary file (contains NUL bytes), not Python source")


def test_empty_file(folder: Path) -> None:
    (folder / "empty.py").write_text("")
    code, records, _ = check("empty.py", "good.py")
    assert code == 1
    assert [record[:2] for record in records] == [("good.py", "DL101")]


def test_five_megabyte_file(folder: Path) -> None:
    line = "x = torch.zeros(3).cuda()  # a generated file\n"
    (folder / "huge.py").write_text("import torch\n" + line * (5_000_000 // len(line)))
    assert_reported("huge.py", 1, 1, "file too large to analyse (5.0 million characters; devlint parses files up to 2 million)")


# 2 MB on one line: libcst would need 3.4 GB for it (about 3 kB per token).
ONE_LONG_LINE = "import torch\nf(" + "torch.zeros(1), " * 124_000 + ")\n"  # 7 tokens a call, 8 around them
TOO_MANY_TOKENS = "file too large to analyse (868,008 tokens; devlint parses files of up to 250,000, as its parser needs about 3 kB of memory per token)"


def test_too_many_tokens_is_refused_before_any_tree_is_built(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "line.py").write_text(ONE_LONG_LINE)

    original = engine.python_verdict

    def no_tree_of_large_text(text: str) -> object:
        if len(text) > 1_000_000:
            raise AssertionError("CPython's syntax tree was built: as much memory again as the parse")
        return original(text)

    monkeypatch.setattr(engine, "python_verdict", no_tree_of_large_text)
    assert_reported("line.py", 1, 1, TOO_MANY_TOKENS)


@pytest.mark.skipif(sys.platform == "win32", reason="address-space limits are POSIX")
def test_a_two_megabyte_line_fits_in_bounded_memory(folder: Path) -> None:
    import resource

    (folder / "line.py").write_text(ONE_LONG_LINE)
    limit = 1 << 30  # 1 GiB of address space for the whole process

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    process = subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--no-cache", "--output-format", "json", "line.py", "good.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        preexec_fn=bounded,
    )
    assert (process.returncode, process.stderr) == (1, "")
    assert records_of(process) == [GOOD_RECORD, ("line.py", "DL000", 1, 1, TOO_MANY_TOKENS)]


BOUNDED = {
    "statements": "import torch\nx = torch.zeros(1).cuda()\n" * 50,
    "line breaks alone": "a = 1\r" * 50 + "b = [\r1,\r2]\r",
    "indents and dedents": "".join(" " * depth + f"if x{depth}:\n" for depth in range(40)) + " " * 40 + "pass\n",
    "operators and numbers": "x = 1.5e3 ** -2 // 0x1F >> 3 != ~y @ z\ny **= 2; z //= 3\n" * 20,
    "strings and comments": "s = f'{a!r:>{w}}' + rb'' + '''\n''' + \"\"  # note\n" * 20,
    "a keyword stuck to a number": "x = 1if y else 2\n" * 20,
    "unicode names": "größe = ñ + π\n" * 20,
}


@pytest.mark.parametrize("text", BOUNDED.values(), ids=BOUNDED.keys())
def test_the_cheap_token_bound_is_never_below_the_count(text: str) -> None:
    """Files the bound rules out are never tokenized: it must not be below the true count."""
    import io
    import tokenize

    from devlint import source

    count = sum(1 for _ in tokenize.generate_tokens(io.StringIO(text, newline=None).readline))
    assert source._most_tokens(text) >= count


def test_data_tables_do_not_count_against_the_token_limit(folder: Path) -> None:
    # 260,000 tokens of numbers and commas at module level: elided, then parsed.
    (folder / "table.py").write_text("import torch\nTABLE = [" + "1, " * 130_000 + "]\nx = torch.zeros(1).cuda()\n")
    code, records, _ = check("table.py")
    assert (code, [record[:4] for record in records]) == (1, [("table.py", "DL101", 3, 5)])


def test_large_file_without_torch_is_skipped_quietly(folder: Path) -> None:
    (folder / "data.py").write_text("TABLE = [\n" + "    1,\n" * 800_000 + "]\n")
    code, records, _ = check("data.py", "good.py")
    assert (code, [record[:2] for record in records]) == (1, [("good.py", "DL101")])


DEEP = {
    "parentheses": ("import torch\nx = " + "(" * 1000 + "torch.zeros(1)" + ")" * 1000 + ".cuda()\n", 2, 205,
                    "too deeply nested to analyse (too many nested parentheses)"),
    "lists": ("import torch\nx = " + "[" * 1000 + "torch.zeros(1).cuda()" + "]" * 1000 + "\n", 2, 205,
              "too deeply nested to analyse (too many nested parentheses)"),
    "plus chain": ("import torch\nx = torch.zeros(1).cuda()" + " + 1" * 5000 + "\n", 1, 1,
                   "too deeply nested to analyse (maximum recursion depth exceeded during ast construction)"),
    # Deep enough that libcst's native parser would overflow its stack and kill the process.
    "unary minus": ("import torch\nx = torch.zeros(1).cuda()\ny = " + "-" * 50_000 + "1\n", 1, 1,
                    "too deeply nested to analyse (parser stack overflow)"),
    "lambdas": ("import torch\nx = torch.zeros(1).cuda()\ny = " + "lambda: " * 6000 + "1\n", 1, 1,
                "too deeply nested to analyse (parser stack overflow)"),
}


@pytest.mark.parametrize(("source", "line", "column", "message"), DEEP.values(), ids=DEEP.keys())
def test_deeply_nested_expressions(folder: Path, source: str, line: int, column: int, message: str) -> None:
    (folder / "deep.py").write_text(source)
    assert_reported("deep.py", line, column, message)


def test_nesting_python_accepts_is_analysed(folder: Path) -> None:
    (folder / "deep.py").write_text("import torch\nx = " + "-" * 900 + "torch.zeros(1).cuda()\ny = 1" + " + 1" * 900 + "\n")
    code, records, _ = check("deep.py")
    assert (code, [record[:4] for record in records]) == (1, [("deep.py", "DL101", 2, 905)])


def test_symlink_loop(folder: Path) -> None:
    (folder / "a.py").symlink_to("b.py")
    (folder / "b.py").symlink_to("a.py")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to("..", target_is_directory=True)
    code, records, _ = check(".")
    assert code == 1
    assert [record[:4] for record in records] == [
        ("a.py", "DL000", 1, 1),
        ("b.py", "DL000", 1, 1),
        ("good.py", "DL101", 2, 5),
    ]
    assert records[0][4] == "cannot read file: Too many levels of symbolic links"


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(folder: Path) -> None:
    bad = folder / "secret.py"
    bad.write_text(GOOD)
    bad.chmod(0)
    try:
        assert_reported("secret.py", 1, 1, "cannot read file: Permission denied")
    finally:
        bad.chmod(0o644)


def test_unreadable_file_as_root(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs everywhere (root included): an OSError on read is the same DL000 line."""
    original = os.open

    def refuse(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if os.fsdecode(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", path)
        return original(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    (folder / "secret.py").write_text(GOOD)
    assert_reported("secret.py", 1, 1, "cannot read file: Permission denied")


def test_path_that_does_not_exist(folder: Path) -> None:
    assert_reported("missing.py", 1, 1, "cannot read file: No such file or directory")


def test_invalid_pyproject(folder: Path) -> None:
    (folder / "pyproject.toml").write_text("[tool.devlint]\nselect = [DL101]\n")
    result = CliRunner().invoke(main, ["check", "--no-cache", "good.py"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"devlint: error: {folder / 'pyproject.toml'}: not valid TOML: ")
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_unknown_config_key(folder: Path) -> None:
    (folder / "pyproject.toml").write_text("[tool.devlint]\nmax-line-length = 3\n")
    result = CliRunner().invoke(main, ["check", "--no-cache", "good.py"])
    assert result.exit_code == 2
    assert "unknown key 'max-line-length' in [tool.devlint]" in result.stderr


def test_unknown_rule_in_select(folder: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "DL101,DL1234", "good.py"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "devlint: error: --select: unknown rule code 'DL1234' (see `devlint rules`)\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the patch reaches the workers only through fork")
def test_worker_crash_loses_only_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies (native crash, OOM kill) costs one DL999, not the run."""
    for index in range(12):
        (tmp_path / f"m{index:02}.py").write_text(GOOD)
    (tmp_path / "m05.py").write_text(GOOD + "# crash here\n")
    original = engine.check_bytes

    def crashing(data: bytes, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if b"crash here" in data:
            os._exit(70)  # what a segfault in the parser looks like to the pool
        return original(data, *args, **kwargs)

    # The pool forks: the workers inherit the patched function.
    monkeypatch.setattr(engine, "check_bytes", crashing)
    files = [(path, path.name) for path in sorted(tmp_path.glob("*.py"))]
    results = engine.check_files(files, Settings(), jobs=2)
    assert [result.path for result in results] == [name for _, name in files]
    summary = [(result.path, [f.code for f in result.findings]) for result in results]
    assert summary == [(name, ["DL999"] if name == "m05.py" else ["DL101"]) for _, name in files]
    crash = results[5].findings[0]
    assert crash.message == "the devlint worker process checking this file died (a crash or out of memory); please report it"


# -- special files: only regular files are read ----------------------------------------------------
special = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


@special
def test_fifo_named_explicitly_is_one_finding(folder: Path) -> None:
    os.mkfifo(folder / "y.py")
    process = run_cli("--no-cache", "y.py", "good.py", cwd=folder)
    assert process.returncode == 1
    assert records_of(process) == [
        GOOD_RECORD,
        ("y.py", "DL000", 1, 1, "not a regular file (a named pipe): devlint reads only regular files"),
    ]


@special
def test_fifo_alone(folder: Path) -> None:
    os.mkfifo(folder / "y.py")
    process = run_cli("--no-cache", "y.py", cwd=folder)
    assert (process.returncode, records_of(process)) == (
        1,
        [("y.py", "DL000", 1, 1, "not a regular file (a named pipe): devlint reads only regular files")],
    )


@special
def test_special_files_in_a_tree_are_skipped(folder: Path) -> None:
    os.mkfifo(folder / "y.py")
    (folder / "zero.py").symlink_to("/dev/zero")
    (folder / "sub").mkdir()
    os.mkfifo(folder / "sub" / ".gitignore")  # never read: it would block the walk
    (folder / "sub" / "m.py").write_text(GOOD)
    process = run_cli("--no-cache", ".", cwd=folder)
    assert process.returncode == 1
    assert [record[:4] for record in records_of(process)] == [("good.py", "DL101", 2, 5), ("sub/m.py", "DL101", 2, 5)]


@special
def test_device_named_explicitly(folder: Path) -> None:
    (folder / "zero.py").symlink_to("/dev/zero")
    process = run_cli("--no-cache", "zero.py", cwd=folder)
    assert (process.returncode, records_of(process)) == (
        1,
        [("zero.py", "DL000", 1, 1, "not a regular file (a character device): devlint reads only regular files")],
    )


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")
def test_socket_named_explicitly(folder: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("s.py")  # relative: the folder's absolute path may be longer than a socket name may be
        process = run_cli("--no-cache", "s.py", ".", cwd=folder)
    finally:
        server.close()
    assert records_of(process) == [GOOD_RECORD, ("s.py", "DL000", 1, 1, "not a regular file (a socket): devlint reads only regular files")]


@special
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_cache_file_that_is_not_a_regular_file_is_ignored(folder: Path, kind: str) -> None:
    first = run_cli(".", cwd=folder)
    (cache_file,) = (folder / ".devlint_cache").rglob("*.json")
    cache_file.unlink()
    if kind == "fifo":
        os.mkfifo(cache_file)
    else:
        cache_file.symlink_to("/dev/zero")
    again = run_cli(".", cwd=folder)
    assert (again.returncode, records_of(again)) == (first.returncode, records_of(first)) == (1, [GOOD_RECORD])


# -- permissions --------------------------------------------------------------------------------------
def test_unreadable_folder_in_a_tree_is_one_finding(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs as root too: the walk is refused the listing as a non-root user would be."""
    (folder / "locked").mkdir()
    (folder / "locked" / "a.py").write_text(GOOD)
    original = os.scandir

    def refuse(path: object = ".") -> object:
        if Path(os.fsdecode(path)).name == "locked":  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", os.fsdecode(path))  # type: ignore[arg-type]
        return original(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refuse)
    for args in ((".",), ("locked", "good.py")):
        code, records, stderr = check(*args)
        assert (code, stderr) == (1, "")
        assert records == [GOOD_RECORD, ("locked", "DL000", 1, 1, "cannot read folder: Permission denied")]


def test_unreadable_folder_finding_obeys_the_selection(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "locked").mkdir()
    original = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": _refused(path) if Path(os.fsdecode(path)).name == "locked" else original(path))
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", "--ignore", "DL000", "."])
    assert [(r["path"], r["code"]) for r in json.loads(result.stdout)] == [("good.py", "DL101")]


def _refused(path: object) -> None:
    raise PermissionError(13, "Permission denied", os.fsdecode(path))  # type: ignore[arg-type]


def test_unreadable_paths_as_an_unprivileged_user() -> None:
    prefix = unprivileged_prefix()
    if prefix is None:
        pytest.skip(SKIP_REASON)
    top = Path(tempfile.mkdtemp(prefix="devlint-perm-"))
    try:
        top.chmod(0o755)  # the unprivileged user must reach it
        (top / "good.py").write_text(GOOD)
        (top / "good.py").chmod(0o644)
        (top / "locked").mkdir()
        (top / "locked" / "a.py").write_text(GOOD)
        (top / "locked").chmod(0)
        (top / "listed").mkdir()  # may be listed, not entered: its files cannot be read
        (top / "listed" / "b.py").write_text(GOOD)
        (top / "listed").chmod(0o444)
        (top / "secret.py").write_text(GOOD)
        (top / "secret.py").chmod(0)
        expected_locked = ("locked", "DL000", 1, 1, "cannot read folder: Permission denied")
        expected_listed = ("listed", "DL000", 1, 1, "cannot read folder: Permission denied")
        expected_secret = ("secret.py", "DL000", 1, 1, "cannot read file: Permission denied")
        for args, expected in (
            ((".",), [GOOD_RECORD, expected_listed, expected_locked, expected_secret]),
            (
                ("locked", "secret.py", "missing.py", "good.py"),
                [GOOD_RECORD, expected_locked, ("missing.py", "DL000", 1, 1, "cannot read file: No such file or directory"), expected_secret],
            ),
        ):
            process = subprocess.run(
                [*prefix, sys.executable, "-m", "devlint", "check", "--no-cache", "--output-format", "json", *args],
                cwd=top,
                capture_output=True,
                text=True,
                timeout=RUN_LIMIT_S,
            )
            assert process.stderr == ""
            assert (process.returncode, records_of(process)) == (1, expected)
    finally:
        (top / "locked").chmod(0o755)
        (top / "listed").chmod(0o755)
        shutil.rmtree(top)
