"""A question that asks **when** ("When did Andrew adopt Scout?", "Which year did Audrey
adopt her dogs?", "How long has she been painting?") is answered by a message that says
when: "I adopted another dog **the other day**", "I've had them for **3 years**". Often the
message that names the thing asked about is a neighbour of that one ("We went with 'Scout'
for our pup"), and it holds more of the question's words, so it ranks first; the answer
holds a time expression, which no word of the question matches.

So when the question asks when (``search/query_intent.py``: it begins with "when", "what
year", "which month", "how long", "how many days", …), candidates whose first 500
characters hold a time expression (``TIME_WORDS``, read in the query that already reads the
candidates' kinds) are lifted by ``LIFT`` of what they lack (``relevance + (1 − relevance) ×
LIFT``) and the list is sorted again; the lifted relevance is the one shown. Among
themselves, lifted messages keep their order, and a message that does not say when keeps
its relevance. The words are English: elsewhere no message holds one and nothing changes.

Contract (``lift``): the output is a permutation of the input; a relevance only rises, by
at most ``LIFT`` of what it lacks, and stays within 0..1; the output is best first.
"""

from __future__ import annotations

from search.query_intent import QueryIntent
from search.ranking import Candidate, ordered

# Chosen on LoCoMo 0-4 among 0.1-0.7 (a plateau from 0.4 to 0.6), checked on 5-9 and the
# other sets (docs/benchmarks.md).
LIFT = 0.5
_UNITS = r"(days?|weeks?|months?|years?|decades?)"
_SEASONS = r"(summer|winter|spring|fall|autumn)"
# A time expression, as a PostgreSQL regular expression (``~*``: any case). "march" and
# "may" are months only after a word that dates them ("in May"); alone they are verbs.
TIME_WORDS = (
    r"\m(yesterday|today|tonight|tomorrow|ago|recently|lately|the other day|"
    rf"(last|next|this|past|coming) (week|weekend|month|year|night|time|{_SEASONS})|"
    r"this (morning|afternoon|evening)|"
    r"(mon|tues|wednes|thurs|fri|satur|sun)days?|"
    r"january|february|april|june|july|august|september|october|november|december|"
    r"(in|on|since|by|until|early|late|mid|of|last|next|this) (march|may)|"
    rf"(19|20)[0-9][0-9]|[0-9]+ {_UNITS}|"
    rf"(a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several) {_UNITS})\M"
)


def lift(candidates: list[Candidate], intent: QueryIntent) -> list[Candidate]:
    """Best first, with the candidates that say when lifted when the question asks when."""
    if not LIFT or not intent.asks_when:
        return candidates
    for c in candidates:
        if c.says_when:
            c.relevance += (1 - c.relevance) * LIFT
    return ordered(candidates)
