"""Hybrid search with the real model and real PostgreSQL: what it finds, how it scores,
what its filters do, and that it never crosses a team."""

from __future__ import annotations

import pytest

from search import semantic, tuning
from search.service import SearchRequest, search, sessions_with_entity
from search.speed import team_indexes
from sessions.filters import Filters
from sessions.forget.lifecycle import soft_delete
from sessions.models import Message
from teams.access import Access
from tests.factories import EntityFactory, ProjectFactory, TeamFactory
from tests.search.corpus import (
    AUTH,
    COOKING,
    DEPLOY,
    build_team_indexes,
    capture,
    embed_all,
    project_access,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project):
    sessions = {
        "auth": capture(project, AUTH, agent="architect", workflow="security", topics=["auth"]),
        "deploy": capture(project, DEPLOY, agent="dev", workflow="release", days_ago=30),
        "cooking": capture(project, COOKING, agent="chef"),
    }
    embed_all()
    return sessions


def run(project, query, **options):
    filters = options.pop("filters", Filters())
    return search(project_access(project), SearchRequest(query, filters=filters, **options))


def test_hybrid_finds_a_paraphrase_with_no_shared_words(project, corpus):
    result = run(project, "how was the authentication problem solved?")
    assert all(h.keyword_coverage == 0 for h in result.hits)  # no word in common
    assert result.hits[0].session == corpus["auth"]
    assert {h.session for h in result.hits[:2]} == {corpus["auth"]}


def test_keyword_mode_matches_words_and_highlights_them(project, corpus):
    result = run(project, "kubernetes registry", mode="keyword")
    # The message with the words first; the question before it matches through its context.
    assert [h.session for h in result.hits] == [corpus["deploy"]] * 2
    assert [h.message.seq for h in result.hits] == [1, 0]
    assert result.hits[1].snippet.highlights == []
    snippet = result.hits[0].snippet
    marked = {snippet.text[s:e].lower() for s, e in snippet.highlights}
    assert marked == {"kubernetes", "registry"}
    assert "<mark>Kubernetes</mark>" in snippet.html()


def test_rare_words_outweigh_common_ones(project):
    # Equal-length messages; "deploy" is in six of them, "risotto" in one: a query naming
    # both must put the risotto message first (plain ts_rank would tie them).
    common = [("user", f"note {i}: the deploy finished fine") for i in range(5)]
    capture(project, [*common, ("user", "note: the risotto finished fine")])
    result = run(project, "deploy risotto", mode="keyword", limit=10)
    assert "risotto" in result.hits[0].snippet.text
    assert len(result.hits) == 6


def test_relevance_is_between_0_and_1_and_higher_for_the_better_match(project, corpus):
    result = run(project, "JWT bearer tokens signed with RS256")
    relevances = [h.relevance for h in result.hits]
    assert all(0 <= r <= 1 for r in relevances)
    assert result.hits[0].session == corpus["auth"]
    assert relevances[0] > 0.6
    unrelated = [h for h in result.hits if h.session == corpus["cooking"]]
    assert all(h.relevance < 0.3 for h in unrelated)


def test_min_relevance_drops_weak_matches(project, corpus):
    everything = run(project, "JWT tokens", limit=20)
    strong = run(project, "JWT tokens", limit=20, min_relevance=0.5)
    assert 0 < len(strong.hits) < len(everything.hits)
    assert all(h.relevance >= 0.5 for h in strong.hits)


def test_filters_narrow_by_agent_workflow_topic_and_role(project, corpus):
    by_agent = run(project, "tokens", filters=Filters(agent="Dev"))
    assert {h.session for h in by_agent.hits} == {corpus["deploy"]}
    by_topic = run(project, "tokens", filters=Filters(topic="auth"))
    assert {h.session for h in by_topic.hits} == {corpus["auth"]}
    by_role = run(project, "tokens", filters=Filters(role="user"), limit=50)
    assert {h.message.role for h in by_role.hits} == {"user"}
    by_workflow = run(project, "dinner", filters=Filters(workflow="release"))
    assert {h.session for h in by_workflow.hits} == {corpus["deploy"]}


def test_entity_filter_and_search_by_entity(project, corpus):
    EntityFactory(
        session=corpus["auth"],
        type="FILE",
        value="src/auth.py",
    )
    result = run(project, "tokens", filters=Filters(entity_type="FILE", entity="src/auth.py"))
    assert {h.session for h in result.hits} == {corpus["auth"]}
    scope = project_access(project)
    touched = sessions_with_entity(scope, Filters(entity="SRC/auth.py"), limit=10)
    assert [s.session for s in touched] == [corpus["auth"]]


def test_group_by_session_returns_each_session_once(project, corpus):
    result = run(project, "tokens refresh JWT login", group_by_session=True, limit=2)
    assert len(result.sessions) == 2
    assert result.sessions[0].session == corpus["auth"]
    assert len({s.session for s in result.sessions}) == 2
    assert 1 <= len(result.sessions[0].hits) <= 3


def test_web_search_syntax_phrase_and_exclusion(project, corpus):
    phrase = run(project, '"white wine"', mode="keyword")
    assert [h.session for h in phrase.hits] == [corpus["cooking"]]
    excluded = run(project, "tokens -refresh", mode="keyword", limit=20)
    assert excluded.hits
    assert all("refresh" not in h.snippet.text.lower() for h in excluded.hits)


def test_deleted_sessions_are_not_searched(project, corpus):
    soft_delete(corpus["auth"])
    result = run(project, "JWT bearer tokens", limit=20)
    assert corpus["auth"] not in {h.session for h in result.hits}


@pytest.mark.parametrize("path", ["exact", "quantized", "hnsw", "team-hnsw"])
def test_another_teams_data_is_never_found(project, corpus, monkeypatch, path):
    if path != "exact":
        approximate_path(monkeypatch, path)
    other = ProjectFactory(team=TeamFactory())
    capture(other, [("user", "JWT bearer tokens signed with RS256 in the other team")])
    embed_all()
    result = run(project, "JWT bearer tokens signed with RS256", limit=50)
    assert result.vector_path == path
    assert all(h.session.team_id == project.team_id for h in result.hits)
    theirs = run(other, "JWT bearer tokens signed with RS256", limit=50)
    assert {h.session.project_id for h in theirs.hits} == {other.pk}


def approximate_path(monkeypatch, path: str) -> None:
    """Send every scope down the quantized, the HNSW or (with every team that has messages
    given its own indexes) the team-HNSW path."""
    monkeypatch.setattr(tuning, "EXACT_SCAN_MAX_CHUNKS", 0)
    if path == "hnsw":
        monkeypatch.setattr(tuning, "QUANTIZED_MAX_CHUNKS", 0)
    if path == "team-hnsw":
        monkeypatch.setattr(team_indexes, "min_messages", lambda: 1)
        assert build_team_indexes()
    team_indexes.forget()


@pytest.fixture(autouse=True)
def no_cached_team_indexes():
    team_indexes.forget()
    yield
    team_indexes.forget()


@pytest.mark.parametrize("path", ["quantized", "hnsw", "team-hnsw"])
def test_approximate_paths_find_what_the_exact_scan_finds(project, corpus, monkeypatch, path):
    exact = run(project, "deploying to production", mode="semantic", limit=5)
    approximate_path(monkeypatch, path)
    approximate = run(project, "deploying to production", mode="semantic", limit=5)
    assert exact.vector_path == "exact" and approximate.vector_path == path
    assert [h.message.pk for h in approximate.hits] == [h.message.pk for h in exact.hits]
    assert [h.similarity for h in approximate.hits] == [h.similarity for h in exact.hits]


def add_distractors(project) -> None:
    """200 near-copies in another project of the same team (another agent, role user)."""
    distractor = ProjectFactory(team=project.team)
    for i in range(20):
        capture(distractor, [("user", f"deploy note {i}: shipped build {i} to production")] * 10)
    embed_all()


def test_quantized_path_applies_filters_before_choosing(project, corpus, monkeypatch):
    add_distractors(project)
    approximate_path(monkeypatch, "quantized")
    wanted = Message.objects.filter(session=corpus["deploy"], role="assistant")
    result = run(
        project,
        "deploying to production",
        mode="semantic",
        limit=10,
        filters=Filters(agent="dev", role="assistant"),
    )
    assert result.vector_path == "quantized"
    assert {h.message.pk for h in result.hits} == set(wanted.values_list("pk", flat=True))
    assert wanted.exists()


@pytest.mark.parametrize("path", ["hnsw", "team-hnsw"])
def test_selective_filter_on_the_hnsw_path_still_fills_the_page(project, corpus, monkeypatch, path):
    add_distractors(project)  # the filter keeps 2 of 202 messages
    approximate_path(monkeypatch, path)
    result = run(
        project, "deploying to production", mode="semantic", limit=10, filters=Filters(agent="dev")
    )
    assert len(result.hits) == Message.objects.filter(session=corpus["deploy"]).count()


def test_a_small_share_of_an_indexed_team_is_not_sent_to_its_graph(project, corpus, monkeypatch):
    # The team graph is scanned for 3x the chunks wanted, filters after: a project of 8 of
    # the team's 208 messages would come up short there, so it takes the quantized path.
    add_distractors(project)
    approximate_path(monkeypatch, "team-hnsw")
    assert project.team_id in team_indexes.indexed_teams()
    ours = run(project, "deploying to production", mode="semantic", limit=5)
    assert ours.vector_path == "quantized"
    whole_team = search(
        Access(team_ids=(project.team_id,)),
        SearchRequest("deploying to production", mode="semantic", limit=5),
    )
    assert whole_team.vector_path == "team-hnsw"
    assert len(whole_team.hits) == 5


def test_team_graph_is_read_only_as_far_as_the_scope_needs(project, corpus, monkeypatch):
    add_distractors(project)
    approximate_path(monkeypatch, "team-hnsw")
    chunks = team_indexes.indexed_teams()[project.team_id]
    team = Access(team_ids=(project.team_id,))
    whole = semantic.team_overfetch(team, Filters(), chunks)
    half = semantic.team_overfetch(team, Filters(), chunks // 2)
    assert whole == tuning.TEAM_OVERFETCH_MARGIN
    assert half == pytest.approx(min(tuning.HNSW_OVERFETCH, 2 * whole), rel=0.02)
    # A role filter is not in the scope's count: the full overfetch.
    with_role = semantic.team_overfetch(team, Filters(role="assistant"), chunks)
    assert with_role == tuning.HNSW_OVERFETCH
    # And a whole-team search with the smaller fetch still finds what the exact scan does.
    request = SearchRequest("deploying to production", mode="semantic", limit=5)
    fast = search(team, request)
    monkeypatch.setattr(tuning, "EXACT_SCAN_MAX_CHUNKS", 10**9)
    exact = search(team, request)
    assert fast.vector_path == "team-hnsw" and exact.vector_path == "exact"
    # (The distractors repeat their texts: equal distances may come in either order.)
    assert [h.similarity for h in fast.hits] == [h.similarity for h in exact.hits]


def test_mmr_spreads_results_over_different_exchanges(project, corpus):
    copies = capture(project, [("assistant", "JWT bearer tokens are verified in src/auth.py.")] * 6)
    embed_all()
    plain = run(project, "JWT bearer tokens", limit=4)
    diverse = run(project, "JWT bearer tokens", limit=4, mmr=True)
    assert sum(h.session == copies for h in plain.hits) > sum(
        h.session == copies for h in diverse.hits
    )


def test_any_language_and_script(project):
    capture(
        project, [("user", "数据库连接池在高负载下耗尽了"), ("user", "Die Datenbank ist langsam")]
    )
    embed_all()
    for query in ("数据库连接池", "Datenbank", "база данных"):
        result = run(project, query)
        assert result.hits, query


def test_large_scopes_estimate_word_statistics_and_rank_a_pool(project, corpus, monkeypatch):
    from django.db import connection

    from search import keyword

    exact = run(project, "kubernetes registry for the release", mode="keyword", limit=3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_sessions_message")
    keyword._stats_cache["at"] = float("-inf")
    monkeypatch.setattr(keyword, "EXACT_STATS_MAX_DOCS", 0)  # every scope is "large"
    pooled = run(project, "kubernetes registry for the release", mode="keyword", limit=3)
    assert [h.message.pk for h in pooled.hits][:1] == [h.message.pk for h in exact.hits][:1]
    assert pooled.hits[0].session == corpus["deploy"]
    nothing_known = run(project, "zyxwvut qwertyuiop", mode="keyword")
    assert nothing_known.hits == []


def test_or_in_a_question_does_not_make_it_strict(project, corpus):
    # As web-search syntax this would need "risotto" and "kubernetes" in one message.
    result = run(project, "was it the risotto or kubernetes and redis", mode="keyword", limit=10)
    found = {h.session for h in result.hits}
    assert {corpus["cooking"], corpus["deploy"], corpus["auth"]} <= found


@pytest.mark.django_db(transaction=True)
def test_hybrid_search_runs_its_keyword_side_beside_on_its_own_connection(
    project, monkeypatch, settings
):
    import threading

    from search import service
    from search.speed import parallel

    capture(project, AUTH, agent="architect")
    capture(project, DEPLOY, agent="dev")
    embed_all()
    ran_on = []
    original = service._keyword_side

    def spy(*args):
        ran_on.append(threading.current_thread().name)
        return original(*args)

    monkeypatch.setattr(service, "_keyword_side", spy)
    settings.SEARCH_CONCURRENCY = 0
    in_turn = run(project, "how do we ship the release to kubernetes", limit=5)
    settings.SEARCH_CONCURRENCY = 2
    try:
        beside = run(project, "how do we ship the release to kubernetes", limit=5)
    finally:
        parallel.shutdown()
    assert ran_on[0] == threading.current_thread().name
    assert ran_on[1].startswith("search-beside")
    assert [(h.message.pk, h.relevance) for h in beside.hits] == [
        (h.message.pk, h.relevance) for h in in_turn.hits
    ]
    assert beside.hits[0].session.agent_name == "dev"
