"""`devlint server`: a language server over stdio (extra `devlint[server]`).

Editors get devlint's findings as diagnostics while the user types, with the
rules' fixes and `# noqa` as code actions. Notebook documents are not
supported yet.
"""

from __future__ import annotations

INSTALL_HINT = "devlint server needs the `server` extra: pip install 'devlint[server]'"


def missing_dependency() -> str | None:
    """Why the server cannot start here, or None."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as error:
        return f"{INSTALL_HINT} ({error})"
    return None


def serve() -> None:
    """Run the server on standard input and output until the client says exit."""
    from devlint.server.language_server import build

    server = build()
    try:
        server.start_io()
    finally:
        server.worker.kill()
