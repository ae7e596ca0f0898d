"""The analysis worker: a separate process that checks documents for the server.

It keeps what makes the next check cheap (libcst and the rules imported, the
last tree of each open document for the incremental parser, the project
index) and nothing the server cannot lose: when an analysis is too slow to
wait for, or the worker dies (a native crash in the parser, memory), the
server kills it and starts another, and no editor session goes down with it.

    python -m devlint.server.worker    (started by `devlint server`, never by hand)
"""

from __future__ import annotations

import gc
import io
import sys
import tokenize
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO

from devlint.engine import check_bytes
from devlint.finding import Finding, Position
from devlint.fixer import FixFailed, fix_text
from devlint.server.incremental import IncrementalParser
from devlint.server.incremental_verdict import IncrementalVerdict
from devlint.server.jobs import Job, Outcome, encode, read_message
from devlint.server.project import NoProjectIndex, ProjectIndex
from devlint.statement_facts import StatementFacts

# Trees kept for the incremental parser; a 1,000-line file's tree is a few MB.
KEPT_TREES = 8


def as_saved(text: str) -> bytes:
    """The bytes the editor would write for `text`: in the encoding its coding line names, if any.

    The engine decodes bytes the way Python does, so a latin-1 file checked
    from its UTF-8 form would be read as mojibake.
    """
    data = text.encode("utf-8", "surrogatepass")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return data  # a bad coding line: the engine reports it as DL000
    if encoding in ("utf-8", "utf-8-sig"):
        return data
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return data  # cannot be saved as declared either: the engine's decoding says why


class Worker:
    def __init__(self, index: ProjectIndex | None = None) -> None:
        self._parsers: OrderedDict[str, tuple[IncrementalParser, StatementFacts, IncrementalVerdict]] = OrderedDict()
        self.index: ProjectIndex = index or NoProjectIndex()

    def handle(self, job: Job) -> Outcome:
        if job.kind == "forget":
            self._parsers.pop(job.document, None)
            self.index.document_closed(job.path)
            return Outcome()
        self.index.document_changed(job.path, job.text)
        parser, facts, compiler = self._parser(job.document)
        result = check_bytes(
            as_saved(job.text),
            Path(job.path),
            job.path,
            job.settings,
            keep_source=True,
            parse=parser.parse,
            statement_facts=facts,
            verdict_of=compiler.verdict,
        )
        if parser.module is not None:
            facts.keep_only(parser.module.body)
        if job.kind == "check":
            return Outcome(tuple(result.findings))
        if result.source is None:
            return Outcome(tuple(result.findings), error="the file cannot be read as Python source")
        try:
            fixed = fix_text(result, job.settings, unsafe=False)
        except FixFailed as error:
            return Outcome(tuple(result.findings), error=str(error))
        return Outcome(tuple(fixed.findings), fixed_text=fixed.text)

    def _parser(self, document: str) -> tuple[IncrementalParser, StatementFacts, IncrementalVerdict]:
        parser = self._parsers.pop(document, None) or (IncrementalParser(), StatementFacts(), IncrementalVerdict())
        self._parsers[document] = parser
        while len(self._parsers) > KEPT_TREES:
            self._parsers.popitem(last=False)
        return parser


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    worker = Worker()
    while True:
        job = read_message(requests)
        if job is None:
            return  # the server is gone
        assert isinstance(job, Job)
        try:
            outcome = worker.handle(job)
        except Exception as error:  # noqa: BLE001 - the server must get an answer for every job
            message = f"devlint failed on this file ({type(error).__name__}: {error}); please report it"
            outcome = Outcome((Finding("DL999", message, job.path, Position(1, 1), Position(1, 1)),), error=message)
        replies.write(encode(outcome))
        replies.flush()


def main() -> None:
    # Only frames may reach the server on stdout; anything printed by mistake goes to stderr.
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr
    # What the imports built lives as long as the worker: the collector's full
    # passes, which the trees kept between checks make long, need not walk it.
    gc.freeze()
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
