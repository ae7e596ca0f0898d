"""Replacing a file so that a reader sees the old bytes or the new, never a mix.

`--fix` rewrites the user's sources and the cache rewrites its own file, and
both may be interrupted (a full disk, Ctrl-C, a second devlint run at once).
Writing to a temporary file in the same folder and renaming it over the
target is atomic on POSIX and Windows alike, so an interruption leaves the
original whole.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, keep_mode: bool = True, durable: bool = True, suffix: str = ".devlint-tmp") -> None:
    """Put `data` at `path` through a temporary file renamed over it.

    `keep_mode` gives the new file the permission bits of the one it replaces
    (`path` must exist); otherwise it keeps the temporary file's private
    0600. `durable` flushes the bytes to disk before the rename, so a crash of
    the machine cannot leave an empty file where the user's source was; a
    cache, which is rebuilt when lost, skips that cost. On any failure the
    target is untouched, the temporary file is removed and the error
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
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
