"""The one atomic file replacement that `--fix` and the cache share."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import devlint.atomic
from devlint.atomic import ReadOnlyFile, rewrite, write_atomic


def test_replaces_the_bytes_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "net.py"
    path.write_bytes(b"old\n")
    path.chmod(0o640)
    write_atomic(path, b"new\r\n")
    assert path.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["net.py"]


def test_without_keep_mode_creates_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    write_atomic(path, b"{}", keep_mode=False, durable=False, suffix=".tmp")
    assert path.read_bytes() == b"{}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_durable_write_syncs_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "net.py"
    path.write_bytes(b"old\n")
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda src, dst: (calls.append("replace"), real_replace(src, dst))[1])
    write_atomic(path, b"new\n")
    assert calls == ["fsync", "replace"]
    calls.clear()
    write_atomic(path, b"newer\n", durable=False)
    assert calls == ["replace"]
    assert path.read_bytes() == b"newer\n"


@pytest.mark.parametrize("failing", ["replace", "chmod"])
def test_a_failure_leaves_the_target_whole_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "net.py"
    path.write_bytes(b"old\n")

    def refuse(*args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, failing, refuse)
    with pytest.raises(PermissionError):
        write_atomic(path, b"new\n")
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["net.py"]


def test_an_interrupt_during_the_write_is_not_swallowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "net.py"
    path.write_bytes(b"old\n")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"new\n")
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["net.py"]


# -- rewrite: a user's file, as an editor saving it would -------------------------------------------
def test_rewrite_writes_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_bytes(b"old\n")
    (tmp_path / "link.py").symlink_to("real.py")
    rewrite(tmp_path / "link.py", b"new\n")
    assert os.readlink(tmp_path / "link.py") == "real.py"
    assert (tmp_path / "real.py").read_bytes() == b"new\n"


def test_rewrite_keeps_hard_links_and_leaves_no_backup(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"old old old\n")
    os.link(tmp_path / "a.py", tmp_path / "b.py")
    rewrite(tmp_path / "a.py", b"new\n")
    assert (tmp_path / "b.py").read_bytes() == b"new\n"
    assert os.path.samefile(tmp_path / "a.py", tmp_path / "b.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


def test_rewrite_in_place_when_the_owner_cannot_be_given_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a user who may write someone else's file meets: a new file would be theirs."""
    path = tmp_path / "net.py"
    path.write_bytes(b"old\n")
    inode = path.stat().st_ino
    monkeypatch.setattr(devlint.atomic, "_own_ids", lambda: (-2, -2))  # the file is someone else's

    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chown", refuse)
    rewrite(path, b"new\n")
    assert (path.read_bytes(), path.stat().st_ino) == (b"new\n", inode)
    assert [p.name for p in tmp_path.iterdir()] == ["net.py"]


@pytest.mark.parametrize("mode", [0o444, 0o400])
def test_rewrite_refuses_a_read_only_file(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "net.py"
    path.write_bytes(b"old\n")
    path.chmod(mode)
    with pytest.raises(ReadOnlyFile):
        rewrite(path, b"new\n")
    assert path.read_bytes() == b"old\n"
