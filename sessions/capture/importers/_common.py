"""Helpers shared by the importers: decoding, JSON lines, timestamps and message ids.

Every helper raises ``ImportFormatError`` (never a bare ``ValueError``/``KeyError``) so the
importers can let them propagate and the API can answer with the line and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from sessions.capture.sanitize import (
    MAX_JSON_DEPTH,
    clean_json,
    clean_surrogates,
    could_be_too_deep,
    json_too_deep,
)

from .base import ImportFormatError, ParsedMessage

# Epoch values above this are milliseconds, not seconds: 1e11 s is the year 5138.
_EPOCH_MS_THRESHOLD = 1e11
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d*)?$")
# A JSON escape of a UTF-16 surrogate (half of a pair, or alone).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def decode_text(data: bytes | bytearray | memoryview | str, *, what: str = "the file") -> str:
    """Decode ``data`` as UTF-8 text (a UTF-8 or UTF-16 byte-order mark is honoured).

    Raises with the line and byte offset of the first byte that is not UTF-8, so the
    person can find it; ``str`` input is returned as is.
    """
    if isinstance(data, str):
        return data
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ImportFormatError(f"expected bytes for {what}, got {type(data).__name__}")
    raw = bytes(data)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        # Windows tools (PowerShell's ">" redirection) write UTF-16 with a BOM.
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(
                f"{what} starts with a UTF-16 byte-order mark but is not valid UTF-16 "
                f"(byte offset {exc.start}); save it as UTF-8"
            ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ImportFormatError(
            f"invalid UTF-8 in {what} at byte offset {exc.start} (byte {column} of the line): "
            "the file must be UTF-8 text",
            line=line,
        ) from None


def require_text(text: str, *, what: str = "the file") -> None:
    """Refuse empty or whitespace-only input with a clear message."""
    if not text.strip():
        raise ImportFormatError(f"{what} is empty: there is nothing to import")


def split_lines(text: str) -> list[str]:
    r"""Split on "\n" only (a trailing "\r" is dropped).

    ``str.splitlines`` also splits on U+2028, U+0085, form feeds, ...: characters that
    JSON strings and Markdown prose may legitimately contain, raw.
    """
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def loads_json(text: str, *, line: int | None = None, what: str = "JSON") -> Any:
    """``json.loads`` that reports the line (and column) of the error, refuses nesting
    deeper than ``MAX_JSON_DEPTH`` (what the code after it can walk), and replaces lone
    surrogates by U+FFFD.

    Every JSON value an importer reads comes through here, and only a JSON escape
    (``\\ud800``) can put a lone surrogate in a Python string (bytes are decoded strictly):
    UTF-8 cannot encode one, so an importer hashing the text or the database storing it
    would fail. Cleaned here, before any importer sees the value.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if line is None:
            raise ImportFormatError(
                f"invalid {what}: {exc.msg} (column {exc.colno})", line=exc.lineno
            ) from None
        raise ImportFormatError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", line=line
        ) from None
    except RecursionError:
        raise _too_deep(what, line) from None
    if could_be_too_deep(text) and json_too_deep(value):
        raise _too_deep(what, line)
    if _SURROGATE_ESCAPE.search(text):
        value, _ = clean_json(value, clean_surrogates)
    return value


def _too_deep(what: str, line: int | None) -> ImportFormatError:
    return ImportFormatError(
        f"invalid {what}: objects and arrays nest more than {MAX_JSON_DEPTH} levels deep",
        line=line,
    )


def iter_json_lines(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines text."""
    for number, raw in enumerate(split_lines(text), 1):
        stripped = raw.strip()
        if not stripped:
            continue
        obj = loads_json(stripped, line=number)
        if not isinstance(obj, dict):
            raise ImportFormatError(
                f"expected a JSON object on each line, got {json_type(obj)}", line=number
            )
        yield number, obj


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def tag(obj: dict[str, Any], key: str = "type") -> str:
    """A field as a string, "" when it is missing or not a string.

    For discriminators (``type``, ``role``: compared against sets, so a list or object
    must not reach them) and for descriptive metadata (``cwd``, ``model``, ``version``),
    whose odd value is no reason to refuse a whole file.
    """
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def get_str(
    obj: dict[str, Any], key: str, *, line: int | None = None, field: str | None = None
) -> str:
    """``obj[key]`` as a string; missing or null gives ""; numbers are accepted as ids."""
    value = obj.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise ImportFormatError(
        f"'{key}' must be a string, got {json_type(value)}", line=line, field=field or key
    )


def get_dict(
    obj: dict[str, Any], key: str, *, line: int | None = None, field: str | None = None
) -> dict[str, Any]:
    """``obj[key]`` as a dict; missing or null gives {}."""
    value = obj.get(key)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise ImportFormatError(
        f"'{key}' must be an object, got {json_type(value)}", line=line, field=field or key
    )


def from_epoch(value: float, *, line: int | None = None, field: str | None = None) -> datetime:
    """An aware UTC datetime from epoch seconds (values that can only be milliseconds are)."""
    seconds = float(value)
    if abs(seconds) > _EPOCH_MS_THRESHOLD:
        seconds /= 1000.0
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise ImportFormatError(
            f"timestamp {value!r} is out of range", line=line, field=field
        ) from None


def parse_timestamp(
    value: Any, *, line: int | None = None, field: str = "timestamp"
) -> datetime | None:
    """An aware datetime from an ISO-8601 string or epoch number; None/"" give None.

    A naive time (no offset in the source) is taken as UTC, as the importers promise.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, bool):
        raise ImportFormatError(f"'{field}' must be a time, got a boolean", line=line, field=field)
    if isinstance(value, int | float):
        return from_epoch(value, line=line, field=field)
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.match(text):
            return from_epoch(float(text), line=line, field=field)
        for suffix in (" UTC", " GMT", " utc", " gmt"):
            if text.endswith(suffix):
                text = text[: -len(suffix)] + "+00:00"
                break
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ImportFormatError(
                f"'{field}' is not an ISO-8601 time or epoch number: {value!r}",
                line=line,
                field=field,
            ) from None
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        try:
            # In UTC: PostgreSQL refuses offsets beyond ±15:59 that Python parses ("-22:18").
            return moment.astimezone(UTC)
        except OverflowError:
            raise ImportFormatError(
                f"timestamp {value!r} is out of range", line=line, field=field
            ) from None
    raise ImportFormatError(
        f"'{field}' must be a time (ISO-8601 string or epoch number), got {json_type(value)}",
        line=line,
        field=field,
    )


def ensure_unique_client_ids(messages: list[ParsedMessage]) -> None:
    """Make client ids unique within a session, in place ("id", "id#2", "id#3", ...).

    Sources occasionally repeat ids (a record written twice); the capture layer keys
    idempotent re-import on them, so a repeat must not silently replace a message.
    """
    seen: dict[str, int] = {}
    for message in messages:
        if not message.client_id:
            continue
        count = seen.get(message.client_id, 0) + 1
        seen[message.client_id] = count
        if count > 1:
            candidate = f"{message.client_id}#{count}"
            while candidate in seen:
                count += 1
                candidate = f"{message.client_id}#{count}"
            seen[message.client_id] = count
            seen[candidate] = 1
            message.client_id = candidate


def time_bounds(messages: list[ParsedMessage]) -> tuple[datetime | None, datetime | None]:
    """The earliest and latest message timestamps (None when no message has one)."""
    stamps = [m.timestamp for m in messages if m.timestamp is not None]
    if not stamps:
        return None, None
    return min(stamps), max(stamps)


def distinct(values: list[str]) -> list[str]:
    """Non-empty values in first-seen order, without repeats."""
    return list(dict.fromkeys(v for v in values if v))
