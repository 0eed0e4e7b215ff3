"""A question that names a speaker ("what are Melanie's hobbies?", "does John work
full-time?") is about that speaker: their own messages carry the answer far more often than
what others say to them or about them. The keyword side cannot see this — a message's
keyword context holds its neighbours' speakers too, so the name matches nearly every
message of a chat between two people — and the vector side does not know who spoke.

So when the query names the author of some of the candidates (the whole name, or its first
word, as a word of the query), the other authors' candidates keep ``OTHERS_FACTOR`` of their
score and the list is sorted again (stably: equal scores keep their order). A query naming
nobody is left as it is; one naming every author changes nothing. Tool messages never count
as named speakers (a question naming a tool asks about its use, not its output alone).

Contract (``focus``): the output is a permutation of the input; scores only fall; the
output is sorted by score, best first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

OTHERS_FACTOR = 0.8
_WORD = re.compile(r"\w+")


def named(query: str, authors: Iterable[str]) -> set[str]:
    """The ``authors`` the query names: their name's first word is a word of the query."""
    words = {w.casefold() for w in _WORD.findall(query)}
    found = set()
    for author in authors:
        parts = _WORD.findall(author)
        if parts and parts[0].casefold() in words:
            found.add(author)
    return found


def focus(
    items: Sequence[T],
    score: Callable[[T], float],
    author: Callable[[T], Hashable],
    speakers: set,
    factor: float | None = None,
) -> list[tuple[T, float]]:
    """``items`` with the score of those not by ``speakers`` times ``factor``
    (``OTHERS_FACTOR``), best first; ties keep the input order."""
    factor = OTHERS_FACTOR if factor is None else factor
    if not 0.0 <= factor <= 1.0:
        raise ValueError("factor must be within 0..1")
    if not speakers:
        return [(item, score(item)) for item in items]
    scored = [
        (item, score(item) if author(item) in speakers else score(item) * factor) for item in items
    ]
    return sorted(scored, key=lambda pair: -pair[1])
