"""A question that names a speaker ("what are Melanie's hobbies?", "does John work
full-time?") is about that speaker: their own messages carry the answer far more often than
what others say to them or about them. The keyword side cannot see this — a message's
keyword context holds its neighbours' speakers too, so the name matches nearly every
message of a chat between two people — and the vector side does not know who spoke.

So when the query names the author of some of the candidates (the first word of their name
as a word of the query: "Kate" for "Kate Miller", and for the handles chat apps show, "kate_m"
or "kate.miller"), the other authors' candidates keep ``OTHERS_FACTOR`` of their
score and the list is sorted again (stably: equal scores keep their order). A query naming
nobody is left as it is; one naming every author changes nothing. Tool messages never count
as named speakers (a question naming a tool asks about its use, not its output alone).

Among the named speaker's own messages, those that **state something about themselves**
carry the facts such a question asks about ("I just signed up for a pottery class"), and
their questions and backchannel ("that's great!", "what about you?") do not. A message is
a self-statement when its first 300 characters hold a first-person word (``FIRST_PERSON``,
read in the same query as its kind) and, with ``SELF_NOT_QUESTION``, it is not a question: a
turn of chat (at most ``QUESTION_MAX_BYTES``) that ends with a question mark. A long message
that ends by asking something back ("…what do you think?") still states what it states.
Such a message of a named speaker is lifted by ``SELF_LIFT`` of what it lacks
(``score + (1 − score) × SELF_LIFT``). The words are English: in another language no message
is a self-statement and the lift has no effect.

Contract (``focus``): the output is a permutation of the input; scores only fall, except a
named speaker's self-statements', which rise by at most ``SELF_LIFT`` of what they lack and
stay within 0..1; the output is sorted by score, best first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from sessions.enrich.aliases import NOT_NAMES

T = TypeVar("T")

OTHERS_FACTOR = 0.8
# Chosen on LoCoMo 0-4, checked on 5-9 and the other sets (docs/benchmark-log.md).
SELF_LIFT = 0.2
SELF_NOT_QUESTION = True  # a message ending with a question mark is not a self-statement
# A first-person word, as a PostgreSQL regular expression (``~*``: any case; "I'm", "we've"
# hold one too, the apostrophe ending the word).
FIRST_PERSON = r"\m(i|me|my|mine|myself|we|us|our|ours|ourselves)\M"
QUESTION_END = r"[?？؟]\s*$"  # a question mark ends it (Latin, full-width, Arabic)
# Longer messages are never questions. Reading a message's end decompresses all of it (its
# start is read as a slice), which cost a search over long transcripts 5 ms at the median
# and 11 ms at p95 (bench/search_real.py, docs/benchmarks.md).
QUESTION_MAX_BYTES = 2_000
# Words of a query and of a display name: letters and digits, so a handle's parts count
# ("kate_m", "kate.miller", "kate@example.com": "kate").
_WORD = re.compile(r"[^\W_]+")


def first_word(author: str) -> str | None:
    """The word of a display name that a question calls its author by: its first (casefolded),
    unless that is a common word (nobody is called "the" for "The Architect")."""
    parts = _WORD.findall(author)
    if not parts:
        return None
    first = parts[0].casefold()
    if len(first) < 2 or not any(c.isalpha() for c in first) or first in NOT_NAMES:
        return None
    return first


def named(query: str, authors: Iterable[str]) -> set[str]:
    """The ``authors`` the query names: their name's first word is a word of the query."""
    words = {w.casefold() for w in _WORD.findall(query)}
    return {author for author in authors if first_word(author) in words}


def focus(
    items: Sequence[T],
    score: Callable[[T], float],
    author: Callable[[T], Hashable],
    speakers: set,
    factor: float | None = None,
    states_self: Callable[[T], bool] | None = None,
    lift: float | None = None,
) -> list[tuple[T, float]]:
    """``items`` with the score of those not by ``speakers`` times ``factor``
    (``OTHERS_FACTOR``) and, given ``states_self``, that of the speakers' self-statements
    lifted by ``lift`` (``SELF_LIFT``) of what it lacks; best first, ties keep the input
    order."""
    factor = OTHERS_FACTOR if factor is None else factor
    lift = SELF_LIFT if lift is None else lift
    if not 0.0 <= factor <= 1.0 or not 0.0 <= lift <= 1.0:
        raise ValueError("factor and lift must be within 0..1")
    if not speakers:
        return [(item, score(item)) for item in items]

    def focused(item: T) -> float:
        value = score(item)
        if author(item) not in speakers:
            return value * factor
        if states_self is not None and states_self(item):
            return value + (1.0 - value) * lift
        return value

    return sorted(((item, focused(item)) for item in items), key=lambda pair: -pair[1])
