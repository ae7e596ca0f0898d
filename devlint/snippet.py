"""Code quoted in a message: on one line, short, and otherwise exactly as written."""

from __future__ import annotations

_OPENERS = ("(", "[", "{")
_CLOSERS = (")", "]", "}")


def one_line(code: str) -> str:
    """Continuation lines joined with one space (none inside brackets); the spacing within a line,
    string contents included, kept as written."""
    lines = [line.strip() for line in code.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    out = lines[0]
    for line in lines[1:]:
        if out.endswith("\\"):
            out = out[:-1].rstrip()
        if line.startswith(_CLOSERS) and out.endswith(","):
            out = out[:-1]  # a trailing comma only serves the line break
        glue = "" if out.endswith(_OPENERS) or line.startswith(_CLOSERS) else " "
        out += glue + line
    return out


def snippet(code: str, limit: int = 60) -> str:
    """`one_line(code)`, cut to `limit` characters with "..." when longer."""
    flat = one_line(code)
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
