"""A real LSP client (pygls's) driving `devlint server` over stdio, for the tests."""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

WAIT_S = 30.0  # generous: CI's two cores are shared; nothing here measures time


class _Client(LanguageClient):
    """pygls's client, noting how the server process ended."""

    def __init__(self) -> None:
        super().__init__("devlint-tests", "1")
        self.exit_code: int | None = None
        self.exited = asyncio.Event()

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.exit_code = server.returncode
        self.exited.set()


class Session:
    def __init__(self, client: _Client, root: Path) -> None:
        self.client = client
        self.root = root
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = defaultdict(list)
        self.logs: list[str] = []
        self.shown: list[types.ShowMessageParams] = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self._arrived = asyncio.Event()

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def note(self) -> None:
        self._arrived.set()

    def open(self, name: str, text: str, language: str = "python") -> str:
        uri = self.uri(name)
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text)))
        return uri

    def change(self, uri: str, text: str) -> int:
        self.texts[uri] = text
        self.versions[uri] += 1
        version = self.versions[uri]
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return version

    async def diagnostics(self, uri: str, version: int | None = None) -> list[types.Diagnostic]:
        """The diagnostics published for `version` (default: the latest sent) of the document."""
        wanted = self.versions[uri] if version is None else version
        while True:
            for params in self.published[uri]:
                if params.version == wanted:
                    return list(params.diagnostics)
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), WAIT_S)

    async def until_logged(self, part: str) -> str:
        while True:
            for message in self.logs:
                if part in message:
                    return message
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), WAIT_S)

    async def actions(self, uri: str, rng: types.Range, only: list[str] | None = None) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(uri), rng, types.CodeActionContext(diagnostics=[], only=only)
        )
        return list(await self.client.text_document_code_action_async(params) or [])

    def apply(self, uri: str, edit: types.WorkspaceEdit) -> int:
        """Apply a code action's edit as an editor does, and send the new text."""
        assert edit.document_changes is not None
        [change] = edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri and change.text_document.version == self.versions[uri]
        text = self.texts[uri]
        offsets = _LineOffsets(text)
        for text_edit in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            start, end = offsets.of(text_edit.range.start), offsets.of(text_edit.range.end)
            text = text[:start] + text_edit.new_text + text[end:]
        return self.change(uri, text)


class _LineOffsets:
    """UTF-16 positions to offsets: the tests' texts are ASCII except where a test says so."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)

    def of(self, position: types.Position) -> int:
        start = self.starts[position.line]
        units = 0
        index = start
        while units < position.character:
            units += 2 if ord(self.text[index]) > 0xFFFF else 1
            index += 1
        return index


def capabilities(resolve: bool = False, watch: bool = False) -> types.ClientCapabilities:
    code_action = types.CodeActionClientCapabilities(
        resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]) if resolve else None
    )
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(code_action=code_action),
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=watch)
        ),
    )


@asynccontextmanager
async def session(root: Path, caps: types.ClientCapabilities | None = None) -> AsyncIterator[Session]:
    client = _Client()
    state = Session(client, root)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        state.published[params.uri].append(params)
        state.note()

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def logged(params: types.LogMessageParams) -> None:
        state.logs.append(params.message)
        state.note()

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def shown(params: types.ShowMessageParams) -> None:
        state.shown.append(params)
        state.note()

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    await client.start_io(sys.executable, "-m", "devlint", "server", cwd=str(root))
    try:
        result = await asyncio.wait_for(
            client.initialize_async(types.InitializeParams(capabilities=caps or capabilities(), root_uri=root.as_uri())), WAIT_S
        )
        assert result.server_info is not None and result.server_info.name == "devlint"
        client.initialized(types.InitializedParams())
        yield state
        assert await asyncio.wait_for(client.shutdown_async(None), WAIT_S) is None
        client.exit(None)
        await asyncio.wait_for(client.exited.wait(), WAIT_S)
        assert client.exit_code == 0
    finally:
        if not client.exited.is_set():
            process = getattr(client, "_server", None)  # pygls keeps the process there; a failed test must not leave it running
            if process is not None and process.returncode is None:
                process.kill()
        await client.stop()
