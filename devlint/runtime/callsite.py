"""The lines of user code behind a module call, found by walking the stack.

Only used once a mismatch is found, so it may be slow.
"""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass
from types import CodeType, FrameType

import torch

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_RUNTIME_DIR = os.path.dirname(__file__) + os.sep


def is_internal(filename: str) -> bool:
    """Frames in torch or in devlint.runtime are not the user's code."""
    return filename.startswith(_TORCH_DIR) or filename.startswith(_RUNTIME_DIR)


@dataclass(frozen=True)
class CallSite:
    """One line of user code: where it is and what it says."""

    filename: str
    lineno: int
    function: str
    line: str

    @classmethod
    def of(cls, frame: FrameType) -> CallSite:
        return cls.at(frame, frame.f_lineno)

    @classmethod
    def at(cls, frame: FrameType, lineno: int) -> CallSite:
        """The line ``lineno`` of the code ``frame`` runs (a traceback's line, not the frame's current one)."""
        code = frame.f_code
        text = linecache.getline(code.co_filename, lineno).strip()
        return cls(code.co_filename, lineno, code.co_name, text)

    @property
    def location(self) -> str:
        """``file.py:12``, relative to the working directory when below it."""
        name = self.filename
        try:
            rel = os.path.relpath(name)
            if not rel.startswith(os.pardir):
                name = rel
        except ValueError:  # another drive on Windows
            pass
        return f"{name}:{self.lineno}"


def first_user_frame(frame: FrameType | None) -> FrameType | None:
    """The frame itself or the nearest caller outside torch and devlint.runtime."""
    while frame is not None and is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def outermost_frame_of(code: CodeType, frame: FrameType | None) -> FrameType | None:
    """The outermost frame on the stack that runs ``code``."""
    found = None
    while frame is not None:
        if frame.f_code is code:
            found = frame
        frame = frame.f_back
    return found


def frames_between(inner: FrameType, outer: FrameType) -> int:
    """How many calls separate ``inner`` from ``outer`` (for warnings' stacklevel)."""
    n = 0
    frame: FrameType | None = inner
    while frame is not None and frame is not outer:
        frame = frame.f_back
        n += 1
    return n if frame is outer else 1


def current_frame() -> FrameType:
    return sys._getframe(1)
