"""Text that PostgreSQL can store, JSON we can walk, and bytes that must be UTF-8.

PostgreSQL ``text`` and ``jsonb`` cannot hold NUL (U+0000): an INSERT of a string with
one fails with "invalid byte sequence" / "unsupported Unicode escape sequence". Agent
transcripts do contain them (binary tool output, ``cat`` of a file), so they are removed
before anything is written, and the caller records how many were dropped. Lone surrogates
(from JSON ``\\ud800`` escapes) cannot be encoded as UTF-8 at all: they become U+FFFD.

JSON is bounded in depth (``MAX_JSON_DEPTH``): Python's parser, the code that walks a
document (``clean_json``, redaction, rendering) and the database driver all recurse, and a
body nested a thousand levels deep would exhaust the stack (RecursionError) somewhere on
the way; refusing it where it is read gives the client a 400 instead.

JSON numbers must be finite (``load_json``): ``NaN`` and ``Infinity`` are not JSON (RFC 8259)
and ``1e400`` overflows a double, yet Python's parser reads all three (as ``nan``/``inf``),
and ``jsonb`` refuses them at INSERT ("invalid input syntax for type json"): refused where
the JSON is read, the client learns which number, instead of a 500 after the parse.

Pure functions, no Django: the capture service and the API call them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

NUL = "\x00"
#: The deepest nesting of objects and arrays accepted in a JSON body or file.
MAX_JSON_DEPTH = 100
UTF8_BOM = b"\xef\xbb\xbf"
# A surrogate code point that is not half of a pair (json.loads('"\\ud800"') produces one);
# Python strings can hold it but UTF-8 cannot, so the database driver fails to encode it.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class InvalidUTF8Error(ValueError):
    """Bytes that are not UTF-8; ``line`` is 1-based, ``offset`` the 0-based byte offset."""

    def __init__(self, message: str, *, line: int, offset: int, reason: str):
        super().__init__(message)
        self.line = line
        self.offset = offset
        self.reason = reason


class NonFiniteNumber(ValueError):
    """A JSON number that is not finite (``NaN``, ``Infinity``, ``1e400``): ``literal`` is
    the text of it."""

    def __init__(self, literal: str):
        super().__init__(
            f"the number {literal} is not a finite number (NaN, Infinity and numbers beyond "
            "±1.8e308 are not JSON and cannot be stored); send it as a string or leave it out"
        )
        self.literal = literal


def _finite_float(literal: str) -> float:
    return finite_float(float(literal), literal)


def _no_constant(literal: str):
    raise NonFiniteNumber(literal)


def load_json(text: str | bytes) -> Any:
    """``json.loads`` that refuses non-finite numbers (``NonFiniteNumber``, a
    ``ValueError``): every JSON document the API and the importers store is read by it."""
    return json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)


def finite_float(value: float, literal: str) -> float:
    """``value`` (parsed from ``literal``) when finite; for parsers other than JSON's
    (YAML's ``.inf``/``.nan``)."""
    if not math.isfinite(value):
        raise NonFiniteNumber(literal)
    return value


def clean_text(s: str) -> tuple[str, int]:
    """``s`` without NUL characters, and how many there were."""
    count = s.count(NUL)
    if not count:
        return s, 0
    return s.replace(NUL, ""), count


def clean_json(
    value: Any,
    clean: Callable[[str], tuple[str, int]] = clean_text,
    *,
    member: Callable[[str, Any], tuple[Any, int] | None] | None = None,
) -> tuple[Any, int]:
    """A copy of a JSON-like value with ``clean`` applied to every string, keys included
    (by default ``clean_text``: NUL removed).

    Dicts, lists and tuples are walked (a tuple comes back as a tuple); other values are
    returned as they are. Returns the new value and the total count ``clean`` reported.
    Two keys that become equal once cleaned end up as one key (the later value wins).
    ``member(key, item)``, when given, cleans the value of a string key itself, by its key
    (redaction replaces whatever is under ``"password"``); it returns None to leave the
    value to the walk.
    """
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        total = 0
        cleaned: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = key
            by_key = None
            if isinstance(key, str):
                new_key, removed = clean(key)
                total += removed
                by_key = member(key, item) if member else None
            item, removed = by_key or clean_json(item, clean, member=member)
            total += removed
            cleaned[new_key] = item
        return cleaned, total
    if isinstance(value, list | tuple):
        total = 0
        items = []
        for item in value:
            item, removed = clean_json(item, clean, member=member)
            total += removed
            items.append(item)
        return (tuple(items) if isinstance(value, tuple) else items), total
    return value, 0


def clean_surrogates(s: str) -> tuple[str, int]:
    """``s`` with each lone surrogate replaced by U+FFFD, and how many there were.

    Not part of ``clean_text`` (which is NUL only): a lone surrogate cannot be encoded as
    UTF-8 either, so text decoded from JSON ``\\ud800`` escapes needs this before it is saved.
    """
    if s.isascii():
        return s, 0
    return _LONE_SURROGATE.subn("\ufffd", s)


def could_be_too_deep(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """False when ``text`` has too few brackets to nest deeper than ``limit``: a count at C
    speed that spares most documents the walk of ``json_too_deep``."""
    if isinstance(text, str):
        return text.count("[") + text.count("{") > limit
    return text.count(b"[") + text.count(b"{") > limit


def json_too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether objects and arrays in ``value`` nest more than ``limit`` levels deep.

    Level by level, without recursion (the point is to refuse what recursion cannot walk).
    """
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        children = []
        for container in level:
            children.extend(container.values() if isinstance(container, dict) else container)
        level = [child for child in children if isinstance(child, dict | list)]
        if not level:
            return False
    return bool(level)


def decode_utf8(data: bytes | bytearray | memoryview, *, what: str = "request body") -> str:
    """Decode ``data`` as strict UTF-8, dropping a leading UTF-8 byte-order mark.

    On invalid UTF-8 raises ``InvalidUTF8Error`` (a ``ValueError``) saying where:
    "invalid UTF-8 at line 12, byte 4031 of the request body". The line is 1-based and
    the byte the 0-based offset from the start of ``data`` (BOM included), which is what
    ``dd``, ``xxd`` and ``data[4031]`` agree on.
    """
    raw = bytes(data)
    skip = len(UTF8_BOM) if raw.startswith(UTF8_BOM) else 0
    try:
        return raw[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        line = raw.count(b"\n", 0, offset) + 1
        raise InvalidUTF8Error(
            f"invalid UTF-8 at line {line}, byte {offset} of the {what}",
            line=line,
            offset=offset,
            reason=exc.reason,
        ) from None


__all__ = [
    "MAX_JSON_DEPTH",
    "InvalidUTF8Error",
    "NonFiniteNumber",
    "clean_json",
    "clean_surrogates",
    "clean_text",
    "could_be_too_deep",
    "decode_utf8",
    "finite_float",
    "json_too_deep",
    "load_json",
]
