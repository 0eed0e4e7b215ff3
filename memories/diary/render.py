"""A diary entry as Markdown: the text that is searched, embedded, shown and exported.

# Sam with cathy — 2026-01-11

## What happened
- 2026-01-11-cathy-1a2b3c (Planning the trip): Topic: …

## Decisions
- …
"""

from __future__ import annotations

from datetime import date

from memories.diary.models import SHARED

SECTIONS = (
    ("happened", "What happened"),
    ("decisions", "Decisions"),
    ("preferences", "Preferences"),
    ("open_threads", "Open threads"),
    ("facts", "Facts"),
)


def title(person: str, character: str, day: date) -> str:
    if character == SHARED:
        who = f"{person} (shared by every character)"
    else:
        who = f"{person} with {character}"
    return f"# {who} — {day:%Y-%m-%d}"


def markdown(person: str, character: str, day: date, parts: dict) -> str:
    """``parts`` maps a section's key to its text (happened) or its lines (the others)."""
    lines = [title(person, character, day)]
    for key, heading in SECTIONS:
        value = parts.get(key)
        if not value:
            continue
        body = value if isinstance(value, str) else "\n".join(f"- {_flat(v)}" for v in value)
        lines += ["", f"## {heading}", body]
    return "\n".join(lines) + "\n"


def _flat(text: str) -> str:
    return " ".join(str(text).split())
