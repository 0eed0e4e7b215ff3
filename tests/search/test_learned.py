"""The learned ranker (search/learned.py): its features come from the candidate pool alone,
its order is its score's, the relevance it shows never goes up the list, the shipped file
matches the features, and the setting decides whether search uses it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search import learned
from search.query_intent import QueryIntent
from search.ranking import Candidate


def feature(row: np.ndarray, name: str) -> float:
    return float(row[learned.FEATURES.index(name)])


def spec(weights: dict[str, float]) -> dict:
    n = len(learned.FEATURES)
    return {
        "features": list(learned.FEATURES),
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "weights": [weights.get(f, 0.0) for f in learned.FEATURES],
        "relevance": {"a": 1.0, "b": 0.0},
    }


def test_no_candidates_no_rows():
    assert learned.features([], QueryIntent(), set()).shape == (0, len(learned.FEATURES))


def test_features_come_from_the_pool():
    pool = [
        Candidate(1, session_id=1, similarity=0.6, keyword_score=2.0, coverage=1.0, rank_vector=1,
                  rank_keyword=1, author="Kate", first_person=True, role="user", length=99),
        Candidate(2, session_id=1, similarity=None, keyword_score=1.0, coverage=0.5,
                  rank_keyword=2, author="Rob", role="user", kind="tool_output"),
        Candidate(3, session_id=2, similarity=0.3, author="Kate", question=True, first_person=True,
                  says_when=True, role="assistant", rank_vector=2),
    ]  # fmt: skip
    rows = learned.features(pool, QueryIntent(asks_when=True), {"Kate"})
    kate, rob, kate_asks = rows
    assert feature(kate, "similarity_gap") == 0.0
    assert feature(kate_asks, "similarity_gap") == pytest.approx(-0.3)
    assert feature(rob, "no_vector") == 1.0 and feature(rob, "similarity") == 0.0
    assert feature(rob, "keyword_ratio") == 0.5 and feature(rob, "keyword_strength") == 0.25
    assert feature(kate, "keyword_rrank") == 1.0 and feature(kate_asks, "keyword_rrank") == 0.0
    # Session 1 holds two candidates, session 2 one.
    assert (
        feature(kate, "session_hits")
        == feature(rob, "session_hits")
        > feature(kate_asks, "session_hits")
    )
    assert feature(kate, "session_similarity") == pytest.approx(0.3)  # (0.6 + 0) / 2
    assert feature(kate, "named_self_statement") == 1.0
    assert feature(kate_asks, "named_self_statement") == 0.0  # a question states nothing
    assert feature(rob, "by_other_when_named") == 1.0 and feature(rob, "by_named") == 0.0
    assert feature(rob, "noise_not_asked") == 1.0
    assert feature(kate_asks, "when_says_when") == 1.0
    assert feature(kate, "log_length") == pytest.approx(np.log1p(99))


def test_asking_for_output_keeps_tool_output_unmarked():
    pool = [Candidate(1, kind="tool_output"), Candidate(2, kind="injected")]
    rows = learned.features(pool, QueryIntent(wants_output=True), set())
    assert feature(rows[0], "noise_not_asked") == 0.0
    assert feature(rows[1], "noise_not_asked") == 1.0


pools = st.lists(
    st.tuples(st.floats(-1, 1), st.floats(0, 1), st.integers(1, 3)), min_size=1, max_size=30
).map(
    lambda items: [
        Candidate(i, session_id=s, similarity=sim, coverage=cov, keyword_score=cov)
        for i, (sim, cov, s) in enumerate(items)
    ]
)


@given(pool=pools, w_sim=st.floats(-5, 5), w_cov=st.floats(-5, 5))
def test_the_order_is_the_scores_and_relevance_never_rises_down_the_list(pool, w_sim, w_cov):
    model = learned.Model(spec({"similarity": w_sim, "coverage": w_cov}))
    ids = sorted(c.message_id for c in pool)
    ranked = learned.rank(pool, QueryIntent(), set(), model)
    assert sorted(c.message_id for c in ranked) == ids
    values = [c.relevance for c in ranked]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values, reverse=True)


def test_a_model_of_other_features_is_refused():
    wrong = spec({})
    wrong["features"] = wrong["features"][:-1]
    with pytest.raises(ValueError, match="retrain"):
        learned.Model(wrong)


def test_the_shipped_model_matches_the_features():
    model = learned.model()
    assert len(model.weights) == len(learned.FEATURES)
    assert np.all(model.scale > 0)
    assert model.a > 0  # a higher score shows a higher relevance


def test_the_setting_decides(settings):
    settings.SEARCH_LEARNED_RANKING = False
    assert not learned.enabled()
    settings.SEARCH_LEARNED_RANKING = True
    assert learned.enabled()


@pytest.mark.django_db
def test_search_orders_by_the_model_when_the_setting_is_on(project, settings, monkeypatch):
    from search.service import SearchRequest, search
    from tests.search.corpus import AUTH, COOKING, DEPLOY, capture, embed_all, project_access

    auth = capture(project, AUTH, agent="architect")
    capture(project, DEPLOY, agent="dev")
    capture(project, COOKING, agent="chef")
    embed_all()
    settings.SEARCH_LEARNED_RANKING = True
    used = []
    monkeypatch.setattr(learned, "rank", lambda *a, **k: used.append(1) or rank(*a, **k))
    result = search(project_access(project), SearchRequest("how was the authentication solved?"))
    assert used == [1]
    assert result.hits[0].session == auth
    relevance = [h.relevance for h in result.hits]
    assert relevance == sorted(relevance, reverse=True)
    settings.SEARCH_LEARNED_RANKING = False
    search(project_access(project), SearchRequest("how was the authentication solved?"))
    assert used == [1]  # off: the hand-set score


rank = learned.rank
