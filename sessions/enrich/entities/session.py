"""Entities of a whole session, deduplicated, with counts and the context of the first one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sessions.enrich.entities.kinds import FILE, MAX_VALUE, PACKAGE
from sessions.enrich.entities.messages import extract_from_message
from sessions.enrich.entities.normalize import PEP503, normalize
from sessions.enrich.transcript import attr

CONTEXT_CHARS = 160


@dataclass
class Extracted:
    type: str
    value: str
    normalized: str
    context: str
    count: int
    first_index: int


def context_of(text: str, start: int, end: int, width: int = CONTEXT_CHARS) -> str:
    """About ``width`` characters of ``text`` around ``[start, end)``, cut on word boundaries
    and on one line (whitespace runs become one space)."""
    if start < 0 or end > len(text) or start > end:
        return " ".join(text[: width * 2].split())[:width]
    room = max(width - (end - start), 40)
    left, right = start - room // 2, end + room - room // 2
    if left < 0:  # no room on the left: take it on the right, and the other way round
        left, right = 0, right - left
    if right > len(text):
        left, right = max(0, left - (right - len(text))), len(text)
    if left > 0:
        gap = re.search(r"\s", text[left:start])
        left = left + gap.end() if gap else start
    if right < len(text) and not text[right].isspace():
        tail = text[end:right]
        cut = max(tail.rfind(" "), tail.rfind("\n"), tail.rfind("\t"))
        right = end + cut if cut >= 0 else end
    return " ".join(text[left:right].split())


def extract_session(messages: Iterable[Any]) -> list[Extracted]:
    """The entities of a session, one per ``(type, normalized)``, in order of first appearance.

    ``messages``: objects (or dicts) with ``role``, ``content``, ``tool_name``, ``metadata``.
    ``count`` is the number of occurrences in the session, ``context`` and ``first_index``
    (index in ``messages``) those of the first one. A Python "package" that is the session's
    own code is dropped: ``from dataset import x`` when ``dataset.py`` is mentioned, ``from
    sessions.models import X`` when a relative path under ``sessions/`` is.
    """
    entities: dict[tuple[str, str], Extracted] = {}
    for index, message in enumerate(messages):
        content = attr(message, "content", None)
        content = content if isinstance(content, str) else ""
        found = extract_from_message(
            attr(message, "role"),
            content,
            attr(message, "tool_name"),
            attr(message, "metadata", None),
        )
        for type, value, start, end in found:
            key = (type, normalize(type, value))
            if not key[1]:
                continue
            entity = entities.get(key)
            if entity is None:
                entities[key] = Extracted(
                    type=type,
                    value=value[:MAX_VALUE],
                    normalized=key[1],
                    context=context_of(content, start, end),
                    count=1,
                    first_index=index,
                )
            else:
                entity.count += 1
    local: set[str] = set()
    for type, normalized in entities:
        if type != FILE:
            continue
        parts = [p for p in normalized.split("/") if p not in ("", ".", "..", "~")]
        if not parts or {"node_modules", "site-packages", "dist-packages"} & set(parts):
            continue
        if parts[-1].endswith(".py"):
            local.add(parts[-1][:-3])
        if not normalized.startswith(("/", "~")) and not re.match(r"[a-z]:/", normalized):
            local.update(parts[:-1])
    local_keys = {PEP503.sub("-", name) for name in local}
    return [
        entity
        for (type, normalized), entity in entities.items()
        if not (type == PACKAGE and normalized in local_keys)
    ]
