"""The result cache: hits, invalidation, damage, concurrent runs, and output identical to a fresh run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import devlint.cache
import devlint.engine
from devlint.cache import CACHE_DIR, Cache
from devlint.cli import main
from devlint.config import Settings
from devlint.engine import check_files

BAD = """\
import torch

x = torch.zeros(3).cuda()
state = torch.load("model.pt")
"""

SILENCED = """\
import torch

x = torch.zeros(3).cuda()  # noqa: DL101
"""

CLEAN = "print('no tensors here')\n"
BROKEN = "import torch\ndef f(:\n"


def _tree(root: Path, copies: int = 10) -> list[tuple[Path, str]]:
    (root / "pyproject.toml").write_text("[tool.devlint]\n")
    pkg = root / "pkg"
    pkg.mkdir()
    for index in range(copies):
        (pkg / f"bad{index}.py").write_text(BAD)
    (pkg / "silenced.py").write_text(SILENCED)
    (pkg / "clean.py").write_text(CLEAN)
    (pkg / "broken.py").write_text(BROKEN)
    return [(path, str(path)) for path in sorted(pkg.glob("*.py"))]


def _refuse_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any file that is analysed fails the test: what comes back came from the cache."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached file was analysed again")

    monkeypatch.setattr(devlint.engine, "check_bytes", refuse)
    monkeypatch.setattr(devlint.engine, "check_file", refuse)


def _cache_files(root: Path) -> list[Path]:
    return sorted((root / CACHE_DIR).glob("*/*.json"))


def _run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", str(root / "pkg"), "--no-color", *args])
    return result.exit_code, result.output


def test_hit_returns_identical_findings_without_analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path)
    settings = Settings(root=tmp_path)
    fresh = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert len(_cache_files(tmp_path)) == 1
    codes = {Path(r.path).name: [f.code for f in r.findings] for r in fresh}
    assert codes["bad0.py"] == ["DL101", "DL501"]
    assert codes["silenced.py"] == [] and codes["clean.py"] == [] and codes["broken.py"] == ["DL000"]

    _refuse_analysis(monkeypatch)
    cached = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert [r.path for r in cached] == [r.path for r in fresh]
    assert [r.findings for r in cached] == [r.findings for r in fresh]
    # Fixes survive the round trip: the summary counts fixable findings.
    assert [[f.fix for f in r.findings] for r in cached] == [[f.fix for f in r.findings] for r in fresh]
    assert any(f.fix is not None for r in cached for f in r.findings)


def test_hit_reports_the_path_as_given_this_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    _refuse_analysis(monkeypatch)
    target = tmp_path / "pkg" / "bad0.py"
    monkeypatch.chdir(tmp_path)
    [result] = check_files([(Path("pkg/bad0.py"), "pkg/bad0.py")], settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert target.exists()
    assert result.path == "pkg/bad0.py"
    assert {f.path for f in result.findings} == {"pkg/bad0.py"}


def test_content_change_invalidates(tmp_path: Path) -> None:
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    (tmp_path / "pkg" / "bad0.py").write_text(BAD.replace('"model.pt"', '"model.pt", map_location="cpu"'))
    results = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert {Path(r.path).name: [f.code for f in r.findings] for r in results}["bad0.py"] == ["DL101"]


def test_same_size_same_mtime_rewrite_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite that keeps size and mtime (an editor's undo, a restored backup) is still seen."""
    monkeypatch.setattr(devlint.cache, "_RACY_NS", 0)  # trust every stat at once
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    target = tmp_path / "pkg" / "bad0.py"
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    before = target.stat()
    target.write_text(BAD.replace("torch.zeros(3)", "torch.ones(33)"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    results = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    [dl101, _] = {Path(r.path).name: r.findings for r in results}["bad0.py"]
    assert "torch.ones(33)" in dl101.message


def test_touch_without_change_is_a_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    first = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    for path, _ in files:
        os.utime(path)
    _refuse_analysis(monkeypatch)
    again = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert [r.findings for r in again] == [r.findings for r in first]


@pytest.mark.parametrize(
    "changed",
    [
        Settings(strict=True),
        Settings(select=("DL101",)),
        Settings(ignore=("DL501",)),
        Settings(extend_select=("DL4",)),
        Settings(per_file_ignores=(("pkg/bad0.py", ("DL101",)),)),
        Settings(device_variables=("dev",)),
        Settings(loaders=("my_loader",)),
        Settings(move_helpers=("to_device",)),
    ],
    ids=["strict", "select", "ignore", "extend-select", "per-file-ignores", "device-variables", "loaders", "move-helpers"],
)
def test_settings_change_invalidates(tmp_path: Path, changed: Settings) -> None:
    files = _tree(tmp_path, copies=1)
    base = Settings(root=tmp_path)
    check_files(files, base, jobs=1, cache=Cache.for_root(tmp_path, base))
    other = Settings(**{**changed.__dict__, "root": tmp_path})
    assert Cache.for_root(tmp_path, other).lookup(*files[0]) is None
    assert Cache.for_root(tmp_path, base).lookup(*files[0]) is not None


def test_selection_change_changes_cached_output(tmp_path: Path) -> None:
    _tree(tmp_path, copies=1)
    _, everything = _run(tmp_path)
    _, selected = _run(tmp_path, "--select", "DL501")
    assert "DL101" in everything and "DL101" not in selected
    assert _run(tmp_path)[1] == everything


def test_version_change_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert Cache.for_root(tmp_path, settings).lookup(*files[0]) is not None
    monkeypatch.setattr(devlint.cache, "__version__", "99.0.0")
    assert Cache.for_root(tmp_path, settings).lookup(*files[0]) is None


def test_code_change_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edited rule in a development checkout keeps the version but must not serve old findings."""
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    stamp = devlint.cache._code_stamp()
    monkeypatch.setattr(devlint.cache, "_code_stamp", lambda: stamp + "\nrules/dl101_cuda_call.py:1:2")
    assert Cache.for_root(tmp_path, settings).lookup(*files[0]) is None


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x00\xff garbage",
        b'{"format": 1, "key": "',
        b"[]",
        b'{"format": 1, "key": "KEY", "files": {"/x.py": [[1, 2], "d", []]}}',
        b'{"format": 1, "key": "KEY", "files": {"/x.py": "nonsense"}}',
        b'{"format": 1, "key": "KEY", "files": []}',
        b'{"format": 1, "key": "someone else", "files": {}}',
        b'{"format": 999, "key": "KEY", "files": {}}',
    ],
    ids=["empty", "binary", "truncated", "list", "short-stat", "bad-entry", "files-list", "foreign-key", "future-format"],
)
def test_damaged_cache_is_ignored_and_rebuilt(tmp_path: Path, damage: bytes) -> None:
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    expected = check_files(files, settings, jobs=1)
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    [cache_file] = _cache_files(tmp_path)
    cache_file.write_bytes(damage.replace(b"KEY", cache_file.stem.encode()))
    again = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert [r.findings for r in again] == [r.findings for r in expected]
    rebuilt = json.loads(cache_file.read_bytes())
    assert rebuilt["key"] == cache_file.stem and len(rebuilt["files"]) == len(files)


def test_damaged_findings_in_an_entry_are_a_miss(tmp_path: Path) -> None:
    files = _tree(tmp_path, copies=1)
    settings = Settings(root=tmp_path)
    expected = check_files(files, settings, jobs=1)
    check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    [cache_file] = _cache_files(tmp_path)
    data = json.loads(cache_file.read_bytes())
    for entry in data["files"].values():
        entry[2] = [["DL101", "msg", "one", 1, 1, 1, None]] if entry[2] else entry[2]
    cache_file.write_text(json.dumps(data))
    again = check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert [r.findings for r in again] == [r.findings for r in expected]


def test_cache_folder_has_a_gitignore(tmp_path: Path) -> None:
    _tree(tmp_path, copies=1)
    _run(tmp_path)
    assert (tmp_path / CACHE_DIR / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (tmp_path / CACHE_DIR / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    code, _ = _run(tmp_path, "--no-cache")
    assert code == 1
    assert not (tmp_path / CACHE_DIR).exists()


def test_fix_neither_reads_nor_writes_the_cache(tmp_path: Path) -> None:
    _tree(tmp_path, copies=1)
    _run(tmp_path, "--diff")
    assert not (tmp_path / CACHE_DIR).exists()


def test_unwritable_cache_folder_is_not_an_error(tmp_path: Path) -> None:
    _tree(tmp_path, copies=1)
    (tmp_path / CACHE_DIR).write_text("a file where the folder should be")
    code, output = _run(tmp_path)
    assert code == 1 and "Traceback" not in output and "DL101" in output


def test_output_identical_with_and_without_cache_and_across_jobs(tmp_path: Path) -> None:
    _tree(tmp_path, copies=12)
    outputs = {}
    for name, args in [
        ("fresh-1", ("--no-cache", "--jobs", "1")),
        ("fresh-2", ("--no-cache", "--jobs", "2")),
        ("cold-2", ("--jobs", "2")),
        ("warm-2", ("--jobs", "2")),
        ("warm-1", ("--jobs", "1")),
    ]:
        for fmt in ("text", "json"):
            outputs[name, fmt] = _run(tmp_path, "--format", fmt, *args)
    assert len(_cache_files(tmp_path)) == 1
    for fmt in ("text", "json"):
        first = outputs["fresh-1", fmt]
        assert first[0] == 1 and "DL101" in first[1]
        for name in ("fresh-2", "cold-2", "warm-2", "warm-1"):
            assert outputs[name, fmt] == first, (name, fmt)


_WRITER = """
import sys
from pathlib import Path
from devlint.cache import Cache
from devlint.config import Settings
from devlint.engine import check_files

root, which = Path(sys.argv[1]), int(sys.argv[2])
files = sorted((root / "pkg").glob("*.py"))
settings = Settings(root=root)
for round in range(15):
    # Each writer checks its own half and rewrites the whole cache each round.
    mine = [(p, str(p)) for i, p in enumerate(files) if (i + round) % 2 == which]
    (root / "pkg" / f"w{which}.py").write_text(f"import torch\\nx{round} = torch.zeros(1).cuda()\\n")
    check_files(mine, settings, jobs=1, cache=Cache.for_root(root, settings))
"""


def test_concurrent_writers_leave_a_loadable_cache(tmp_path: Path) -> None:
    files = _tree(tmp_path, copies=6)
    settings = Settings(root=tmp_path)
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(which)], stderr=subprocess.PIPE)
        for which in (0, 1)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    [cache_file] = _cache_files(tmp_path)
    data = json.loads(cache_file.read_bytes())
    assert data["key"] == cache_file.stem
    assert not list(cache_file.parent.glob("*.tmp"))
    everything = [(p, str(p)) for p in sorted((tmp_path / "pkg").glob("*.py"))]
    cached = check_files(everything, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert [r.findings for r in cached] == [r.findings for r in check_files(everything, settings, jobs=1)]
    assert len(files) < len(everything)


def test_each_file_is_cached_under_its_own_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A monorepo: two sub-projects, two configurations, one run; each file keyed by its own settings."""
    monkeypatch.chdir(tmp_path)
    for name, select in (("svc", "DL101"), ("lib", "DL501")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(f'[tool.devlint]\nselect = ["{select}"]\n')
        (tmp_path / name / "m.py").write_text(BAD)

    def run(*paths: str) -> str:
        result = CliRunner().invoke(main, ["check", "--output-format", "json", *paths])
        return result.stdout

    expected = [("lib/m.py", "DL501"), ("svc/m.py", "DL101")]
    first = run("svc", "lib")
    assert [(r["path"], r["code"]) for r in json.loads(first)] == expected
    assert sorted(p.parent.parent.parent.name for p in tmp_path.glob(f"*/{CACHE_DIR}/*/*.json")) == ["lib", "svc"]
    _refuse_analysis(monkeypatch)
    assert run("lib", "svc") == first  # warm, in the other order: the same findings, nothing analysed
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    # Changing one sub-project's settings changes its file's key, not the other's.
    (tmp_path / "lib" / "pyproject.toml").write_text('[tool.devlint]\nselect = ["DL101"]\n')
    assert [(r["path"], r["code"]) for r in json.loads(run("svc", "lib"))] == [("lib/m.py", "DL101"), ("svc/m.py", "DL101")]
