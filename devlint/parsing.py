"""libcst's parser, without re-validating the nodes it builds.

Every libcst node checks its own fields in `__post_init__` (that a Name is an
identifier, that whitespace is whitespace...). That guards trees people build
by hand; the parser only builds valid ones, and the checks took a fifth of the
parse time (libcst's own comment on `CSTNode.__post_init__` says as much).
While devlint's parser runs, that one method is a no-op; nodes built anywhere
else, fixes included, are checked as usual. A test pins that trees come out
identical with and without the checks.
"""

from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode

_VALIDATING_POST_INIT = CSTNode.__post_init__
_lock = threading.Lock()


def _skip_validation(self: CSTNode) -> None:
    return None


def parse_module(text: str) -> cst.Module:
    with _lock:  # one parse at a time, so the checks always come back
        CSTNode.__post_init__ = _skip_validation  # type: ignore[method-assign]
        try:
            return cst.parse_module(text)
        finally:
            CSTNode.__post_init__ = _VALIDATING_POST_INIT  # type: ignore[method-assign]
