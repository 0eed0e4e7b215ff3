"""Fusion, relevance, lifecycle and recency, and MMR as pure functions (search/ranking.py)."""

import math

import numpy as np
import pytest

from search import ranking
from search.ranking import Candidate
from sessions.forget import decay


def order(candidates: list[Candidate], mode: str = "hybrid") -> list[int]:
    return [c.message_id for c in ranking.fuse(candidates, mode)]


def test_a_message_both_sides_found_beats_one_found_by_a_single_side():
    both = Candidate(1, session_id=10, rank_vector=3, rank_keyword=3)
    vector_only = Candidate(2, session_id=20, rank_vector=1)
    keyword_only = Candidate(3, session_id=30, rank_keyword=1)
    assert order([vector_only, keyword_only, both])[0] == 1


def test_rrf_value_without_session_neighbours():
    alone = Candidate(1, session_id=10, rank_vector=2, rank_keyword=5)
    ranking.fuse([alone], "hybrid")
    rrf = ranking.VECTOR_WEIGHT / (ranking.RRF_K + 2) + ranking.KEYWORD_WEIGHT / (ranking.RRF_K + 5)
    assert alone.fused == pytest.approx(rrf * (1 + ranking.SESSION_BOOST))


def test_a_session_matching_several_times_outranks_one_lucky_hit():
    # Session 10 has the single best match; session 20 has three a little lower. Its best
    # message comes first: the boost adds up the session's best matches, not only its top.
    lucky = Candidate(1, session_id=10, rank_vector=1)
    several = [Candidate(m, session_id=20, rank_vector=r) for m, r in ((2, 2), (3, 3), (4, 4))]
    assert order([lucky, *several])[0] == 2


def test_the_session_boost_counts_only_the_best_few():
    # Ten weak matches must not add up to more than SESSION_BEST of them.
    weak = [Candidate(m, session_id=20, rank_vector=40 + m) for m in range(10)]
    ranking.fuse(weak, "semantic")
    best = sorted((1 / (ranking.RRF_K + 40 + m) for m in range(10)), reverse=True)
    boost = ranking.SESSION_BOOST * sum(best[: ranking.SESSION_BEST])
    assert weak[0].fused == pytest.approx(best[0] + boost)


def test_modes_fuse_only_their_own_side():
    vector_first = Candidate(1, session_id=10, rank_vector=1, rank_keyword=9)
    keyword_first = Candidate(2, session_id=20, rank_vector=9, rank_keyword=1)
    assert order([vector_first, keyword_first], "semantic") == [1, 2]
    assert order([vector_first, keyword_first], "keyword") == [2, 1]


def test_relevance_maps_similarity_and_lifts_by_keyword_coverage():
    at_floor = Candidate(1, similarity=ranking.SIMILARITY_FLOOR)
    at_ceil = Candidate(2, similarity=ranking.SIMILARITY_CEIL)
    half = Candidate(3, similarity=(ranking.SIMILARITY_FLOOR + ranking.SIMILARITY_CEIL) / 2)
    assert ranking.relevance(at_floor, "semantic") == 0.0
    assert ranking.relevance(at_ceil, "semantic") == 1.0
    assert ranking.relevance(half, "semantic") == pytest.approx(0.5)
    half.coverage = 1.0
    assert ranking.relevance(half, "hybrid") == pytest.approx(0.5 + 0.5 * ranking.KEYWORD_LIFT)
    assert ranking.relevance(half, "keyword") == 1.0
    words_only = Candidate(4, coverage=0.6)  # found by keyword alone: no vector
    assert ranking.relevance(words_only, "hybrid") == pytest.approx(ranking.KEYWORD_LIFT * 0.6)


def test_recency_priority_follows_seed_001():
    assert decay.priority(0, 0, 0) == 1.0
    expected = math.exp(-0.05 * 10) * math.exp(-0.01 * 20) + 0.05
    assert decay.priority(10, 20, 5) == pytest.approx(expected)
    # The access bonus is capped at 0.2, the whole at 1.
    assert decay.priority(1000, 1000, 500) == pytest.approx(0.2, abs=1e-6)
    assert decay.priority(0, 0, 50) == 1.0


def test_recency_reorders_equal_matches_by_the_stored_priority():
    old, new = Candidate(1, session_id=10, fused=0.1), Candidate(2, session_id=20, fused=0.1)
    states = {10: ("active", 0.1), 20: ("active", 0.9)}
    ranked = ranking.adjust_for_lifecycle([old, new], states, recency=True)
    assert [c.message_id for c in ranked] == [2, 1]


def test_decaying_sessions_rank_lower_and_others_keep_the_fusions_order():
    candidates = [
        Candidate(1, session_id=10, fused=0.30),
        Candidate(2, session_id=20, fused=0.28),
        Candidate(3, session_id=30, fused=0.10),
    ]
    states = {10: ("decaying", 1.0), 20: ("idle", 0.1), 30: ("active", 1.0)}
    ranked = ranking.adjust_for_lifecycle(list(candidates), states, recency=False)
    assert [c.message_id for c in ranked] == [2, 1, 3]
    assert ranked[1].fused == pytest.approx(0.30 * ranking.DECAYING_FACTOR)
    # Without a decaying session nothing changes: the same list, in the same order, ties
    # included (so results on fresh data are exactly the fusion's).
    tied = [Candidate(5, session_id=30, fused=0.2), Candidate(4, session_id=20, fused=0.2)]
    assert ranking.adjust_for_lifecycle(tied, states, recency=False) == tied
    assert [c.fused for c in tied] == [0.2, 0.2]


def test_mmr_skips_a_near_copy_of_what_it_already_picked():
    a, copy, other = np.eye(3)[0], np.eye(3)[0], np.eye(3)[1]
    candidates = [
        Candidate(1, chunk_id=1, fused=1.0),
        Candidate(2, chunk_id=2, fused=0.95),
        Candidate(3, chunk_id=3, fused=0.8),
    ]
    picked = ranking.mmr(candidates, {1: a, 2: copy, 3: other}, limit=3)
    assert [c.message_id for c in picked] == [1, 3, 2]
