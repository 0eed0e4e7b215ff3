"""The summary's text: ``Task: … Done: … Outcome: … Key entities: …``, fitted to a length.

``fit_summary`` never exceeds ``max_chars``: lower-priority parts (entities, then the second
sentence, tool names, commits, ...) are dropped first, then the task and the remaining parts
are shortened at word boundaries (marked with "…"). ``read_sections`` reads such a text
back, for a progressive update.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sessions.enrich.text import ELLIPSIS, fit_words, strip_end
from sessions.enrich.transcript import entity_pairs

MAX_ENTITIES = 6


@dataclass
class Parts:
    """A summary's sections. ``done`` and ``outcome`` are ``(priority, text)`` items: the
    lower the priority, the longer the item survives when space runs out."""

    head_label: str  # "Task", or "Topic" for a chat between people
    head: str
    done_label: str  # "Done", or "Discussed"
    done: list[tuple[int, str]]
    outcome: list[tuple[int, str]]
    entities: list[str] = field(default_factory=list)


def short_path(path: str) -> str:
    """A long path as its last two parts."""
    path = path.strip("`'\"").rstrip(":,;")
    if len(path) <= 40:
        return path
    parts = [p for p in re.split(r"[/\\]", path) if p]
    return "/".join(parts[-2:]) if len(parts) >= 2 else path[-40:]


def short_command(command: str, max_chars: int = 60) -> str:
    """A command with long paths shortened to their last component, cut at a word."""
    words = []
    for word in command.split():
        if len(word) > 25 and "/" in word.strip("/"):
            last = [p for p in word.split("/") if p][-1]
            word = "…/" + (last if len(last) <= 30 else last[:20] + "…")
        words.append(word)
    return fit_words(" ".join(words), max_chars)


def key_entities(entities: Iterable[Any], limit: int = MAX_ENTITIES) -> list[str]:
    """Up to ``limit`` entity values: most counted first, taking the types in turn."""
    by_type: dict[str, list[tuple[int, int, str]]] = {}
    seen: set[str] = set()
    for order, (etype, value, count) in enumerate(entity_pairs(entities)):
        key = value.lower()
        if key in seen:
            continue
        seen.add(key)
        by_type.setdefault(etype, []).append((-count, order, value))
    queues = [sorted(items) for items in by_type.values()]
    chosen: list[str] = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                value = queue.pop(0)[2]
                chosen.append(short_path(value) if "/" in value else fit_words(value, 60))
    return chosen


def _sentence_end(text: str) -> str:
    text = strip_end(text)
    return text if text.endswith(ELLIPSIS) else f"{text}."


def _render(parts: Parts) -> str:
    sections = []
    if parts.head:
        sections.append(f"{parts.head_label}: {_sentence_end(parts.head)}")
    if parts.done:
        done = "; ".join(strip_end(t) for _, t in parts.done)
        sections.append(f"{parts.done_label}: {_sentence_end(done)}")
    if parts.outcome:
        outcome = "; ".join(strip_end(t) for _, t in parts.outcome)
        sections.append(f"Outcome: {_sentence_end(outcome)}")
    if parts.entities:
        sections.append(f"Key entities: {_sentence_end(', '.join(parts.entities))}")
    return " ".join(sections)


def fit_summary(summary: Parts, max_chars: int) -> str:
    """Render the parts that fit in ``max_chars``, adding them from the most to the least
    important: the task, the outcome's status, edits, commands, the conclusion, the best
    sentence, three entities, other actions, the other entities, the second sentence.
    A part that does not fit whole is shortened at a word boundary when at least 40
    characters of it fit, and left out otherwise. Sections keep their order."""
    head = fit_words(summary.head, 160)
    head_label = summary.head_label
    # (importance, section, position, text): lower importance is added first.
    parts: list[tuple[float, int, int, str]] = []
    for i, (priority, text) in enumerate(summary.outcome):
        parts.append((0.5 if priority == 0 else 3.5, 1, i, fit_words(text, 140)))
    for i, (priority, text) in enumerate(summary.done):
        importance = {0: 1, 1: 2, 2: 4, 3: 6, 4: 6.5}.get(priority, 8)
        parts.append((importance, 0, i, fit_words(text, 140)))
    for i, name in enumerate(summary.entities):
        parts.append((5 if i < 3 else 7, 2, i, name))
    parts.sort(key=lambda part: (part[0], part[1], part[2]))

    def render(chosen: list[tuple[float, int, int, str]], head_text: str) -> str:
        ordered = sorted(chosen, key=lambda part: (part[1], part[2]))
        return _render(
            replace(
                summary,
                head=head_text,
                done=[(0, t) for _, section, _, t in ordered if section == 0],
                outcome=[(0, t) for _, section, _, t in ordered if section == 1],
                entities=[t for _, section, _, t in ordered if section == 2],
            )
        )

    if len(render([], head)) > max_chars:
        # Only (part of) the task fits: keep the label while a word of the task fits too.
        short = fit_words(head, max_chars - len(head_label) - 2)
        if short and short != ELLIPSIS and len(short.split()[0].rstrip(ELLIPSIS)) > 1:
            return f"{head_label}: {short}"
        return fit_words(head, max_chars)
    chosen: list[tuple[float, int, int, str]] = []
    for part in parts:
        trial = render([*chosen, part], head)
        if len(trial) <= max_chars:
            chosen.append(part)
            continue
        if part[1] == 2:
            continue  # an entity is shown whole or not at all
        room = len(part[3]) - (len(trial) - max_chars)
        if room >= 40:
            shorter = (part[0], part[1], part[2], fit_words(part[3], room))
            if len(render([*chosen, shorter], head)) <= max_chars:
                chosen.append(shorter)
    return fit_words(render(chosen, head), max_chars)


_SECTION = re.compile(r"(?:^|(?<=\.) )(Task|Topic|Done|Discussed|Outcome|Key entities): ")


def read_sections(summary: str) -> dict[str, str]:
    """``{"Task": ..., "Done": ..., ...}`` of a summary this module rendered."""
    found = list(_SECTION.finditer(summary or ""))
    sections = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(summary)
        sections[match.group(1)] = strip_end(summary[match.end() : end])
    return sections
