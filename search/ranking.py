"""Putting keyword and vector candidates in one order, and saying how relevant each is.

**Order** — reciprocal-rank fusion: ``rrf = w_v/(k + rank_v) + w_k/(k + rank_k)`` over
the two candidate lists (a list a message is absent from adds nothing), then a session
boost: ``fused = rrf + SESSION_BOOST · (sum of the SESSION_BEST best rrf in the same
session)``, because the answer tends to sit in the session where the matches are, and a
session that matches several times is likelier the one meant than a session with a single
lucky hit. Ranks, not scores, are fused because BM25 scores and cosine similarities live on
unrelated scales. The constants (k = 20, keyword weight 1.5, boost 0.2 over the best 3) were
chosen on LoCoMo conversations 0-4 and checked on 5-9 (bench/locomo.py measures them).
Summing the best 3 rather than taking the best one alone raised session and turn recall on
5-9; any k from 20 to 60 with a keyword weight of 1.25-2 does about as well; weighted sums
of normalised scores did no better.

Other apps' keys to messages (``search/extra_keys.py``: memories pointing to the messages
they came from), when asked for, are a third list: ``+ EXTRA_WEIGHT/(k + rank_extra)``.

**Relevance (0..1)** — RRF values depend on the query and the list lengths, so they cannot
tell a caller "this is a good match". The relevance we report is built from two absolute
measures instead, so that 0.3 means the same thing for every query:

- semantic: the cosine similarity of the message's best chunk to the query, mapped linearly
  from ``SIMILARITY_FLOOR`` (unrelated text, → 0) to ``SIMILARITY_CEIL`` (a paraphrase, → 1);
- keyword: the IDF-weighted share of the query's words the message contains (rare words
  count for more; 1 = it has every word).

``hybrid = semantic + (1 − semantic) · KEYWORD_LIFT · keyword``: matching words can only
raise a message's relevance (a paraphrase with no shared word keeps its semantic value);
the ``semantic`` and ``keyword`` modes report their own measure. ``min_relevance`` filters
on this value.

**Lifecycle**: a decaying session (unread for the project's "decaying after" days) ranks
lower: its messages' fused score is multiplied by ``DECAYING_FACTOR``. Active and idle
sessions are not touched, so on fresh data the order is exactly the fusion's.

**Recency** (optional): the session's stored decay priority (0..1, see
``sessions/forget/decay.py``: it fades with the days since the session was last read and
since it was created, and rises with reads) scales the fused score by
``(1 − RECENCY_WEIGHT) + RECENCY_WEIGHT·priority``.

**MMR** (optional): greedy maximal marginal relevance over the candidates' vectors,
``λ·fused' − (1 − λ)·max cosine to the ones already picked``, so five hits are not five
near-copies of one exchange.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from search.query_intent import QueryIntent

RRF_K = 20
VECTOR_WEIGHT = 1.0
KEYWORD_WEIGHT = 1.5
EXTRA_WEIGHT = 0.5  # better than 1 on LoCoMo's tuning conversations, 0-4
SESSION_BOOST = 0.2
SESSION_BEST = 3  # how many of a session's best matches its boost adds up
SIMILARITY_FLOOR = 0.1
SIMILARITY_CEIL = 0.55
KEYWORD_LIFT = 0.5
RECENCY_WEIGHT = 0.3
# A decaying session keeps its matches, below an equally good match of a session in use.
DECAYING_FACTOR = 0.8
MMR_LAMBDA = 0.7
# The one score (see ``score``): chosen on LoCoMo conversations 0-4, checked on 5-9.
KEYWORD_STRENGTH = 1.0
RELEVANCE_SCALE = 0.35
SESSION_SUPPORT = 0.4  # how much a session's best matches lift each of its messages
# Memories' keys to a message lift it by at most this much of what it lacks (search/extra_keys.py).
EXTRA_LIFT = 0.2
# What a message that is not prose keeps of its relevance, when the question does not ask
# for that kind (search/query_intent.py). Chosen on principle, not measured (see above).
NOISE_FACTORS = {"injected": 0.5, "console": 0.5, "tool_output": 0.7}


@dataclass
class Candidate:
    message_id: int
    chunk_id: int | None = None
    session_id: int | None = None
    similarity: float | None = None  # cosine of the best chunk
    keyword_score: float = 0.0
    coverage: float = 0.0
    rank_vector: int | None = None  # 1-based
    rank_keyword: int | None = None
    rank_extra: int | None = None  # rank among other apps' keys (search/extra_keys.py)
    fused: float = 0.0
    relevance: float = 0.0
    kind: str = "prose"  # sessions.models.MessageKind


def semantic_relevance(similarity: float | None) -> float:
    if similarity is None:
        return 0.0
    span = SIMILARITY_CEIL - SIMILARITY_FLOOR
    return min(1.0, max(0.0, (similarity - SIMILARITY_FLOOR) / span))


def relevance(candidate: Candidate, mode: str) -> float:
    semantic = semantic_relevance(candidate.similarity)
    if mode == "semantic":
        return semantic
    if mode == "keyword":
        return candidate.coverage
    return semantic + (1 - semantic) * KEYWORD_LIFT * candidate.coverage


def fuse(candidates: list[Candidate], mode: str) -> list[Candidate]:
    """Sets ``fused`` and ``relevance``; returns the candidates best first."""
    for c in candidates:
        fused = 0.0
        if c.rank_vector is not None and mode != "keyword":
            fused += VECTOR_WEIGHT / (RRF_K + c.rank_vector)
        if c.rank_keyword is not None and mode != "semantic":
            fused += KEYWORD_WEIGHT / (RRF_K + c.rank_keyword)
        if c.rank_extra is not None:
            fused += EXTRA_WEIGHT / (RRF_K + c.rank_extra)
        c.fused = fused
        c.relevance = relevance(c, mode)
    by_session: dict[int | None, list[float]] = {}
    for c in candidates:
        by_session.setdefault(c.session_id, []).append(c.fused)
    boost = {
        session: SESSION_BOOST * sum(sorted(values, reverse=True)[:SESSION_BEST])
        for session, values in by_session.items()
    }
    for c in candidates:
        c.fused += boost[c.session_id]
    return sorted(candidates, key=lambda c: (-c.fused, -c.relevance, c.message_id))


def noise_factor(kind: str, intent: QueryIntent) -> float:
    """What a message of ``kind`` keeps of its relevance for a question of ``intent``."""
    if kind in ("tool_output", "console") and intent.wants_output:
        return 1.0
    if kind == "injected" and intent.wants_injected:
        return 1.0
    return NOISE_FACTORS.get(kind, 1.0)


def match_strength(c: Candidate, mode: str, best_keyword_score: float) -> float:
    """How well a message matches, before session support: its best chunk's cosine plus
    ``KEYWORD_STRENGTH ×`` its keyword coverage × its BM25 score relative to the query's
    best (so the words it holds count, and count more where they are its own words than
    where they are only in its context)."""
    strength = 0.0
    if mode != "keyword" and c.similarity is not None:
        strength += c.similarity
    if mode != "semantic" and best_keyword_score > 0:
        strength += KEYWORD_STRENGTH * c.coverage * c.keyword_score / best_keyword_score
    return strength


def as_relevance(strength: float) -> float:
    """0..1 without a ceiling (every better match scores higher): nothing below
    ``SIMILARITY_FLOOR``, then ``1 − e^(−(strength − floor)/RELEVANCE_SCALE)``."""
    return 1.0 - math.exp(-max(0.0, strength - SIMILARITY_FLOOR) / RELEVANCE_SCALE)


def score(
    candidates: list[Candidate], mode: str, intent: QueryIntent | None = None
) -> list[Candidate]:
    """The one score of a message search: sets ``relevance`` (what orders the list, what
    is shown and what ``min_relevance`` keeps) and returns the candidates best first."""
    intent = intent or QueryIntent()
    best_keyword_score = max((c.keyword_score for c in candidates), default=0.0)
    for c in candidates:
        own = as_relevance(match_strength(c, mode, best_keyword_score))
        c.relevance = own * noise_factor(c.kind, intent)
    by_session: dict[int | None, list[float]] = {}
    for c in candidates:
        by_session.setdefault(c.session_id, []).append(c.relevance)
    support = {
        session: sum(sorted(values, reverse=True)[:SESSION_BEST]) / SESSION_BEST
        for session, values in by_session.items()
    }
    for c in candidates:
        c.relevance += (1 - c.relevance) * SESSION_SUPPORT * support[c.session_id]
        if c.rank_extra is not None:
            c.relevance += (1 - c.relevance) * EXTRA_LIFT * RRF_K / (RRF_K + c.rank_extra - 1)
    return ordered(candidates)


def ordered(candidates: list[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (-c.relevance, c.message_id))


def group(ranked: list[Candidate], limit: int, per_session: int) -> list[list[Candidate]]:
    """The first ``limit`` sessions of ``ranked``, each with its best ``per_session``
    candidates: a session ranks by its best message, so groups and their members keep the
    order (and the relevance goes down within each and from one group's best to the next)."""
    groups: dict[int | None, list[Candidate]] = {}
    for c in ranked:
        members = groups.setdefault(c.session_id, [])
        if len(members) < per_session:
            members.append(c)
    return list(groups.values())[:limit]


def adjust_for_lifecycle(
    candidates: list[Candidate], sessions: dict[int, tuple[str, float]], *, recency: bool
) -> list[Candidate]:
    """Lower decaying sessions' matches and, with ``recency``, weigh each by its session's
    decay priority. ``sessions``: session id → (lifecycle, decay priority). Re-sorts only
    when a score changed, so the order (and its ties) stand otherwise."""
    changed = False
    for c in candidates:
        lifecycle, priority = sessions.get(c.session_id, ("", 0.0))
        factor = DECAYING_FACTOR if lifecycle == "decaying" else 1.0
        if recency:
            factor *= (1 - RECENCY_WEIGHT) + RECENCY_WEIGHT * priority
        if factor != 1.0:
            c.relevance *= factor
            changed = True
    return ordered(candidates) if changed else candidates


def mmr(candidates: list[Candidate], vectors: dict[int, np.ndarray], limit: int) -> list[Candidate]:
    """Greedy MMR over the first ``limit`` picks. Each candidate's relevance becomes the
    value MMR weighed it at, in relevance units: ``relevance − top·(1 − λ)/λ·redundancy``
    (at least 0), where redundancy is its highest cosine to what was picked before it. A
    pick's redundancy can only grow as more are picked, so the best value left never
    rises: the list stays non-increasing in what it shows. Candidates without a vector
    have no redundancy."""
    if len(candidates) <= 1:
        return candidates
    top = max(c.relevance for c in candidates) or 1.0
    discount = top * (1 - MMR_LAMBDA) / MMR_LAMBDA
    own = {c.message_id: c.relevance for c in candidates}
    redundancy = {c.message_id: 0.0 for c in candidates}
    remaining = list(candidates)
    picked: list[Candidate] = []

    def value(c: Candidate) -> float:
        return own[c.message_id] - discount * redundancy[c.message_id]

    while remaining and len(picked) < limit:
        best = max(remaining, key=value)  # the first of equals: the earlier in the order
        picked.append(best)
        remaining.remove(best)
        vector = vectors.get(best.chunk_id) if best.chunk_id is not None else None
        if vector is None:
            continue
        for c in remaining:
            other = vectors.get(c.chunk_id) if c.chunk_id is not None else None
            if other is not None:
                similar = max(0.0, float(other @ vector))
                redundancy[c.message_id] = max(redundancy[c.message_id], similar)
    remaining.sort(key=value, reverse=True)
    out = picked + remaining
    for c in out:
        c.relevance = max(0.0, value(c))
    return out
