"""Reading a file's bytes, only from regular files.

A named pipe blocks its reader until a writer comes (forever, in a source
tree), `/dev/zero` and its kin never end, and opening some devices has side
effects. devlint reads sources, `.gitignore` files and its cache only when they
are regular files: the type is checked before opening (so a device is never
opened) and again on the opened file (so a swap in between is caught), and the
open never blocks.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


class NotRegularFile(OSError):
    """The path is a named pipe, a device, a socket or a folder; `kind` says which."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))
        self.kind = kind


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_regular(path: Path | str) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` and its stat, taken on the open file.

    Raises NotRegularFile for anything else, and OSError when it cannot be read.
    """
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFile(path, _kind(before.st_mode))
    # O_NONBLOCK: should the path become a pipe after the check, the open returns at once.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, _kind(st.st_mode))
        stream = open(fd, "rb")  # owns the descriptor from here on  # noqa: SIM115
    except BaseException:
        os.close(fd)
        raise
    with stream:
        return stream.read(), st
