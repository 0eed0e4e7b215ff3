"""Reading JSON in the importers: parsing (with the line of an error, a depth limit and lone
surrogates replaced), JSON Lines, and typed access to fields. Errors are ``ImportFormatError``
with the line and field, never a bare ``ValueError``/``KeyError``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from transcripts.sanitize import (
    MAX_JSON_DEPTH,
    NonFiniteNumber,
    clean_json,
    clean_surrogates,
    could_be_too_deep,
    json_too_deep,
    load_json,
)

from ._text import split_lines
from .base import ImportFormatError

# A JSON escape of a UTF-16 surrogate (half of a pair, or alone).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads_json(text: str, *, line: int | None = None, what: str = "JSON") -> Any:
    """``json.loads`` that reports the line (and column) of the error, refuses nesting
    deeper than ``MAX_JSON_DEPTH`` (what the code after it can walk) and numbers that are not
    finite (``NaN``, ``1e400``: jsonb cannot store them), and replaces lone surrogates by
    U+FFFD.

    Every JSON value an importer reads comes through here, and only a JSON escape
    (``\\ud800``) can put a lone surrogate in a Python string (bytes are decoded strictly):
    UTF-8 cannot encode one, so an importer hashing the text or the database storing it
    would fail. Cleaned here, before any importer sees the value.
    """
    try:
        value = load_json(text)
    except NonFiniteNumber as exc:
        raise ImportFormatError(
            f"invalid {what if line is None else 'JSON'}: {exc}", line=line
        ) from None
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


def expect(
    value: Any, types: Any, message: str, *, line: int | None = None, field: str | None = None
) -> Any:
    """``value`` when it is an instance of ``types``; otherwise an ``ImportFormatError``
    saying ``message`` and what the value is ("each message must be an object, got a list")."""
    if not isinstance(value, types):
        raise ImportFormatError(f"{message}, got {json_type(value)}", line=line, field=field)
    return value


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
