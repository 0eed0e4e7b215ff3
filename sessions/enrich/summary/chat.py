"""The parts of the summary of a chat between people (no tool calls; speakers rather than
user and assistant, like LoCoMo): the topic (key phrases), what was discussed (the top
sentences with their speakers) and the outcome (the last substantive line).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sessions.enrich.summary.textrank import (
    FILLER,
    candidate_sentences,
    rank_sentences,
    similar,
    speaker_of,
)
from sessions.enrich.text import content_words, fit_words, prose_sentences, strip_end
from sessions.enrich.topics import key_phrases
from sessions.enrich.transcript import attr, is_injected


def is_chat_between_people(messages: Sequence[Any]) -> bool:
    """No tool calls, and speakers rather than a user and an assistant: one role (other than
    a lone user), two authors in one role, or assistants with people's names."""
    roles: Counter[str] = Counter()
    authors: dict[str, set[str]] = {}
    for message in messages[:5000]:
        if is_injected(message):
            continue
        role = attr(message, "role")
        if role == "tool" or attr(message, "tool_name"):
            return False
        roles[role] += 1
        author = str(attr(message, "author") or "").strip()
        if author:
            authors.setdefault(role, set()).add(author)
    if not roles:
        return False
    if len(roles) == 1 and ("user" not in roles or len(authors.get("user", ())) >= 2):
        return True
    if any(len(names) >= 2 for names in authors.values()):
        return True
    assistant_names = authors.get("assistant", set())
    return bool(assistant_names) and all(
        re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?", name) for name in assistant_names
    )


def chat_parts(messages: Sequence[Any], max_chars: int) -> dict[str, Any]:
    """``{"done": ..., "outcome": ...}``: the two best sentences (of two speakers when the
    first one's next best line would follow) and the last substantive line."""
    positions = [
        p
        for p, m in enumerate(messages)
        if not is_injected(m) and str(attr(m, "content") or "").strip()
    ]
    ranked = rank_sentences(candidate_sentences(messages, positions, with_speaker=True))
    picked: list[tuple[int, str, str]] = []
    speakers: set[str] = set()
    taken: list[set[str]] = []
    for _, pos, speaker, sentence in ranked:
        if len(picked) == 2:
            break
        words = content_words(sentence)
        if any(similar(words, other) for other in taken):
            continue
        if len(picked) == 1 and speaker in speakers and len(ranked) > 4:
            # Prefer a second speaker when the first pick's speaker has the next best line.
            others = [r for r in ranked if r[2] not in speakers]
            if others:
                _, pos, speaker, sentence = others[0]
        picked.append((pos, speaker, strip_end(sentence)))
        taken.append(content_words(sentence))
        speakers.add(speaker)
    picked.sort()
    done = [
        (i, f"{speaker} said \u201c{fit_words(sentence, max_chars // 3)}\u201d")
        if speaker
        else (i, fit_words(sentence, max_chars // 3))
        for i, (_, speaker, sentence) in enumerate(picked)
    ]
    outcome: list[tuple[int, str]] = []
    for p in reversed(positions[-8:]):
        line = next(
            (
                strip_end(s)
                for s in prose_sentences(str(attr(messages[p], "content") or ""))
                if len(s.split()) >= 4 and not FILLER.match(s) and not s.rstrip().endswith("?")
            ),
            "",
        )
        if line:
            speaker = speaker_of(messages[p])
            text = fit_words(line, max_chars // 3)
            outcome.append((0, f"{speaker}: \u201c{text}\u201d" if speaker else text))
            break
    return {"done": done, "outcome": outcome}


def chat_topic(messages: Sequence[Any], max_chars: int) -> str:
    phrases = key_phrases(messages, limit=4)
    return fit_words(", ".join(phrases), max_chars) if phrases else ""
