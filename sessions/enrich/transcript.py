"""Reading the messages and entities that enrichment is given, whatever their form.

Messages are ``ParsedMessage`` objects from the importers, ``sessions.models.Message`` rows,
dicts or test doubles: ``attr`` reads a field of any of them. Entities are ``(type, value[,
count])`` tuples or objects with ``.type``/``.value``/``.count``: ``entity_pairs`` reads them.
A huge session is read from a sample of its messages (``sample_positions``). Which tool
calls are shell commands is decided in one place, ``transcripts.shell_tools``, where
the importers decide how to render them. Pure Python: no database, no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The sample of a huge session's messages that is read: the first, the last and the longest
# of the others.
_HEAD_MESSAGES = 20
_TAIL_MESSAGES = 40
_MIDDLE_MESSAGES = 20
_MIDDLE_CANDIDATES = 2000  # middle messages looked at (evenly spaced) to find the longest


def attr(message: Any, name: str, default: Any = "") -> Any:
    """Field ``name`` of a message (or entity) given as an object or a mapping; ``default``
    when it is missing or None."""
    if isinstance(message, Mapping):
        value = message.get(name, default)
    else:
        value = getattr(message, name, default)
    return default if value is None else value


def call_id(message: Any) -> str:
    """The tool_call_id, or "" when a Django row was loaded without it (no query per row)."""
    deferred = getattr(message, "get_deferred_fields", None)
    if callable(deferred) and "tool_call_id" in deferred():
        return ""
    return str(attr(message, "tool_call_id") or "")


def metadata_of(message: Any) -> Mapping[str, Any]:
    value = attr(message, "metadata", None)
    return value if isinstance(value, Mapping) else {}


def is_injected(message: Any) -> bool:
    """Skill preambles, AGENTS.md, reminders (marked by the importers) and system messages."""
    return bool(metadata_of(message).get("injected")) or attr(message, "role") == "system"


def sample_positions(positions: list[int], lengths: Mapping[int, int]) -> list[int]:
    """The first, the last and the longest middle positions, in order."""
    if len(positions) <= _HEAD_MESSAGES + _TAIL_MESSAGES + _MIDDLE_MESSAGES:
        return positions
    head = positions[:_HEAD_MESSAGES]
    tail = positions[-_TAIL_MESSAGES:]
    middle = positions[_HEAD_MESSAGES:-_TAIL_MESSAGES]
    step = max(1, len(middle) // _MIDDLE_CANDIDATES)
    pool = middle[::step]
    longest = sorted(pool, key=lambda p: (-lengths.get(p, 0), p))[:_MIDDLE_MESSAGES]
    return head + sorted(longest) + tail


def entity_pairs(entities: Iterable[Any]) -> list[tuple[str, str, int]]:
    """``(TYPE, value, count)`` of each entity that has a value."""
    pairs: list[tuple[str, str, int]] = []
    for entity in entities or ():
        if isinstance(entity, tuple | list) and len(entity) >= 2:
            etype, value = entity[0], entity[1]
            count = entity[2] if len(entity) > 2 and isinstance(entity[2], int) else 1
        else:
            etype, value = attr(entity, "type"), attr(entity, "value")
            count = attr(entity, "count", 1)
            count = count if isinstance(count, int) else 1
        etype = str(getattr(etype, "value", etype) or "").upper()
        value = str(value or "").strip()
        if value:
            pairs.append((etype, value, count))
    return pairs
