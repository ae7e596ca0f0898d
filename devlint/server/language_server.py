"""`devlint server`: the Language Server Protocol side, on pygls.

The server holds the documents, the settings and the results; checking is
the worker's (devlint.server.worker), scheduled by devlint.server.scheduler.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from devlint import __version__
from devlint.pages import rule_page
from devlint.server import actions
from devlint.server.diagnostics import diagnostic
from devlint.server.notebooks import by_cell, cells_of, notebook_text
from devlint.server.scheduler import Analysed, Scheduler, Snapshot
from devlint.server.text_positions import TextLines
from devlint.server.worker_process import WorkerProcess
from devlint.server.workspace_config import Resolved, WorkspaceConfig

# pyproject.toml, and the files its `extend` may name: any TOML file.
CONFIG_SUFFIX = ".toml"
# A code action asked for while the document is being checked waits this long for the result.
_SETTLE_S = 5.0


class DevlintServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: pygls applies incremental edits by `str.splitlines`, which also
        # breaks lines at form feeds and other separators that Python and LSP do not.
        super().__init__(
            "devlint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                [types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage("python")], notebook="jupyter-notebook")],
                save=True,
            ),
        )
        self.worker = WorkerProcess()
        self.scheduler = Scheduler(self.worker, self.snapshot, self.publish, self.log)
        self.config: WorkspaceConfig | None = None
        self._config_errors: set[str] = set()

    # -- documents ---------------------------------------------------------
    def snapshot(self, uri: str) -> Snapshot | None:
        notebook = self.workspace.notebook_documents.get(uri)
        if notebook is not None:
            texts = {cell.document: self.workspace.text_documents[cell.document].source for cell in notebook.cells if cell.document in self.workspace.text_documents}
            cells = cells_of(notebook, texts)
            path = self._local_path(uri)
            resolved = self._settings_for(path)
            name = str(path) if path else uri
            if not name.lower().endswith(".ipynb"):
                name += ".ipynb"  # read as a notebook whatever the editor calls it (`untitled:Untitled-1`)
            return Snapshot(uri, notebook.version, notebook_text(cells), name, resolved.settings, resolved.excluded, cells)
        document = self.workspace.text_documents.get(uri)
        if document is None or not is_python(uri, document.language_id):
            return None
        path = self._local_path(uri)
        resolved = self._settings_for(path)
        return Snapshot(uri, document.version, document.source, str(path) if path else uri, resolved.settings, resolved.excluded)

    def _local_path(self, uri: str) -> Path | None:
        parsed = urlparse(uri)
        return Path(url2pathname(parsed.path)) if parsed.scheme == "file" else None

    def _settings_for(self, path: Path | None) -> Resolved:
        resolved = self._config().for_document(path)
        if resolved.error is not None and resolved.error not in self._config_errors:
            self._config_errors.add(resolved.error)
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Error, f"devlint: {resolved.error} (checking with the defaults meanwhile)")
            )
        elif resolved.error is None:
            self._config_errors.clear()
        return resolved

    def _config(self) -> WorkspaceConfig:
        if self.config is None:
            root = self.workspace.root_path
            self.config = WorkspaceConfig(Path(root) if root else Path.cwd())
        return self.config

    def lines(self, text: str) -> TextLines:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return TextLines(text, str(getattr(encoding, "value", encoding)))

    def publish(self, result: Analysed) -> None:
        snap = result.snapshot
        if snap.cells:
            texts = {cell.uri: cell.text for cell in snap.cells}
            for cell_uri, findings in by_cell(result.findings, snap.cells).items():
                lines = self.lines(texts[cell_uri])
                diagnostics = [diagnostic(finding, lines, cell_uri) for finding in findings]
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(cell_uri, diagnostics))
            return
        lines = self.lines(snap.text)
        diagnostics = [diagnostic(finding, lines, snap.uri) for finding in result.findings]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(snap.uri, diagnostics, version=snap.version))

    def log(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Info, f"devlint: {message}"))

    def is_tracked(self, uri: str) -> bool:
        document = self.workspace.text_documents.get(uri)
        return document is not None and is_python(uri, document.language_id)

    def check_all_open(self) -> None:
        for uri in list(self.workspace.text_documents):
            if self.is_tracked(uri):
                self.scheduler.request(uri)
        for uri in list(self.workspace.notebook_documents):
            self.scheduler.request(uri)


def is_python(uri: str, language_id: str | None) -> bool:
    parsed = urlparse(uri)
    if parsed.scheme == "vscode-notebook-cell" or parsed.path.lower().endswith(".ipynb"):
        # A notebook, or one of its cells, which an editor sends as a Python document of its
        # own: checked alone it would miss the cells before it (and read IPython magics as
        # syntax errors). A notebook document is checked whole (devlint.server.notebooks).
        return False
    if language_id:
        return language_id == "python"
    return parsed.path.endswith((".py", ".pyi"))


def is_config(uri: str) -> bool:
    return urlparse(uri).path.endswith(CONFIG_SUFFIX)


def build() -> DevlintServer:
    server = DevlintServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DevlintServer, params: types.InitializedParams) -> None:
        ls.scheduler.start()
        watch = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        if watch and watch.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=f"**/*{CONFIG_SUFFIX}")]
            )
            registration = types.Registration("devlint-config", types.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)
            await ls.client_register_capability_async(types.RegistrationParams([registration]))
        await ls.worker.start()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DevlintServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.is_tracked(params.text_document.uri):
            ls.scheduler.request(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DevlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.is_tracked(params.text_document.uri):
            ls.scheduler.request(params.text_document.uri, debounced=True)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DevlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if is_config(uri):
            ls.check_all_open()
        elif ls.is_tracked(uri):
            ls.scheduler.request(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DevlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.scheduler.forget(uri, urlparse(uri).path)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_opened(ls: DevlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.scheduler.request(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_changed(ls: DevlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.scheduler.request(params.notebook_document.uri, debounced=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_saved(ls: DevlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.scheduler.request(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_closed(ls: DevlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        ls.scheduler.forget(uri, urlparse(uri).path)
        for cell in params.cell_text_documents:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(cell.uri, []))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: DevlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_config(change.uri) for change in params.changes):
            ls.check_all_open()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=list(actions.KINDS), resolve_provider=True),
    )
    async def code_action(ls: DevlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        only = params.context.only
        notebook = ls.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            return await _cell_actions(ls, notebook.uri, uri, params.range, only)
        result = await ls.scheduler.settled(uri, _SETTLE_S)
        if result is None:
            return []
        snap = result.snapshot
        lines = ls.lines(snap.text)
        found: list[types.CodeAction] = []
        if actions.wanted(types.CodeActionKind.QuickFix, only):
            found += actions.quick_fixes(result.findings, lines, uri, snap.version, params.range)
        if actions.wanted(actions.FIX_ALL_KIND, only) and any(f.fixable for f in result.findings):
            if only is None and _resolves_edits(ls):
                # Shown in a menu: computed only if the user picks it.
                found.append(types.CodeAction("devlint: fix all safe problems", kind=actions.FIX_ALL_KIND, data={"uri": uri}))
            else:
                fix_all = await _fix_all(ls, uri)
                if fix_all is not None:
                    found.append(fix_all)
        return found

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve(ls: DevlintServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        if action.kind == actions.FIX_ALL_KIND and "uri" in data:
            fix_all = await _fix_all(ls, str(data["uri"]))
            if fix_all is not None:
                action.edit = fix_all.edit
        return action

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: DevlintServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        result = ls.scheduler.results.get(uri)
        if result is None or not result.snapshot.same_text(ls.snapshot(uri)):
            return None
        lines = ls.lines(result.snapshot.text)
        at = (params.position.line, params.position.character)
        for finding in result.findings:
            span = lines.range(finding.start, finding.end)
            if (span.start.line, span.start.character) <= at <= (span.end.line, span.end.character):
                page = rule_page(finding.code)
                if page is not None:
                    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, page), span)
        return None

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: DevlintServer, params: None) -> None:
        await ls.scheduler.close()

    return server


async def _cell_actions(
    ls: DevlintServer, notebook: str, cell: str, within: types.Range, only: list[str] | None
) -> list[types.CodeAction]:
    """A notebook cell's quick fixes, from the check of the whole notebook (no fix-all: the
    notebook's fixes may span cells; `devlint check --fix` applies them)."""
    result = await ls.scheduler.settled(notebook, _SETTLE_S)
    document = ls.workspace.text_documents.get(cell)
    texts = {c.uri: c.text for c in result.snapshot.cells} if result is not None else {}
    if result is None or document is None or texts.get(cell) != document.source or not actions.wanted(types.CodeActionKind.QuickFix, only):
        return []
    findings = by_cell(result.findings, result.snapshot.cells)[cell]
    return actions.quick_fixes(findings, ls.lines(document.source), cell, document.version, within)


def _resolves_edits(ls: DevlintServer) -> bool:
    document = ls.client_capabilities.text_document
    support = document.code_action.resolve_support if document and document.code_action else None
    return support is not None and "edit" in support.properties


async def _fix_all(ls: DevlintServer, uri: str) -> types.CodeAction | None:
    computed = await ls.scheduler.fix_all(uri)
    if computed is None:
        return None
    snap, outcome = computed
    if outcome.fixed_text is None:
        if outcome.error:
            ls.log(outcome.error)
        return None
    return actions.fix_all(ls.lines(snap.text), outcome.fixed_text, uri, snap.version)
