"""Tell which transcript format some bytes are in, from their content first.

The file name only breaks ties (an empty JSON list named ``conversations.json``, a
prefix-less ``.txt``): real files get renamed, content does not lie. Only the start of
the data is examined (the first JSON Lines records, the first lines of text), except
that a document starting with ``[`` or ``{`` is parsed whole, since it is needed anyway.

Each format says how it recognises its files (``transcripts.format.Recognition``); here
the file is given its shape and the formats' scores for that shape are compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._text import decode_text, split_lines
from .base import ImportFormatError
from .files import UNKNOWN_FORMAT
from .format import Recognition
from .registry import FORMATS, supported_formats
from .sample import Sample

_SNIFF_LINES = 50
_SNIFF_CHARS = 64 * 1024


def _unknown(reason: str) -> ImportFormatError:
    return ImportFormatError(
        f"{UNKNOWN_FORMAT}: {reason}. Supported formats: {supported_formats()}. "
        "Name the format explicitly if it is one of these."
    )


def _best(score: Callable[[Recognition], int]) -> str | None:
    """The format scoring highest (the first listed on a tie), or None when none claims it."""
    best, found = 0, None
    for name, declared in FORMATS.items():
        points = score(declared.recognition)
        if points > best:
            best, found = points, name
    return found


def _owner(obj: dict[str, Any]) -> str | None:
    return _best(lambda recognition: recognition.record(obj))


def _json_document(document: Any, name: str) -> str | None:
    """A format's ``document`` score first; else the format that owns the object, or a
    list's first object."""
    sample = Sample(name, _owner, document=document)
    found = _best(lambda recognition: recognition.document(sample))
    if found:
        return found
    if isinstance(document, list) and document:
        document = document[0]
    return sample.owner(document) if isinstance(document, dict) else None


def _jsonl(text: str, name: str) -> str | None:
    records: list[dict[str, Any]] = []
    for line in split_lines(text[:_SNIFF_CHARS])[:_SNIFF_LINES]:
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut by the sniff limit, or a broken line the parser will name
        if isinstance(obj, dict):
            records.append(obj)
    if not records:
        return None
    sample = Sample(name, _owner, records=records)
    return _best(lambda recognition: recognition.lines(sample))


def _text(text: str, name: str) -> str | None:
    sample = Sample(name, _owner, head=text[:_SNIFF_CHARS])
    return _best(lambda recognition: recognition.text(sample))


def _by_name(name: str) -> str | None:
    return _best(lambda recognition: int(bool(recognition.filename(name))))


def detect_format(data: bytes, filename: str = "") -> str:
    """The format name of ``data`` (one of ``FORMATS``), or ImportFormatError."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].lower()
    raw = bytes(data) if isinstance(data, bytearray | memoryview) else data
    if isinstance(raw, bytes) and raw.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        found = _best(lambda recognition: recognition.archive(raw))
        if found is None:
            raise _unknown("no format reads this zip archive")
        return found
    text = decode_text(raw)
    if not text.strip():
        raise ImportFormatError("the file is empty: there is nothing to import")
    stripped = text.lstrip()
    found: str | None = None
    if stripped.startswith(("{", "[")):
        try:
            document = json.loads(stripped)
        except json.JSONDecodeError as exc:
            found = _jsonl(stripped, name) if stripped.startswith("{") else None
            found = found or _by_name(name)
            if found is None:
                # Say where the JSON breaks: that is what the person has to fix.
                line = exc.lineno + text[: len(text) - len(stripped)].count("\n")
                raise ImportFormatError(
                    f"invalid JSON: {exc.msg} (column {exc.colno}); the data starts like JSON "
                    "but is neither a JSON document nor JSON Lines",
                    line=line,
                ) from None
        except RecursionError:
            raise _unknown("the JSON is nested too deeply") from None
        else:
            found = _json_document(document, name)
    else:
        found = _text(text, name)
    if found is None and name:
        found = _by_name(name)
    if found is None:
        raise _unknown("the content matches none of them")
    return found


__all__ = ["detect_format", "supported_formats"]
