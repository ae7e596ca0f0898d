"""What the server asks of its analysis worker and what comes back, and how both travel.

The two processes are the same devlint, so messages are pickled dataclasses
(Settings and Finding are already plain frozen dataclasses), each framed by
its length on a pipe.
"""

from __future__ import annotations

import pickle
import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Literal

from devlint.config import Settings
from devlint.finding import Finding

_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class Job:
    """Check one document's text (`check`), compute its text with every safe fix applied
    (`fix_all`), or drop what the worker keeps of a closed document (`forget`)."""

    kind: Literal["check", "fix_all", "forget"]
    document: str  # the document's URI: the worker keeps its last tree under it
    path: str = ""
    text: str = ""
    settings: Settings = field(default_factory=Settings)


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...] = ()
    fixed_text: str | None = None  # fix_all: the document with its safe fixes applied
    error: str | None = None  # fix_all: why the fixes were not applied


def encode(message: Job | Outcome) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


def header_size() -> int:
    return _LENGTH.size


def body_size(header: bytes) -> int:
    return int(_LENGTH.unpack(header)[0])


def decode(body: bytes) -> Job | Outcome:
    message = pickle.loads(body)  # noqa: S301 - our own worker, over a private pipe
    if not isinstance(message, (Job, Outcome)):
        raise TypeError(f"unexpected message {type(message).__name__}")
    return message


def read_message(stream: BinaryIO) -> Job | Outcome | None:
    """The next message on a blocking stream; None at end of input."""
    header = stream.read(header_size())
    if len(header) < header_size():
        return None
    size = body_size(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    return decode(body)
