"""Where the tensors of a checkpoint file were saved, read from the file without torch.

`torch.save` records each storage's device in the pickle as a persistent id,
`("storage", <storage type>, <key>, <location>, <numel>)`, in `data.pkl` of its
zip archive (PyTorch 1.6 and later) or in the pickles of the legacy format.
`torch.load` without `map_location` restores each storage onto that location,
so a file whose every storage says `"cpu"` loads on any machine, and one that
names `"cuda:0"` fails without CUDA. The pickle is read opcode by opcode
(`pickletools.genops`): nothing in it runs, and torch is never imported.
A file that is no such archive, is too large to be one (a Git LFS pointer is
small and holds none), or cannot be read tells nothing: None.
"""

from __future__ import annotations

import io
import pickletools
import zipfile
from pathlib import Path

# Past this, reading a legacy (non-zip) file through to its last pickle costs too much.
_LEGACY_LIMIT = 64 << 20
_STRINGS = frozenset({"BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINUNICODE8", "SHORT_BINSTRING", "BINSTRING", "STRING"})
_PUTS = frozenset({"BINPUT", "LONG_BINPUT", "PUT"})
_GETS = frozenset({"BINGET", "LONG_BINGET", "GET"})
_SMALL_TUPLES = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}


def saved_locations(path: Path) -> tuple[str, ...] | None:
    """The devices the file's storages were saved on, sorted and without repeats (`("cpu",)`);
    `()` for a checkpoint that holds no tensor; None where the file tells nothing."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                pickles = [name for name in archive.namelist() if name.endswith("/data.pkl") or name == "data.pkl"]
                if len(pickles) != 1:
                    return None
                return _locations([archive.read(pickles[0])])
        if path.stat().st_size > _LEGACY_LIMIT:
            return None
        return _locations(_legacy_pickles(path.read_bytes()))
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, KeyError, RuntimeError):
        return None


def _legacy_pickles(data: bytes) -> list[bytes]:
    """The pickles at the head of a legacy file (magic number, protocol, system info, the object,
    the storage keys); the raw storage bytes that follow are no pickle."""
    stream = io.BytesIO(data)
    found = []
    for _ in range(5):
        start = stream.tell()
        for _op, _arg, _pos in pickletools.genops(stream):
            pass
        found.append(data[start : stream.tell()])
    return found


def _locations(pickles: list[bytes]) -> tuple[str, ...] | None:
    seen: set[str] = set()
    for data in pickles:
        for location in _persistent_locations(data):
            seen.add(location)
    return tuple(sorted(seen))


def _persistent_locations(data: bytes) -> list[str]:
    """The location of each storage persistent id of one pickle, following its memo."""
    frames: list[list[object]] = [[]]
    memo: dict[object, object] = {}
    last: object = None
    found = []
    for op, arg, _pos in pickletools.genops(data):
        name = op.name
        value: object = _UNTRACKED
        if name in _STRINGS:
            value = arg.decode("latin-1") if isinstance(arg, bytes) else arg
        elif name in ("GLOBAL", "STACK_GLOBAL"):
            value = ("global", arg)
        elif name in _GETS:
            value = memo.get(arg)
        elif name in _PUTS:
            memo[arg] = last
            continue
        elif name == "MEMOIZE":
            memo[len(memo)] = last
            continue
        elif name == "MARK":
            frames.append([])
            continue
        elif name == "TUPLE" and len(frames) > 1:
            value = tuple(frames.pop())
        elif name in _SMALL_TUPLES:
            count = _SMALL_TUPLES[name]
            items = frames[-1][-count:] if len(frames[-1]) >= count else []
            del frames[-1][-count:]
            value = tuple(items)
        elif name in ("BINPERSID", "PERSID"):
            pid = arg.split() if name == "PERSID" and isinstance(arg, str) else last
            if isinstance(pid, tuple) and len(pid) >= 4 and pid[0] == "storage" and isinstance(pid[3], str):
                found.append(pid[3])
        elif "INT" in name or name in ("NONE", "NEWTRUE", "NEWFALSE", "BINFLOAT", "FLOAT"):
            value = arg
        if value is not _UNTRACKED or name not in ("STOP", "PROTO", "FRAME"):
            frames[-1].append(value)
            last = value
    return found


class _Untracked:
    """What an opcode the reader does not follow pushes: a placeholder, so counts stay right."""


_UNTRACKED = _Untracked()
