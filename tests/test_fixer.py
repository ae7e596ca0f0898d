"""Autofix through the real command line: --fix, --diff, --unsafe-fixes, atomic writes."""

from __future__ import annotations

import codecs
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

import devlint.fixer
from devlint.cli import main
from devlint.finding import Edit, Finding, Fix, Position
from devlint.fixer import choose_fixes
from unprivileged import SKIP_REASON, unprivileged_prefix

REPO = Path(__file__).resolve().parent.parent
PUBLIC = REPO.parent / "shared" / "eval" / "public"

BROKEN = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.anchors = torch.ones(4)
        self.heads = [nn.Linear(4, 4), nn.Linear(4, 2)]
        self.w = nn.Parameter(torch.zeros(4)).cuda()


def load(path):
    return torch.load(path)
"""

SAFE_FIXED = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.register_buffer("anchors", torch.ones(4), persistent=False)
        self.heads = [nn.Linear(4, 4), nn.Linear(4, 2)]
        self.w = nn.Parameter(torch.zeros(4).to(device))


def load(path):
    return torch.load(path)
"""

ALL_FIXED = SAFE_FIXED.replace(
    "self.heads = [nn.Linear(4, 4), nn.Linear(4, 2)]", "self.heads = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 2)])"
).replace("torch.load(path)", 'torch.load(path, map_location="cpu")')


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "net.py"
    path.write_text(BROKEN, encoding="utf-8")
    return path


def test_text_output_marks_fixable_findings(broken: Path) -> None:
    code, out, _ = run(str(broken))
    assert code == 1
    lines = out.splitlines()
    assert f"{broken}:8:9: DL401 [*] `self.anchors`" in "\n".join(lines)
    assert any(line.startswith(f"{broken}:9:9: DL402 `self.heads`") for line in lines)
    assert lines[-1] == "Found 5 problems (3 fixable with --fix, 2 more with --unsafe-fixes)."


def test_fix_applies_safe_fixes_over_passes(broken: Path) -> None:
    # DL401 moves `.cuda()` inside nn.Parameter, then DL101 turns it into `.to(device)`:
    # the two edits overlap, so they land in two passes.
    code, out, err = run("--fix", str(broken))
    assert broken.read_text(encoding="utf-8") == SAFE_FIXED
    assert "Fixed 3 problems." in err
    assert code == 1  # the unsafe ones remain
    assert out.splitlines()[-1] == "Found 2 problems (no fixes available; 2 hidden fixes can be enabled with --unsafe-fixes)."


def test_unsafe_fixes_and_idempotence(broken: Path) -> None:
    run("--fix", "--unsafe-fixes", str(broken))
    assert broken.read_text(encoding="utf-8") == ALL_FIXED
    code, out, err = run("--fix", "--unsafe-fixes", str(broken))
    assert broken.read_text(encoding="utf-8") == ALL_FIXED
    assert "Fixed 0 problems." in err
    assert code == 0 and out == "All checks passed!\n"


def test_diff_prints_and_writes_nothing(broken: Path) -> None:
    code, out, _ = run("--diff", str(broken))
    assert broken.read_text(encoding="utf-8") == BROKEN
    assert code == 1
    assert out.startswith(f"--- {broken}\n+++ {broken}\n@@ -5,9 +5,9 @@\n")
    assert '-        self.anchors = torch.ones(4)\n+        self.register_buffer("anchors", torch.ones(4), persistent=False)\n' in out
    assert "map_location" not in out
    _, unsafe_out, _ = run("--diff", "--unsafe-fixes", str(broken))
    assert '+    return torch.load(path, map_location="cpu")\n' in unsafe_out


def test_diff_exits_zero_when_nothing_to_fix(tmp_path: Path) -> None:
    path = tmp_path / "ok.py"
    path.write_text("import torch\nx = torch.zeros(2)\n", encoding="utf-8")
    assert run("--diff", str(path)) == (0, "", "")


def test_stdin_fix_prints_the_fixed_source() -> None:
    code, out, _ = run("--fix", "--stdin-filename", "net.py", input=BROKEN)
    assert out.startswith(SAFE_FIXED)


def test_mode_bits_encoding_and_line_endings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "net.py"
    text = "# -*- coding: latin-1 -*-\n# café\n" + BROKEN
    path.write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    path.chmod(0o640)
    run("--fix", str(path))
    expected = "# -*- coding: latin-1 -*-\n# café\n" + SAFE_FIXED
    assert path.read_bytes() == expected.replace("\n", "\r\n").encode("latin-1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_bom_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "net.py"
    path.write_bytes(codecs.BOM_UTF8 + BROKEN.encode("utf-8"))
    run("--fix", str(path))
    assert path.read_bytes() == codecs.BOM_UTF8 + SAFE_FIXED.encode("utf-8")


def test_failed_rename_leaves_the_original_intact(broken: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    code, out, err = run("--fix", str(broken))
    assert broken.read_bytes() == BROKEN.encode("utf-8")
    assert f"devlint: {broken}: cannot write the fixed file (Permission denied); file left unchanged" in err
    assert "Traceback" not in out + err
    assert code == 1
    assert sorted(p.name for p in broken.parent.iterdir()) == ["net.py"]  # no temporary file left behind
    assert "Found 5 problems" in out  # nothing was fixed


def test_failed_write_leaves_the_original_intact(broken: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen

    class _Full:
        def __init__(self, stream: object) -> None:
            self._stream = stream

        def __enter__(self) -> "_Full":
            return self

        def __exit__(self, *exc: object) -> None:
            self._stream.close()  # type: ignore[attr-defined]

        def write(self, data: bytes) -> int:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: _Full(real_fdopen(fd, mode)))
    code, _, err = run("--fix", str(broken))
    assert broken.read_bytes() == BROKEN.encode("utf-8")
    assert "No space left on device" in err and "file left unchanged" in err
    assert sorted(p.name for p in broken.parent.iterdir()) == ["net.py"]


def test_fix_that_would_not_parse_is_refused(broken: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devlint.fixer, "apply_edits", lambda text, fixes: text + "def (:\n")
    code, out, err = run("--fix", str(broken))
    assert broken.read_bytes() == BROKEN.encode("utf-8")
    assert f"devlint: {broken}: fixing would produce code that does not parse" in err
    assert "file left unchanged" in err and "Traceback" not in err
    assert "Found 5 problems" in out


def test_overlapping_fixes_wait_for_the_next_pass() -> None:
    def finding(start: int, end: int, safe: bool = True) -> Finding:
        fix = Fix((Edit(start, end, "x"),), safe=safe)
        return Finding("DL401", "m", "p.py", Position(1, 1), Position(1, 1), fix)

    chosen = choose_fixes([finding(5, 9), finding(0, 6), finding(9, 9), finding(12, 14, safe=False), finding(20, 30)], False, 25)
    # (0,6) first; (5,9) overlaps it; (9,9) inserts where nothing is taken; unsafe skipped; (20,30) out of range.
    assert [fix.edits[0].start for fix in chosen] == [0, 9]


def _fixable_files() -> list[Path]:
    files = sorted((REPO / "fixtures").rglob("*.py"))
    if PUBLIC.is_dir():
        files += sorted(PUBLIC.rglob("*.py"))
    return files


@pytest.mark.skipif(not _fixable_files(), reason="no fixtures or public cases here")
def test_every_fixture_fixes_to_valid_code_and_settles(tmp_path: Path) -> None:
    copies = []
    for index, source in enumerate(_fixable_files()):
        target = tmp_path / f"{index:03d}_{source.name}"
        shutil.copyfile(source, target)
        copies.append(target)
    run("--fix", "--unsafe-fixes", str(tmp_path))
    first = {path: path.read_bytes() for path in copies}
    for path, data in first.items():
        cst.parse_module(data)  # raises if a fix broke the file
    # A second run changes nothing.
    code, out, err = run("--diff", "--unsafe-fixes", str(tmp_path))
    assert (code, out) == (0, "") and "Traceback" not in err
    assert {path: path.read_bytes() for path in copies} == first


# -- the file system: links, owner, read-only files ----------------------------------------------------
def test_fix_through_a_symlink_fixes_the_file_it_points_to(tmp_path: Path) -> None:
    real = tmp_path / "src" / "net.py"
    real.parent.mkdir()
    real.write_text(BROKEN, encoding="utf-8")
    link = tmp_path / "link.py"
    link.symlink_to(Path("src") / "net.py")
    code, _, err = run("--fix", str(link))
    assert (code, err) == (1, "Fixed 3 problems.\n")
    assert link.is_symlink() and os.readlink(link) == str(Path("src") / "net.py")
    assert real.read_text(encoding="utf-8") == SAFE_FIXED
    assert sorted(p.name for p in real.parent.iterdir()) == ["net.py"]


def test_fix_keeps_hard_links(tmp_path: Path) -> None:
    first = tmp_path / "a.py"
    first.write_text(BROKEN, encoding="utf-8")
    second = tmp_path / "b.py"
    os.link(first, second)
    inode = first.stat().st_ino
    code, _, err = run("--fix", str(first))
    assert (code, err) == (1, "Fixed 3 problems.\n")
    assert first.stat().st_ino == second.stat().st_ino == inode
    assert first.stat().st_nlink == 2
    assert second.read_text(encoding="utf-8") == SAFE_FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]  # no backup left behind


def test_failed_write_of_a_hard_linked_file_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmp_path / "a.py"
    first.write_text(BROKEN, encoding="utf-8")
    os.link(first, tmp_path / "b.py")
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        if b".to(device)" in bytes(data):  # the fixed text: half of it lands, then the disk is full
            real_write(fd, bytes(data)[: len(data) // 2])
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    code, out, err = run("--fix", str(first))
    assert first.read_bytes() == BROKEN.encode("utf-8")
    assert f"devlint: {first}: cannot write the fixed file (No space left on device); file left unchanged" in err
    assert code == 1 and "Found 5 problems" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_fix_keeps_the_owner(broken: Path) -> None:
    os.chown(broken, 65534, 65534)
    run("--fix", str(broken))
    assert broken.read_text(encoding="utf-8") == SAFE_FIXED
    assert (broken.stat().st_uid, broken.stat().st_gid) == (65534, 65534)


def test_fix_as_another_user_keeps_the_owner(tmp_path: Path) -> None:
    """A file someone else owns but lets this user write is fixed in place: a new file would be this user's."""
    prefix = unprivileged_prefix()
    if not prefix:
        pytest.skip(SKIP_REASON if prefix is None else "runs as root, fixing a file as user 65534")
    top = Path(tempfile.mkdtemp(prefix="devlint-owner-"))
    try:
        top.chmod(0o777)
        path = top / "net.py"
        path.write_text(BROKEN, encoding="utf-8")
        path.chmod(0o666)
        process = subprocess.run(
            [*prefix, sys.executable, "-m", "devlint", "check", "--no-cache", "--fix", "net.py"],
            cwd=top,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (process.returncode, process.stderr) == (1, "Fixed 3 problems.\n")
        assert path.read_text(encoding="utf-8") == SAFE_FIXED
        assert (path.stat().st_uid, stat.S_IMODE(path.stat().st_mode)) == (0, 0o666)
        assert sorted(p.name for p in top.iterdir()) == ["net.py"]
    finally:
        shutil.rmtree(top)


def test_read_only_file_is_not_fixed(broken: Path) -> None:
    broken.chmod(0o444)
    code, out, err = run("--fix", str(broken))
    assert broken.read_text(encoding="utf-8") == BROKEN
    assert err == f"devlint: {broken}: the file is read-only; not fixed (make it writable to apply the fixes)\nFixed 0 problems.\n"
    assert code == 1 and "Found 5 problems" in out
    assert stat.S_IMODE(broken.stat().st_mode) == 0o444


def test_choosing_fixes_agrees_with_comparing_every_pair() -> None:
    """The fixes of a pass are found without comparing each edit with every one chosen
    before it (quadratic on a file with thousands of fixes), and are the same ones."""
    import random

    def pairwise(findings: list[Finding], length: int) -> list[Fix]:
        chosen: list[Fix] = []
        taken: list[Edit] = []
        candidates = sorted((f.fix for f in findings if f.fix is not None), key=lambda fix: min((e.start, e.end) for e in fix.edits))
        for fix in candidates:
            edits = fix.edits
            if any(e.start < 0 or e.end > length or e.start > e.end for e in edits):
                continue
            if any(devlint.fixer._overlaps(a, b) for i, a in enumerate(edits) for b in edits[i + 1 :]):
                continue
            if any(devlint.fixer._overlaps(e, other) for e in edits for other in taken):
                continue
            chosen.append(fix)
            taken.extend(edits)
        return chosen

    generator = random.Random(20)
    for _ in range(300):
        findings = []
        for _ in range(generator.randint(1, 25)):
            edits = []
            for _ in range(generator.randint(1, 3)):
                start = generator.randint(0, 60)
                edits.append(Edit(start, start + generator.choice([0, 0, 1, 2, 5]), "x"))
            findings.append(Finding("DL401", "m", "p.py", Position(1, 1), Position(1, 1), Fix(tuple(edits), safe=True)))
        assert choose_fixes(findings, False, 62) == pairwise(findings, 62)


def test_fix_applies_only_the_selected_rules_fixes_in_every_pass(tmp_path: Path) -> None:
    # A second pass re-checked the fixed text under the default settings: `--select DL401 --fix`
    # rewrote the DL101 too, and reported it (review set 19).
    path = tmp_path / "m.py"
    source = (
        "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.k = torch.ones(3)\n\n"
        "    def forward(self, x):\n        return x * self.k + torch.zeros(3).cuda()\n"
    )
    path.write_text(source)
    code, out, _ = run("--select", "DL401", "--fix", str(path))
    assert code == 0
    assert path.read_text() == source.replace("self.k = torch.ones(3)", 'self.register_buffer("k", torch.ones(3), persistent=False)')
    assert "DL101" not in out


def test_fix_checks_the_fixed_text_again_with_the_project_s_facts(tmp_path: Path) -> None:
    # pytorch-pose's `flip_back`: its `.numpy()` is silent because its only caller passes a CPU copy.
    # The second pass must not lose that and apply the `.cpu()` it no longer needs.
    (tmp_path / "pyproject.toml").write_text("")
    helper = (
        "import numpy as np\nimport torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def flip_back(x):\n    return torch.from_numpy(np.flip(x.numpy(), 3).copy())\n\n\n"
        "def warm():\n    return torch.zeros(3).cuda()\n"
    )
    (tmp_path / "transforms.py").write_text(helper)
    (tmp_path / "main.py").write_text(
        "from transforms import device, flip_back\n\n\ndef validate(model, x):\n    model.to(device)\n"
        "    out = model(x.to(device))\n    return flip_back(out.cpu())\n"
    )
    code, out, _ = run(str(tmp_path))
    assert [line.split(" ")[1] for line in out.splitlines() if " DL" in line] == ["DL101"]
    code, _, _ = run("--fix", str(tmp_path))
    assert code == 0
    assert (tmp_path / "transforms.py").read_text() == helper.replace("torch.zeros(3).cuda()", "torch.zeros(3).to(device)")
