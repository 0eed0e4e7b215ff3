"""Helpers shared by the importers: timestamps, message ids, distinct values.

Every helper raises ``ImportFormatError`` (never a bare ``ValueError``/``KeyError``) so the
importers can let them propagate and the API can answer with the line and field.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ._json import json_type
from .base import ImportFormatError, ParsedMessage

# Epoch values above this are milliseconds, not seconds: 1e11 s is the year 5138.
_EPOCH_MS_THRESHOLD = 1e11
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d*)?$")


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
