"""Ranking that learns (issue 39): the candidates ordered by a model trained on labelled
questions, from the features search already has for every candidate, instead of the
hand-set weights and lifts of ``ranking.score``, ``speakers``, ``temporal`` and
``asked_for``.

The model is linear (a pairwise logistic ranker: it learns which of two candidates of one
question is the gold message), so scoring a pool is one matrix product, and each weight
says how much its feature counts. It is a small JSON file in the repository
(``MODEL_FILE``: its features, their standardisation, the weights, the map from score to the
relevance shown, and how it was validated), read once per process. ``bench/ltr.py`` exports
the training pools from real searches, trains it, validates it leave-one-conversation-out and
leave-one-set-out against the hand-set ranking on the same pools, and writes the file.

It is used only in hybrid mode and only with the ``SEARCH_LEARNED_RANKING`` setting (off by
default: on the held-out figures of docs/benchmarks.md it did not beat the hand-set ranking
on every set). The relevance shown is ``1 / (1 + e^−(a·score + b))``, with ``a`` and ``b``
fitted so that it tracks the hand-set relevance on the training pools: the list still
never goes up in relevance, and ``min_relevance`` keeps its meaning roughly.

Every feature is computed from what the candidate pool already holds (no extra query):

- the best chunk's cosine, and its gap to the pool's best cosine; no vector yet;
- keyword coverage (IDF-weighted share of the query's words), BM25 relative to the pool's
  best, and their product (the hand-set score's keyword part);
- the reciprocal ranks on each side;
- the session's support: the mean of its three best cosines and keyword strengths in the
  pool, and how many candidates it has;
- the message's kind (tool output, console line, injected) and whether the question asks
  for that kind (``query_intent``); its role; its length;
- a question naming a speaker: by that speaker, by someone else, a self-statement of theirs;
- a question asking when and a message that says when; a question asking what was asked for
  and a user's prose.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from search import ranking, speakers, tuning
from search.query_intent import QueryIntent

MODEL_FILE = Path(__file__).resolve().parent / "ranker" / "ranker-v1.json"
NOISY = ("tool_output", "console", "injected")

FEATURES = (
    "similarity",
    "similarity_gap",
    "no_vector",
    "coverage",
    "keyword_ratio",
    "keyword_strength",
    "vector_rrank",
    "keyword_rrank",
    "similarity_x_coverage",
    "session_similarity",
    "session_keyword",
    "session_hits",
    "tool_output",
    "console",
    "injected",
    "noise_not_asked",
    "role_user",
    "role_assistant",
    "log_length",
    "first_person",
    "question",
    "by_named",
    "by_other_when_named",
    "named_self_statement",
    "when_says_when",
    "asked_for_user_prose",
)


def enabled() -> bool:
    from django.conf import settings

    return bool(getattr(settings, "SEARCH_LEARNED_RANKING", False))


def named_authors(
    candidates: Iterable[ranking.Candidate], query: str, aliased: set[str]
) -> set[str]:
    """The candidates' authors the query names, by name or by a learned alias
    (``search/speakers.py``, ``search/aliases.py``)."""
    authors = {c.author for c in candidates if c.author}
    return speakers.named(query, authors) | (set(aliased) & authors)


def features(
    candidates: list[ranking.Candidate], intent: QueryIntent, named: set[str]
) -> np.ndarray:
    """One row of ``FEATURES`` per candidate. Plain Python over the pool and one array at the
    end: a few hundred small numpy calls cost more than the arithmetic."""
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    sims = [c.similarity if c.similarity is not None else 0.0 for c in candidates]
    best_sim = max(sims)
    best_keyword = max(c.keyword_score for c in candidates)
    ratios = [c.keyword_score / best_keyword if best_keyword > 0 else 0.0 for c in candidates]
    strengths = [c.coverage * r for c, r in zip(candidates, ratios, strict=True)]
    by_session: dict[int | None, list[int]] = {}
    for i, c in enumerate(candidates):
        by_session.setdefault(c.session_id, []).append(i)
    session: dict[int | None, tuple[float, float, float]] = {}
    for key, members in by_session.items():
        top_sims = sorted((sims[i] for i in members), reverse=True)[:3]
        top_strengths = sorted((strengths[i] for i in members), reverse=True)[:3]
        session[key] = (
            sum(top_sims) / len(top_sims),
            sum(top_strengths) / len(top_strengths),
            math.log1p(len(members)),
        )
    when, asked_for, someone = intent.asks_when, intent.asks_for_request, bool(named)
    rows = []
    for c, sim, ratio, strength in zip(candidates, sims, ratios, strengths, strict=True):
        kind, role = c.kind, c.role
        asked = (kind in ("tool_output", "console") and intent.wants_output) or (
            kind == "injected" and intent.wants_injected
        )
        by_named = someone and c.author in named
        session_sim, session_kw, session_hits = session[c.session_id]
        rows.append(
            (
                sim,
                sim - best_sim,
                c.similarity is None,
                c.coverage,
                ratio,
                strength,
                1.0 / c.rank_vector if c.rank_vector else 0.0,
                1.0 / c.rank_keyword if c.rank_keyword else 0.0,
                sim * c.coverage,
                session_sim,
                session_kw,
                session_hits,
                kind == "tool_output",
                kind == "console",
                kind == "injected",
                kind in NOISY and not asked,
                role == "user",
                role == "assistant",
                math.log1p(c.length),
                c.first_person,
                c.question,
                by_named,
                someone and not by_named,
                by_named and c.first_person and not c.question,
                when and c.says_when,
                asked_for and role == "user" and kind == "prose",
            )
        )
    return np.array(rows, dtype=float)


class Model:
    """A linear ranker read from its JSON file: ``score = w · (x − mean) / scale``."""

    def __init__(self, spec: dict):
        if tuple(spec["features"]) != FEATURES:
            raise ValueError(
                f"{MODEL_FILE.name} was trained on other features: retrain it (bench/ltr.py)"
            )
        self.spec = spec
        self.mean = np.array(spec["mean"])
        self.scale = np.array(spec["scale"])
        self.weights = np.array(spec["weights"])
        self.a, self.b = spec["relevance"]["a"], spec["relevance"]["b"]

    def scores(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.scale) @ self.weights

    def relevance(self, scores: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(self.a * scores + self.b)))


@functools.cache
def model() -> Model:
    """The shipped model, read once per process."""
    return Model(json.loads(MODEL_FILE.read_text()))


def rank(
    candidates: list[ranking.Candidate],
    intent: QueryIntent,
    named: set[str],
    ranker: Model | None = None,
) -> list[ranking.Candidate]:
    """The candidates best first by the model, each with the relevance shown."""
    if not candidates:
        return candidates
    ranker = ranker or model()
    relevance = ranker.relevance(ranker.scores(features(candidates, intent, named)))
    for c, value in zip(candidates, relevance, strict=True):
        c.relevance = float(value)
        if c.rank_extra is not None:  # a memory's evidence (search/extra_keys.py)
            c.relevance += (
                (1 - c.relevance)
                * tuning.EXTRA_LIFT
                * tuning.RRF_K
                / (tuning.RRF_K + c.rank_extra - 1)
            )
    return ranking.ordered(candidates)
