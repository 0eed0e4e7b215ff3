"""A keyword search for an emoji or another symbol finds it (issue 14 #15): PostgreSQL's
text-search parser drops symbols, so a query with no word falls back to a bounded substring
match over the team's messages; word queries do not change."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from search import keyword
from search.service import SearchRequest, search
from sessions.filters import Filters
from tests.factories import ProjectFactory
from tests.search.corpus import DEPLOY, capture, embed_all, project_access

pytestmark = pytest.mark.django_db

ROCKET = [
    ("user", "Is the release out?"),
    ("assistant", "🚀 deployed to production at noon, all pods healthy ✅"),
]
WORDS = [("user", "We deployed the fix yesterday; nothing to celebrate.")]


@pytest.fixture
def corpus(project):
    other_team = ProjectFactory()
    sessions = {
        "rocket": capture(project, ROCKET, agent="dev"),
        "words": capture(project, WORDS, agent="dev"),
        "deploy": capture(project, DEPLOY, agent="dev"),
        "outsider": capture(other_team, [("user", "🚀 our own launch, another team")]),
    }
    embed_all()
    return sessions


def run(project, query, **options):
    filters = options.pop("filters", Filters())
    return search(project_access(project), SearchRequest(query, filters=filters, **options))


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_an_emoji_finds_the_message_that_holds_it_and_only_in_the_team(project, corpus, mode):
    result = run(project, "🚀", mode=mode)
    top = result.hits[0]
    assert top.session == corpus["rocket"]
    assert top.message.seq == 1
    assert top.keyword_coverage == 1.0
    assert "🚀" in top.snippet.text
    assert corpus["outsider"] not in {h.session for h in result.hits}
    if mode == "keyword":
        assert [h.session for h in result.hits] == [corpus["rocket"]]


def test_several_symbols_rank_the_message_holding_most_of_them_first(project, corpus):
    capture(project, [("user", "only the check ✅ here")], agent="qa")
    result = run(project, "✅ 🚀", mode="keyword", limit=5)
    assert result.hits[0].session == corpus["rocket"]
    assert result.hits[0].keyword_coverage == 1.0
    assert result.hits[1].keyword_coverage == 0.5


def test_filters_apply_to_the_symbol_search(project, corpus):
    result = run(project, "🚀", mode="keyword", filters=Filters(agent="someone-else"))
    assert result.hits == []


def test_the_symbol_search_reads_only_the_latest_messages(project, corpus, monkeypatch):
    monkeypatch.setattr(keyword, "SYMBOL_SCAN_MESSAGES", 2)  # the DEPLOY session's two
    assert run(project, "🚀", mode="keyword").hits == []


def test_word_queries_never_take_the_symbol_path(project, corpus):
    assert keyword.symbols_of("🚀 deployed") == ("🚀",)
    words = keyword.parse("🚀 deployed")
    assert words.terms == ("deploy",) and words.symbols == ()
    stop_word = keyword.parse("the")
    assert stop_word.terms == () and stop_word.symbols == () and stop_word.empty
    with CaptureQueriesContext(connection) as queries:
        result = run(project, "deployed", mode="keyword", limit=10)
    assert {h.session for h in result.hits} >= {corpus["rocket"], corpus["words"]}
    assert not any("strpos" in q["sql"] for q in queries.captured_queries)


def test_over_the_api_too(project, corpus):
    from rest_framework.test import APIClient

    from teams.models import ApiToken

    _, raw = ApiToken.issue(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    for mode in ("keyword", "hybrid"):
        response = client.get("/api/v1/search", {"q": "🚀", "mode": mode})
        assert response.status_code == 200, response.content
        top = response.json()["results"][0]
        assert top["session"]["id"] == corpus["rocket"].public_id
