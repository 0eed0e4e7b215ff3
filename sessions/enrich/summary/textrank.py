"""Choosing a session's most telling sentences: TextRank (Mihalcea & Tarau, 2004: PageRank
over sentences, edges weighted by word overlap normalised by log lengths), with a bonus for
sentences that report a result ("fixed", "added", ...) and a penalty for plans ("Let me
...").

Only a sample is scored: the first, the last and the longest of the other messages
(``sessions.enrich.transcript.sample_positions``), at most ``MAX_SENTENCES`` sentences, so
the cost does not grow with the session.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sessions.enrich.text import content_words, prose_sentences
from sessions.enrich.transcript import attr, sample_positions

MAX_SENTENCES = 300

# Lines that say nothing: thanks, greetings, offers of more help.
FILLER = re.compile(
    r"^(?:you'?re welcome|no problem|glad|happy to help|hope (?:this|that) helps|let me know"
    r"|feel free|if you (?:have|need) any|thanks?|thank you|great|perfect|awesome|done|sure"
    r"|talk (?:to you )?(?:soon|later)|see you|bye|take care|have a (?:good|great|nice)"
    r"|good ?night|cheers|sounds good|ok(?:ay)?|will do|catch you|safe travels|i hope you"
    r"|(?:by the way,? )?(?:take a look|look at this|check (?:this|it) out)|here you go"
    r"|please (?:confirm|let me know|provide|review)|would you like|do you want)\b",
    re.I,
)
# Announcements of what comes next ("Let me check ..."), rather than what was done.
PLAN = re.compile(
    r"^(?:let me|let's|now let|i'll|i will|i'm going to|i am going to|next,? i|first,? i"
    r"|now i'll|i need to|i'm (?:checking|looking|reading|pulling|going)|i should)\b"
    r"|\bI(?: will|'ll|’ll) (?:provide|now|first|start|check|look|need)|^here (?:is|are)\b",
    re.I,
)
_LABEL_VALUE = re.compile(r"^[\w\s()/-]{1,30}:\s")
_RESULT = re.compile(
    r"\b(?:fixed|added|implemented|created|updated|removed|refactored|replaced|renamed|moved"
    r"|resolved|found|passes|passed|succeeded|works|completed|finished|migrated|wrote|booked"
    r"|changed|now)\b",
    re.I,
)


def textrank(sentences: Sequence[str], *, iterations: int = 30, damping: float = 0.85):
    """TextRank scores of ``sentences`` (word-overlap similarity, normalised by log lengths)."""
    # Sorted: the float sums below then add up in one order, so the ranking (and the summary)
    # does not depend on the process's string hash seed.
    words = [sorted(content_words(s)) for s in sentences]
    n = len(sentences)
    if n == 0:
        return []
    index: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        for w in ws:
            index.setdefault(w, []).append(i)
    edges: list[dict[int, float]] = [{} for _ in range(n)]
    for i, ws in enumerate(words):
        overlap: Counter[int] = Counter()
        for w in ws:
            postings = index[w]
            if len(postings) > n // 2 + 2 and n > 20:
                continue  # a word in most sentences links everything and says nothing
            for j in postings:
                if j > i:
                    overlap[j] += 1
        for j, common in overlap.items():
            norm = math.log(len(ws) + 1) + math.log(len(words[j]) + 1)
            weight = common / norm if norm else 0.0
            if weight > 0:
                edges[i][j] = weight
                edges[j][i] = weight
    out_weight = [sum(e.values()) for e in edges]
    scores = [1.0] * n
    for _ in range(iterations):
        scores = [
            (1 - damping)
            + damping
            * sum(w * scores[j] / out_weight[j] for j, w in edges[i].items() if out_weight[j])
            for i in range(n)
        ]
    return scores


def similar(a: set[str], b: set[str], threshold: float = 0.5) -> bool:
    """Jaccard overlap of content words above ``threshold`` (near-duplicate sentences)."""
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) > threshold


def _usable(sentence: str) -> bool:
    """A statement of 4 to 45 words, mostly letters, that is not a question or filler."""
    words = sentence.split()
    if not 4 <= len(words) <= 45:
        return False
    if sentence.rstrip().endswith(("?", ":")):
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    if letters / max(len(sentence), 1) < 0.6:
        return False
    return not FILLER.match(sentence)


def rank_sentences(candidates: list[tuple[int, str, str]]) -> list[tuple[float, int, str, str]]:
    """(score, position, speaker, sentence) best first, from (position, speaker, sentence)."""
    if not candidates:
        return []
    scores = textrank([s for _, _, s in candidates])
    ranked = []
    for (pos, speaker, sentence), score in zip(candidates, scores, strict=True):
        if PLAN.search(sentence):
            score *= 0.4
        elif _RESULT.search(sentence):
            score *= 1.3
        if not sentence.rstrip("\"')]”’").endswith((".", "!")):
            score *= 0.6  # list items, headings, fragments
        if _LABEL_VALUE.match(sentence):
            score *= 0.5  # "Total price: $241"
        score *= min(1.0, len(sentence.split()) / 8)  # short lines say little
        ranked.append((score, pos, speaker, sentence))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return ranked


def candidate_sentences(
    messages: Sequence[Any], positions: list[int], *, with_speaker: bool
) -> list[tuple[int, str, str]]:
    """``(order, speaker, sentence)`` of the usable sentences of a sample of ``positions``."""
    lengths = {p: len(attr(messages[p], "content")) for p in positions}
    chosen = sample_positions(positions, lengths)
    per_message = max(3, MAX_SENTENCES // max(len(chosen), 1))
    out: list[tuple[int, str, str]] = []
    for p in chosen:
        message = messages[p]
        speaker = speaker_of(message) if with_speaker else ""
        usable = [s for s in prose_sentences(attr(message, "content")) if _usable(s)]
        for k, sentence in enumerate(usable[:per_message]):
            out.append((p * 1000 + k, speaker, sentence))
    return out[: MAX_SENTENCES * 2]


def speaker_of(message: Any) -> str:
    author = str(attr(message, "author") or "").strip()
    return author or str(attr(message, "role") or "")
