"""Where values lie in a JSON text: the spans json.loads does not give.

json.loads, which has already accepted the text, says nothing about positions;
this walks the same text, jumping over strings (an output of many megabytes is a
handful of str.find calls) and over every value but the ones asked for.
"""

from __future__ import annotations

import json
import re

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LITERAL = re.compile(r"[-+0-9.eE]+|true|false|null")
_STRUCTURE = re.compile(r'["\[\]{}]')


def source_spans(document: str) -> dict[int, tuple[tuple[int, int], tuple[tuple[int, int], ...]]]:
    """For each cell (0-based), the span of its `"source"` value and of each string in it.

    json.loads, which already accepted the text, says nothing about where values
    lie; this walks the same text, jumping over strings (outputs of many megabytes
    are a handful of str.find calls) and over everything but the cells' sources.
    """
    spans: dict[int, tuple[tuple[int, int], tuple[tuple[int, int], ...]]] = {}
    top = _skip_whitespace(document, 0)
    for key, start, _ in _members(document, top):
        if key != "cells":
            continue
        spans.clear()  # duplicate keys: the last one counts, as in json.loads
        for index, (cell_start, _) in enumerate(_items(document, start)):
            if document[cell_start] != "{":
                continue
            for cell_key, value_start, value_end in _members(document, cell_start):
                if cell_key != "source":
                    continue
                if document[value_start] == "[":
                    pieces = tuple(_items(document, value_start))
                else:
                    pieces = ((value_start, value_end),)
                spans[index] = ((value_start, value_end), pieces)
    return spans


def _skip_whitespace(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    return match.end() if match else position


def _string_end(text: str, start: int) -> int:
    """The end of the JSON string whose opening quote is at `start`."""
    position = start + 1
    while True:
        quote = text.index('"', position)
        backslashes = 0
        while text[quote - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return quote + 1
        position = quote + 1


def _value_end(text: str, start: int) -> int:
    char = text[start]
    if char == '"':
        return _string_end(text, start)
    if char not in "[{":
        match = _LITERAL.match(text, start)
        return match.end() if match else start + 1
    depth = 0
    position = start
    while True:
        match = _STRUCTURE.search(text, position)
        if match is None:
            return len(text)
        found = match.group(0)
        if found == '"':
            position = _string_end(text, match.start())
            continue
        depth += 1 if found in "[{" else -1
        position = match.end()
        if depth == 0:
            return position


def _members(text: str, start: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the object at `start`."""
    members: list[tuple[str, int, int]] = []
    if text[start] != "{":
        return members
    position = _skip_whitespace(text, start + 1)
    while text[position] == '"':
        key_end = _string_end(text, position)
        key = json.loads(text[position:key_end])
        value_start = _skip_whitespace(text, _skip_whitespace(text, key_end) + 1)
        value_end = _value_end(text, value_start)
        members.append((key, value_start, value_end))
        position = _skip_whitespace(text, value_end)
        if text[position] != ",":
            break
        position = _skip_whitespace(text, position + 1)
    return members


def _items(text: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of each value of the array at `start`."""
    items: list[tuple[int, int]] = []
    position = _skip_whitespace(text, start + 1)
    if text[position] == "]":
        return items
    while True:
        end = _value_end(text, position)
        items.append((position, end))
        position = _skip_whitespace(text, end)
        if text[position] != ",":
            return items
        position = _skip_whitespace(text, position + 1)


def raw_length(text: str, start: int, end: int, characters: int) -> int:
    """How many characters of the JSON string body `text[start:end]` spell its first `characters` characters."""
    position = start
    count = 0
    while position < end and count < characters:
        if text[position] == "\\":
            if text[position + 1] == "u":
                code = int(text[position + 2 : position + 6], 16)
                is_pair = 0xD800 <= code < 0xDC00 and text.startswith("\\u", position + 6)
                position += 12 if is_pair else 6
            else:
                position += 2
        else:
            position += 1
        count += 1
    return position - start
