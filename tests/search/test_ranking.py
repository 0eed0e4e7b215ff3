"""Fusion, relevance, recency and MMR as pure functions (search/ranking.py)."""

import math

import numpy as np
import pytest

from search import ranking
from search.ranking import Candidate


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
    assert ranking.recency_priority(0, 0, 0) == 1.0
    expected = math.exp(-0.05 * 10) * math.exp(-0.01 * 20) + 0.05
    assert ranking.recency_priority(10, 20, 5) == pytest.approx(expected)
    # The access bonus is capped at 0.2, the whole at 1.
    assert ranking.recency_priority(1000, 1000, 500) == pytest.approx(0.2, abs=1e-6)
    assert ranking.recency_priority(0, 0, 50) == 1.0


def test_recency_reorders_equal_matches():
    old, new = Candidate(1, fused=0.1), Candidate(2, fused=0.1)
    assert [c.message_id for c in ranking.apply_recency([old, new], {1: 0.1, 2: 0.9})] == [2, 1]


def test_mmr_skips_a_near_copy_of_what_it_already_picked():
    a, copy, other = np.eye(3)[0], np.eye(3)[0], np.eye(3)[1]
    candidates = [
        Candidate(1, chunk_id=1, fused=1.0),
        Candidate(2, chunk_id=2, fused=0.95),
        Candidate(3, chunk_id=3, fused=0.8),
    ]
    picked = ranking.mmr(candidates, {1: a, 2: copy, 3: other}, limit=3)
    assert [c.message_id for c in picked] == [1, 3, 2]
