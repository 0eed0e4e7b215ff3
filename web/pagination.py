"""Keyset (cursor) pagination of the session list: no OFFSET, no COUNT(*), so a late page
costs what the first does, however many sessions there are. A cursor is the sort key and id
of the last row seen, and a direction; it is opaque (URL-safe base64 of JSON) and checked on
the way in.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

PAGE_SIZE = 50

# sort name → (label, field, descending)
SORTS = {
    "newest": ("Newest first", "started_at", True),
    "oldest": ("Oldest first", "started_at", False),
    "messages": ("Most messages", "message_count", True),
    "size": ("Largest", "size_bytes", True),
}
DEFAULT_SORT = "newest"
TRASH_SORTS = {"deleted": ("Recently deleted", "deleted_at", True)}
DELETION_SORTS = {"newest": ("Newest first", "created_at", True)}
DATE_FIELDS = ("started_at", "deleted_at", "created_at", "occurred_at")


class BadCursor(ValueError):
    pass


def encode(value, pk: int, direction: str) -> str:
    if isinstance(value, datetime):
        value = value.isoformat()
    raw = json.dumps([value, pk, direction], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str, field: str) -> tuple[object, int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, pk, direction = json.loads(raw)
        if direction not in ("n", "p") or not isinstance(pk, int):
            raise ValueError
        if field in DATE_FIELDS:
            value = datetime.fromisoformat(value)
        elif not isinstance(value, int):
            raise ValueError
    except (ValueError, TypeError, json.JSONDecodeError) as exc:
        raise BadCursor("That page link is not valid any more; showing the first page.") from exc
    return value, pk, direction


@dataclass
class Page:
    rows: list
    next_cursor: str | None
    prev_cursor: str | None


def paginate_or_first(queryset, sort: str, cursor: str | None, sorts=SORTS) -> tuple[Page, list]:
    """The page at ``cursor``, or the first page with the reason when the cursor is stale."""
    try:
        return paginate(queryset, sort, cursor, sorts=sorts), []
    except BadCursor as exc:
        return paginate(queryset, sort, None, sorts=sorts), [str(exc)]


def paginate(queryset, sort: str, cursor: str | None, size: int = PAGE_SIZE, sorts=SORTS) -> Page:
    _, field, descending = sorts.get(sort) or next(iter(sorts.values()))
    direction = "n"
    if cursor:
        value, pk, direction = decode(cursor, field)
        # Going forward in a descending sort means smaller keys; backward, larger.
        smaller = descending == (direction == "n")
        op = "lt" if smaller else "gt"
        queryset = queryset.filter(
            Q(**{f"{field}__{op}": value}) | Q(**{field: value, f"pk__{op}": pk})
        )
    forward_desc = descending == (direction == "n")
    order = [f"-{field}", "-pk"] if forward_desc else [field, "pk"]
    rows = list(queryset.order_by(*order)[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    if direction == "p":
        rows.reverse()
    has_next = more if direction == "n" else bool(cursor)
    has_prev = bool(cursor) if direction == "n" else more
    return Page(
        rows=rows,
        next_cursor=encode(getattr(rows[-1], field), rows[-1].pk, "n")
        if has_next and rows
        else None,
        prev_cursor=encode(getattr(rows[0], field), rows[0].pk, "p") if has_prev and rows else None,
    )
