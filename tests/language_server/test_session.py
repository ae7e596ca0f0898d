"""`devlint server` driven over stdio by a real LSP client: diagnostics, code actions, shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from devlint.pages import page_url

from .session import capabilities, session

ROOT = Path(__file__).resolve().parent.parent.parent
CUDA_MODEL = """import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(2, 2).cuda()
"""


def run(scenario) -> None:  # noqa: ANN001 - a coroutine function taking the tmp path
    asyncio.run(scenario())


def _summary(diagnostics: list[types.Diagnostic]) -> list[tuple[str, int, int, int, int]]:
    return [(str(d.code), d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) for d in diagnostics]


def test_dl101_after_open_gone_after_applying_its_fix_and_a_clean_exit(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            [diag] = await lsp.diagnostics(uri)
            assert _summary([diag]) == [("DL101", 3, 8, 3, 36)]
            assert diag.severity == types.DiagnosticSeverity.Warning
            assert diag.source == "devlint"
            assert diag.code_description == types.CodeDescription(href=page_url("DL101"))
            assert diag.message.startswith("`torch.nn.Linear(2, 2).cuda()` hardcodes a CUDA GPU")

            actions = await lsp.actions(uri, diag.range)
            assert [(a.title, a.kind, a.is_preferred) for a in actions] == [
                ("Use `.to(device)` (DL101)", "quickfix", True),
                ("Silence DL101 on this line (# noqa: DL101)", "quickfix", None),
                ("devlint: fix all safe problems", "source.fixAll.devlint", None),
            ]
            assert actions[0].diagnostics is not None and _summary(list(actions[0].diagnostics)) == [("DL101", 3, 8, 3, 36)]
            assert actions[0].edit is not None
            version = lsp.apply(uri, actions[0].edit)
            assert lsp.texts[uri].endswith("model = torch.nn.Linear(2, 2).to(device)\n")
            assert await lsp.diagnostics(uri, version) == []

    run(scenario)


def test_noqa_action_silences_the_finding(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            [diag] = await lsp.diagnostics(uri)
            noqa = [a for a in await lsp.actions(uri, diag.range) if "noqa" in a.title]
            assert noqa[0].edit is not None
            version = lsp.apply(uri, noqa[0].edit)
            assert lsp.texts[uri].splitlines()[3] == "model = torch.nn.Linear(2, 2).cuda()  # noqa: DL101"
            assert await lsp.diagnostics(uri, version) == []

    run(scenario)


def test_unsafe_fix_is_offered_marked_and_not_preferred(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("load.py", CUDA_MODEL + "state = torch.load('model.pt')\n")
            [_, diag] = await lsp.diagnostics(uri)
            assert diag.code == "DL501"
            [fix, noqa] = await lsp.actions(uri, diag.range, only=["quickfix"])
            assert fix.title == 'Load onto `device` (DL501) — unsafe fix: may change behaviour, review it'
            assert fix.is_preferred is False
            assert noqa.title == "Silence DL501 on this line (# noqa: DL501)"

    run(scenario)


def test_related_information_points_at_the_line_the_message_names(tmp_path: Path) -> None:
    text = (ROOT / "fixtures" / "mnist_train_buggy.py").read_text(encoding="utf-8")

    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("mnist.py", text)
            diagnostics = await lsp.diagnostics(uri)
            data = next(d for d in diagnostics if d.code == "DL201" and d.range.start.line == 30)
            assert "(moved by `.cuda()`, line 62)" in data.message
            assert data.related_information is not None
            assert [(r.message, r.location.uri, r.location.range.start.line, r.location.range.start.character) for r in data.related_information] == [
                ("`data` comes from `loader`", uri, 28, 37),
                ("moved by `.cuda()`", uri, 61, 12),
            ]
            assert [str(d.code) for d in diagnostics] == ["DL201", "DL201", "DL202", "DL302", "DL102", "DL102", "DL101"]

    run(scenario)


def test_unparsable_text_is_dl000_and_the_server_goes_on(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("broken.py", "import torch\n\ndef f(:\n    pass\n")
            [diag] = await lsp.diagnostics(uri)
            assert (diag.code, diag.severity, diag.range.start.line) == ("DL000", types.DiagnosticSeverity.Error, 2)
            assert diag.message == "syntax error: invalid syntax"
            lsp.change(uri, CUDA_MODEL)
            assert [d.code for d in await lsp.diagnostics(uri)] == ["DL101"]

    run(scenario)


def test_fix_all_applies_every_safe_fix_as_the_cli_does(tmp_path: Path) -> None:
    text = (ROOT / "fixtures" / "mnist_train_buggy.py").read_text(encoding="utf-8")
    fixed = _cli_fixed(text)

    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("mnist.py", text)
            await lsp.diagnostics(uri)
            everything = types.Range(types.Position(0, 0), types.Position(len(text.splitlines()), 0))
            [fix_all] = await lsp.actions(uri, everything, only=["source.fixAll"])
            assert (fix_all.title, fix_all.kind) == ("devlint: fix all safe problems", "source.fixAll.devlint")
            assert fix_all.edit is not None
            version = lsp.apply(uri, fix_all.edit)
            assert lsp.texts[uri] == fixed
            codes = [d.code for d in await lsp.diagnostics(uri, version)]
            assert codes == ["DL201", "DL201", "DL102", "DL102"]
            assert await lsp.actions(uri, everything, only=["source.fixAll"]) == []

    run(scenario)


def test_fix_all_in_a_menu_is_resolved_only_when_picked(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path, capabilities(resolve=True)) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            [diag] = await lsp.diagnostics(uri)
            offered = [a for a in await lsp.actions(uri, diag.range) if a.kind == "source.fixAll.devlint"]
            assert [a.edit for a in offered] == [None]
            resolved = await lsp.client.code_action_resolve_async(offered[0])
            assert resolved.edit is not None
            lsp.apply(uri, resolved.edit)
            assert lsp.texts[uri] == CUDA_MODEL.replace(".cuda()", ".to(device)")

    run(scenario)


def test_hover_on_a_finding_shows_its_rule_page(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            await lsp.diagnostics(uri)
            params = types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(3, 20))
            hover = await lsp.client.text_document_hover_async(params)
            assert hover is not None and isinstance(hover.contents, types.MarkupContent)
            assert hover.contents.value == (ROOT / "rules" / "DL101.md").read_text(encoding="utf-8")
            outside = types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 3))
            assert await lsp.client.text_document_hover_async(outside) is None

    run(scenario)


def test_configuration_is_read_from_pyproject_and_again_when_it_changes(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.devlint]\nignore = ["DL101"]\n', encoding="utf-8")

    async def scenario() -> None:
        async with session(tmp_path, capabilities(watch=True)) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            assert await lsp.diagnostics(uri) == []
            pyproject.write_text('[tool.devlint]\nselct = ["DL101"]\n', encoding="utf-8")
            lsp.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams([types.FileEvent(pyproject.as_uri(), types.FileChangeType.Changed)])
            )
            while len(lsp.published[uri]) < 2:
                await lsp.diagnostics(uri)  # the same version, published again
                await asyncio.sleep(0.05)
            assert [d.code for d in lsp.published[uri][-1].diagnostics] == ["DL101"]
            [shown] = lsp.shown
            assert shown.type == types.MessageType.Error
            assert f"{pyproject}: unknown key 'selct' in [tool.devlint]" in shown.message
            assert shown.message.endswith("(checking with the defaults meanwhile)")

    run(scenario)


def test_saving_checks_again_with_the_configuration_as_it_is_now(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            assert [d.code for d in await lsp.diagnostics(uri)] == ["DL101"]
            # No file-change event: the editor only saves the document.
            (tmp_path / "pyproject.toml").write_text('[tool.devlint]\nignore = ["DL1"]\n', encoding="utf-8")
            lsp.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
            while len(lsp.published[uri]) < 2:
                await lsp.diagnostics(uri)
                await asyncio.sleep(0.05)
            assert [p.version for p in lsp.published[uri]] == [1, 1]
            assert list(lsp.published[uri][-1].diagnostics) == []

    run(scenario)


def test_a_file_the_configuration_force_excludes_is_reported_clean(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.devlint]\nexclude = ["generated_*.py"]\nforce-exclude = true\n', encoding="utf-8")

    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            excluded = lsp.open("generated_model.py", CUDA_MODEL)
            checked = lsp.open("train.py", CUDA_MODEL)
            assert [d.code for d in await lsp.diagnostics(checked)] == ["DL101"]
            assert await lsp.diagnostics(excluded) == []

    run(scenario)


def test_columns_are_in_the_position_encoding_the_client_chose(tmp_path: Path) -> None:
    text = 'import torch\n\nlabel = "\U0001f525"; model = torch.nn.Linear(2, 2).cuda()\n'

    async def scenario(encodings: list[str] | None) -> tuple[int, int]:
        caps = capabilities()
        if encodings is not None:
            caps.general = types.GeneralClientCapabilities(position_encodings=encodings)
        async with session(tmp_path, caps) as lsp:
            uri = lsp.open("train.py", text)
            [diag] = await lsp.diagnostics(uri)
            return diag.range.start.character, diag.range.end.character

    # The call spans characters 21-49; the emoji before it is 2 UTF-16 units and 4 UTF-8 bytes.
    assert asyncio.run(scenario(None)) == (22, 50)
    assert asyncio.run(scenario(["utf-8"])) == (24, 52)
    assert asyncio.run(scenario(["utf-32"])) == (21, 49)


def test_a_slow_check_is_cancelled_when_a_newer_version_arrives(tmp_path: Path) -> None:
    # Many thousand lines take seconds to check on any machine; the check of the
    # newer (small) version must not wait for it.
    block = "".join(f"def step{i}(model, batch):\n    out = model(batch.cuda())\n    return out.sum()\n\n\n" for i in range(3000))
    slow = "import torch\n\n\n" + block

    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("big.py", slow)
            await asyncio.sleep(0.6)
            version = lsp.change(uri, CUDA_MODEL)
            message = await lsp.until_logged("cancelled the check")
            assert message.startswith(f"devlint: cancelled the check of {uri} (version 1) after ")
            assert message.endswith(" s: a newer version arrived")
            assert [d.code for d in await lsp.diagnostics(uri, version)] == ["DL101"]
            assert [p.version for p in lsp.published[uri]] == [version]

    run(scenario)


def test_only_the_newest_of_quick_changes_is_published_last(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            uri = lsp.open("train.py", CUDA_MODEL)
            await lsp.diagnostics(uri)
            for n in range(5):
                lsp.change(uri, CUDA_MODEL + f"x{n} = torch.zeros(3).cuda()\n")
            final = await lsp.diagnostics(uri)
            assert _summary(final) == [("DL101", 3, 8, 3, 36), ("DL101", 4, 5, 4, 26)]
            versions = [p.version for p in lsp.published[uri]]
            assert versions == sorted(versions) and versions[-1] == 6
            for params in lsp.published[uri][1:]:
                # whatever was published matched its own version's text
                assert params.diagnostics[-1].range.start.line == 4

    run(scenario)


def test_closing_a_document_clears_its_diagnostics_and_other_languages_are_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(tmp_path) as lsp:
            notes = lsp.open("notes.md", "model.cuda()\n", language="markdown")
            uri = lsp.open("train.py", CUDA_MODEL)
            assert len(await lsp.diagnostics(uri)) == 1
            lsp.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
            while lsp.published[uri][-1].diagnostics:
                await asyncio.sleep(0.05)
            assert lsp.published[uri][-1].version is None
            assert notes not in lsp.published

    run(scenario)


def _cli_fixed(text: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--stdin-filename", "mnist.py", "--fix", "--quiet"],
        input=text.encode(),
        capture_output=True,
        check=False,
    )
    return done.stdout.decode()
