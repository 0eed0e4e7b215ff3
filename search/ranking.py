"""One score for each message a search finds: it orders the list, it is the relevance
shown (API ``relevance``, the UI's %) and it is what ``min_relevance`` keeps, so relevance
never goes up down a list, and 0.3 means "a decent match" for every query.

**Match strength** (``match_strength``): the cosine similarity of the message's best chunk
to the query, plus ``KEYWORD_STRENGTH × coverage × bm25 / best bm25``, where coverage is
the IDF-weighted share of the query's words the message (or its keyword context) holds and
bm25 its keyword score relative to the query's best keyword match. Coverage is absolute (a
message holding only a common word of the query gets little, however it ranks); the BM25
ratio tells a message holding the words itself from one holding them only in its context,
and counts how often they occur. ``semantic`` mode uses the cosine alone, ``keyword`` mode
the keyword part alone.

**Relevance** (``as_relevance``): ``1 − e^(−(strength − SIMILARITY_FLOOR)/RELEVANCE_SCALE)``,
0 below the floor (unrelated text). It has no ceiling: a closer paraphrase always scores
higher (the former linear map stopped at a cosine of 0.55, and its ties cost order).

**Noise** (``noise_factor``): injected instructions, console lines and tool output
(``Message.kind``, set at capture by ``sessions/capture/message_kind.py``) keep
``NOISE_FACTORS`` of their relevance, unless the question asks for that kind
(``search/query_intent.py``: an error, a command, a path, a flag, a code token, or a quoted
phrase found in tool output; instructions or a system prompt). The factors are chosen on
principle: LoCoMo is all prose and cannot measure them, and the coding question set is a
check, not something to tune to. "Below prose for the same match" means they decide near
ties, not that they bury a clearly better match: each keeps 0.95 of its relevance, the
mildest factor that still puts a prose answer above a banner and a system prompt repeating
the question's words. Stronger factors put prose first more often but lost answers on the
coding set, where two in five answers are tool output or console lines (a file the agent
read, a test run): docs/benchmarks.md has the figures.

**Session support**: each message is lifted by ``(1 − relevance) × SESSION_SUPPORT ×`` the
mean of its session's ``SESSION_BEST`` best relevances (itself included), because the
answer tends to sit in the session where the matches are, and a session that matches
several times is likelier the one meant than one with a single lucky hit. It only closes
part of the gap to 1, so relevance stays 0..1.

**Memory keys** (``search/extra_keys.py``, off by default): a message a matching memory
points to is lifted by ``(1 − relevance) × EXTRA_LIFT × k/(k + rank − 1)``.

**Lifecycle**: a decaying session's messages are multiplied by ``DECAYING_FACTOR``; with
``recency``, by ``(1 − RECENCY_WEIGHT) + RECENCY_WEIGHT·priority`` (the session's decay
priority, ``sessions/decay.py``). Both lower what is shown too.

**MMR** (optional, ``mmr``): greedy maximal marginal relevance; each message's relevance
becomes what MMR weighed it at, ``relevance − top·(1 − λ)/λ·redundancy`` (its highest
cosine to a message above it), so a near-copy of a result above is shown lower, and the
list is still non-increasing in what it shows.

The constants (``KEYWORD_STRENGTH``, ``RELEVANCE_SCALE``, ``SESSION_SUPPORT``, and every
other named here: ``search/tuning.py``, read when a search runs) were chosen
on LoCoMo conversations 0-4 against the reciprocal-rank fusion this score replaced, and
checked on 5-9 and the other sets (docs/benchmark-log.md). Memory search uses the same match
strength and relevance (``memories/retrieve/search.py``). The fusion it replaced (ranks, not
scores, ``w/(k + rank)`` per list plus a session boost) has been removed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from search import tuning
from search.query_intent import QueryIntent

# The kinds whose copies are shown once (``without_copies``): what a harness or a tool's
# banner repeats in session after session. The same words said or printed in two sessions
# are two events (a request made in two repositories, a command's output in each), kept.
COPIES_COLLAPSE = ("injected", "console")


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
    relevance: float = 0.0
    kind: str = "prose"  # sessions.models.MessageKind
    author: str = ""  # who wrote it; "" for tool messages (never a named speaker)
    # Its first 300 characters hold a first-person word; it ends with a question mark
    # (search/speakers.py: a self-statement of a named speaker is lifted).
    first_person: bool = False
    question: bool = False
    # It holds a time expression (search/temporal.py: lifted when the question asks when).
    says_when: bool = False
    role: str = ""  # sessions.models.MessageRole (search/asked_for.py)
    length: int = 0  # its content's bytes (a feature of search/learned.py)
    # Its role, author and content digest: equal for copies of one text. Set only for
    # the candidates ``copy_suspects`` names.
    copy_key: str | None = None


def noise_factor(kind: str, intent: QueryIntent) -> float:
    """What a message of ``kind`` keeps of its relevance for a question of ``intent``."""
    if kind in ("tool_output", "console") and intent.wants_output:
        return 1.0
    if kind == "injected" and intent.wants_injected:
        return 1.0
    return tuning.NOISE_FACTORS.get(kind, 1.0)


def match_strength(c: Candidate, mode: str, best_keyword_score: float) -> float:
    """How well a message matches, before session support: its best chunk's cosine plus
    ``KEYWORD_STRENGTH ×`` its keyword coverage × its BM25 score relative to the query's
    best (so the words it holds count, and count more where they are its own words than
    where they are only in its context)."""
    strength = 0.0
    if mode != "keyword" and c.similarity is not None:
        strength += c.similarity
    if mode != "semantic" and best_keyword_score > 0:
        strength += tuning.KEYWORD_STRENGTH * c.coverage * c.keyword_score / best_keyword_score
    return strength


def as_relevance(strength: float) -> float:
    """0..1 without a ceiling (every better match scores higher): nothing below
    ``SIMILARITY_FLOOR``, then ``1 − e^(−(strength − floor)/RELEVANCE_SCALE)``."""
    return 1.0 - math.exp(-max(0.0, strength - tuning.SIMILARITY_FLOOR) / tuning.RELEVANCE_SCALE)


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
        session: sum(sorted(values, reverse=True)[: tuning.SESSION_BEST]) / tuning.SESSION_BEST
        for session, values in by_session.items()
    }
    for c in candidates:
        c.relevance += (1 - c.relevance) * tuning.SESSION_SUPPORT * support[c.session_id]
        if c.rank_extra is not None:
            c.relevance += (
                (1 - c.relevance)
                * tuning.EXTRA_LIFT
                * tuning.RRF_K
                / (tuning.RRF_K + c.rank_extra - 1)
            )
    return ordered(candidates)


def copy_suspects(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates of the kinds that collapse (``COPIES_COLLAPSE``) that may be copies of one
    another: those whose best chunk is exactly as close to the query as another candidate's.
    The same text by the same author embeds to the same vector, so an embedded copy always
    ties; a tie of different texts is rare, and their digests (``copy_key``) tell them apart.
    A message the pipeline has not embedded yet has no similarity to tie, so while one of
    them is among these kinds (a file just imported, a backlog, keyword-only search) all of
    them are suspects: a prompt injected into ten fresh sessions is still one text."""
    collapsing = [c for c in candidates if c.kind in COPIES_COLLAPSE]
    if any(c.similarity is None for c in collapsing):
        return collapsing
    ties: dict[float, list[Candidate]] = {}
    for c in collapsing:
        ties.setdefault(round(c.similarity, 5), []).append(c)
    return [c for group in ties.values() if len(group) > 1 for c in group]


def without_copies(ranked: list[Candidate]) -> list[Candidate]:
    """``ranked`` without the candidates whose text (same author, same content) a
    candidate above already shows, among the kinds of ``COPIES_COLLAPSE`` (their
    ``copy_key`` is set): the same system prompt or AGENTS.md in every session would
    otherwise fill the list with one text and push the rest out."""
    seen: set[str] = set()
    kept = []
    for c in ranked:
        if c.copy_key is not None:
            if c.copy_key in seen:
                continue
            seen.add(c.copy_key)
        kept.append(c)
    return kept


def ordered(candidates: list[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (-c.relevance, c.message_id))


def lifted(
    candidates: list[Candidate], share: float, which: Callable[[Candidate], bool]
) -> list[Candidate]:
    """Best first, the candidates ``which`` picks raised by ``share`` of what they lack
    (``relevance + (1 − relevance) × share``); the others keep their relevance. What a
    question's intent lifts (search/temporal.py, search/asked_for.py)."""
    for c in candidates:
        if which(c):
            c.relevance += (1 - c.relevance) * share
    return ordered(candidates)


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
        factor = tuning.DECAYING_FACTOR if lifecycle == "decaying" else 1.0
        if recency:
            factor *= (1 - tuning.RECENCY_WEIGHT) + tuning.RECENCY_WEIGHT * priority
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
    discount = top * (1 - tuning.MMR_LAMBDA) / tuning.MMR_LAMBDA
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
