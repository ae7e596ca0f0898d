"""Reading a file's bytes into text the way Python itself would decode them."""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass


class UnreadableSource(Exception):
    """Why a file cannot be analysed; the message is shown to the user as DL000."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode(data: bytes) -> SourceText:
    """PEP 263 coding line and BOM honoured; binary and undecodable files refused."""
    if b"\x00" in data:
        raise UnreadableSource("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise UnreadableSource(f"bad encoding declaration: {error}") from None
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8):] if bom else data
    python_name = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        text = body.decode(python_name)
    except UnicodeDecodeError as error:
        line = body[: error.start].count(b"\n") + 1
        raise UnreadableSource(
            f"cannot decode as {python_name} at byte {error.start} (add a PEP 263 coding line if the file is not UTF-8)",
            line=line,
        ) from None
    return SourceText(text=text, encoding=python_name, bom=bom)
