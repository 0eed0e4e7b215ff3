"""Lifecycle and recency, MMR, and the one score as pure functions (search/ranking.py)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search import ranking, tuning
from search.query_intent import QueryIntent
from search.ranking import Candidate
from sessions import decay


def test_recency_priority_follows_seed_001():
    assert decay.priority(0, 0, 0) == 1.0
    expected = math.exp(-0.05 * 10) * math.exp(-0.01 * 20) + 0.05
    assert decay.priority(10, 20, 5) == pytest.approx(expected)
    # The access bonus is capped at 0.2, the whole at 1.
    assert decay.priority(1000, 1000, 500) == pytest.approx(0.2, abs=1e-6)
    assert decay.priority(0, 0, 50) == 1.0


def test_recency_reorders_equal_matches_by_the_stored_priority():
    old, new = (
        Candidate(1, session_id=10, relevance=0.5),
        Candidate(2, session_id=20, relevance=0.5),
    )
    states = {10: ("active", 0.1), 20: ("active", 0.9)}
    ranked = ranking.adjust_for_lifecycle([old, new], states, recency=True)
    assert [c.message_id for c in ranked] == [2, 1]
    assert ranked[0].relevance > ranked[1].relevance


def test_decaying_sessions_rank_lower_and_others_keep_their_order():
    candidates = [
        Candidate(1, session_id=10, relevance=0.60),
        Candidate(2, session_id=20, relevance=0.56),
        Candidate(3, session_id=30, relevance=0.20),
    ]
    states = {10: ("decaying", 1.0), 20: ("idle", 0.1), 30: ("active", 1.0)}
    ranked = ranking.adjust_for_lifecycle(list(candidates), states, recency=False)
    assert [c.message_id for c in ranked] == [2, 1, 3]
    assert ranked[1].relevance == pytest.approx(0.60 * tuning.DECAYING_FACTOR)
    # Without a decaying session nothing changes: the same list, in the same order, ties
    # included.
    tied = [Candidate(5, session_id=30, relevance=0.2), Candidate(4, session_id=20, relevance=0.2)]
    assert ranking.adjust_for_lifecycle(tied, states, recency=False) == tied
    assert [c.relevance for c in tied] == [0.2, 0.2]


def test_mmr_skips_a_near_copy_of_what_it_already_picked():
    a, copy, other = np.eye(3)[0], np.eye(3)[0], np.eye(3)[1]
    candidates = [
        Candidate(1, chunk_id=1, relevance=1.0),
        Candidate(2, chunk_id=2, relevance=0.95),
        Candidate(3, chunk_id=3, relevance=0.8),
    ]
    picked = ranking.mmr(candidates, {1: a, 2: copy, 3: other}, limit=3)
    assert [c.message_id for c in picked] == [1, 3, 2]
    # What is shown is what MMR weighed: the copy is shown discounted, below the other.
    assert [c.relevance for c in picked][:2] == [1.0, 0.8]
    assert picked[2].relevance < 0.8


# --- the one score -----------------------------------------------------------------------


def scored(candidates, mode="hybrid", intent=None):
    return ranking.score(candidates, mode, intent)


def test_a_better_match_scores_higher_without_a_ceiling():
    # The old semantic measure stopped at a cosine of 0.55; the score keeps ordering above.
    close, closer = (
        Candidate(1, session_id=1, similarity=0.6),
        Candidate(2, session_id=2, similarity=0.8),
    )
    assert [c.message_id for c in scored([close, closer])] == [2, 1]
    assert 0 < close.relevance < closer.relevance < 1


def test_unrelated_text_scores_zero_and_words_raise_the_score():
    unrelated = Candidate(1, session_id=1, similarity=tuning.SIMILARITY_FLOOR - 0.05)
    worded = Candidate(2, session_id=2, similarity=0.3, coverage=1.0, keyword_score=0.2)
    bare = Candidate(3, session_id=3, similarity=0.3)
    scored([unrelated, worded, bare])
    assert unrelated.relevance == 0.0
    assert worded.relevance > bare.relevance > 0


def test_own_words_count_more_than_words_only_in_the_context():
    # Both hold every word (coverage 1), the answer as its own words (higher BM25 score),
    # the question before it only through its keyword context.
    answer = Candidate(1, session_id=1, similarity=0.3, coverage=1.0, keyword_score=0.3)
    question = Candidate(2, session_id=1, similarity=0.3, coverage=1.0, keyword_score=0.1)
    assert [c.message_id for c in scored([question, answer])] == [1, 2]


def test_session_support_lifts_a_match_among_other_matches():
    alone = Candidate(1, session_id=10, similarity=0.5)
    supported = Candidate(2, session_id=20, similarity=0.48)
    neighbours = [Candidate(m, session_id=20, similarity=0.45) for m in (3, 4)]
    assert scored([alone, supported, *neighbours])[0].message_id == 2


def test_noise_ranks_below_prose_for_the_same_match_unless_asked_for():
    def same_match():
        return [
            Candidate(1, session_id=1, similarity=0.5, kind="console"),
            Candidate(2, session_id=2, similarity=0.5, kind="injected"),
            Candidate(3, session_id=3, similarity=0.5, kind="tool_output"),
            Candidate(4, session_id=4, similarity=0.5, kind="prose"),
        ]

    assert scored(same_match())[0].message_id == 4
    wants_output = scored(same_match(), intent=QueryIntent(wants_output=True))
    assert {c.message_id for c in wants_output[:3]} == {1, 3, 4}
    assert wants_output[3].message_id == 2
    wants_injected = scored(same_match(), intent=QueryIntent(wants_injected=True))
    assert {c.message_id for c in wants_injected[:2]} == {2, 4}


def test_memory_keys_lift_the_messages_they_point_to():
    pointed, other = (
        Candidate(1, session_id=1, similarity=0.4, rank_extra=1),
        Candidate(2, session_id=2, similarity=0.4),
    )
    assert [c.message_id for c in scored([other, pointed])] == [1, 2]


candidate_sets = st.lists(
    st.builds(
        Candidate,
        message_id=st.integers(1, 10_000),
        chunk_id=st.integers(1, 30),
        session_id=st.integers(1, 6),
        similarity=st.none() | st.floats(-1, 1),
        keyword_score=st.floats(0, 5),
        coverage=st.floats(0, 1),
        rank_extra=st.none() | st.integers(1, 50),
        kind=st.sampled_from(["prose", "injected", "console", "tool_output"]),
    ),
    max_size=60,
    unique_by=lambda c: c.message_id,
)


def non_increasing(values) -> bool:
    return all(a >= b for a, b in itertools.pairwise(values))


@settings(max_examples=200, deadline=None)
@given(
    candidates=candidate_sets,
    mode=st.sampled_from(["hybrid", "semantic", "keyword"]),
    intent=st.builds(QueryIntent, st.booleans(), st.booleans()),
    states=st.dictionaries(
        st.integers(1, 6),
        st.tuples(st.sampled_from(["active", "idle", "decaying"]), st.floats(0, 1)),
    ),
    recency=st.booleans(),
    use_mmr=st.booleans(),
    limit=st.integers(1, 20),
    seed=st.integers(0, 2**32 - 1),
)
def test_relevance_never_increases_down_the_list(
    candidates, mode, intent, states, recency, use_mmr, limit, seed
):
    ranked = ranking.score(candidates, mode, intent)
    ranked = ranking.adjust_for_lifecycle(ranked, states, recency=recency)
    if use_mmr:
        rng = np.random.default_rng(seed)
        vectors = {i: v / np.linalg.norm(v) for i, v in enumerate(rng.normal(size=(31, 4)))}
        ranked = ranking.mmr(ranked, vectors, limit)
    shown = [c.relevance for c in ranked]
    assert all(0.0 <= r <= 1.0 for r in shown)
    assert non_increasing(shown)
    groups = ranking.group(ranked, limit, 3)
    assert non_increasing([g[0].relevance for g in groups])
    assert all(non_increasing([c.relevance for c in g]) for g in groups)
