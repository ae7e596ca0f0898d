"""Replacing a file so that a reader sees the old bytes or the new, never a mix.

`--fix` rewrites the user's sources and the cache rewrites its own file, and
both may be interrupted (a full disk, Ctrl-C, a second devlint run at once).
Writing to a temporary file in the same folder and renaming it over the
target is atomic on POSIX and Windows alike, so an interruption leaves the
original whole.

A user's file is more than its bytes: a rename would replace a symlink with a
regular file (and leave the file it points to unfixed), split a hard link
from its twins, and give the file to whoever runs devlint. `rewrite` writes
what an editor saving the file would: through symlinks, keeping links, owner
and mode.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


class ReadOnlyFile(PermissionError):
    """The file has no write permission (for this user, or for anyone): it is not rewritten."""


class OwnerNotKept(PermissionError):
    """The replacement could not be given the owner of the file it was to replace."""


def write_atomic(
    path: Path,
    data: bytes,
    *,
    keep_mode: bool = True,
    durable: bool = True,
    suffix: str = ".devlint-tmp",
    owner: tuple[int, int] | None = None,
) -> None:
    """Put `data` at `path` through a temporary file renamed over it.

    `keep_mode` gives the new file the permission bits of the one it replaces
    (`path` must exist); otherwise it keeps the temporary file's private
    0600. `owner` (uid, gid) is given to the new file; PermissionError when it
    cannot be. `durable` flushes the bytes to disk before the rename, so a
    crash of the machine cannot leave an empty file where the user's source
    was; a cache, which is rebuilt when lost, skips that cost. On any failure
    the target is untouched, the temporary file is removed and the error
    propagates.
    """
    mode = stat.S_IMODE(os.stat(path).st_mode) if keep_mode else None
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        if owner is not None and hasattr(os, "chown") and owner != _own_ids():
            try:
                os.chown(temporary, *owner)
            except PermissionError as error:
                raise OwnerNotKept(error.errno, error.strerror, str(path)) from None
        if mode is not None:
            os.chmod(temporary, mode)  # after chown, which clears the set-id bits
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def rewrite(path: Path, data: bytes) -> None:
    """Replace the contents of the user's file at `path` (symlinks followed) with `data`.

    Mode, owner and group are kept. A file with other hard links, one in a
    folder this user may not write, or one this user may write but could not
    give back to its owner keeps its inode: it is overwritten in place, with a
    copy of the old bytes beside it (where the folder allows) until the new
    ones are on disk. Every other file is replaced atomically. Raises
    ReadOnlyFile for a file without write permission: a read-only file says
    "do not change me", also to root.
    """
    real = Path(os.path.realpath(path))
    st = os.stat(real)
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        raise ReadOnlyFile(errno.EACCES, "the file is read-only", str(path))
    if st.st_nlink > 1 or not os.access(real.parent, os.W_OK):
        _overwrite(real, data)
        return
    try:
        write_atomic(real, data, owner=(st.st_uid, st.st_gid))
    except OwnerNotKept:
        _overwrite(real, data)  # this user may write the file, not give a new one away


def _own_ids() -> tuple[int, int]:
    return (os.geteuid(), os.getegid()) if hasattr(os, "geteuid") else (-1, -1)


def _overwrite(real: Path, data: bytes) -> None:
    """Write `data` over the file's own bytes; on failure put the old ones back."""
    old = real.read_bytes()
    backup = _backup(real, old)
    try:
        _write_in_place(real, data)
    except BaseException:
        try:
            _write_in_place(real, old)
        except OSError:
            if backup is not None:
                raise OSError(errno.EIO, f"the write failed half way; the original is kept in {backup}", str(real)) from None
            raise
        if backup is not None:
            os.unlink(backup)
        raise
    if backup is not None:
        os.unlink(backup)


def _backup(real: Path, old: bytes) -> str | None:
    """A durable copy of the old bytes beside the file (None where the folder is not writable):
    what a crash of the machine in the middle of the write leaves to recover from."""
    try:
        handle, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".devlint-backup", dir=real.parent)
    except OSError:
        return None
    with os.fdopen(handle, "wb") as stream:
        stream.write(old)
        stream.flush()
        os.fsync(stream.fileno())
    return name


def _write_in_place(real: Path, data: bytes) -> None:
    fd = os.open(real, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    try:
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.write(fd, view[written:])
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)
