"""A question that uses a learned alias finds that speaker's messages (search/aliases.py),
only in the scope that learned it, and odd queries still work."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from search import aliases, keyword
from search.service import SearchRequest, search
from teams.access import Access
from teams.models import ApiToken
from tests.factories import ProjectFactory
from tests.search.corpus import embed_all, project_access
from tests.sessions.enrich.test_aliases import TWO_FRIENDS, chat

pytestmark = pytest.mark.django_db

KATE_VENUE = "The venue for the offsite is booked: the old mill by the river."
ROB_VENUE = "The venue for the offsite is not booked yet, I am still looking around."
QUESTION = "Where did Kate book the venue for the offsite?"


def office(project):
    """Kate ("katherine.s") and Rob ("rsmith") call each other by name in one chat; each
    talks about the offsite venue in another, with Lee, never named there."""
    chat(project, TWO_FRIENDS)
    chat(project, [("lee.w", "Any news on the offsite?"), ("katherine.s", KATE_VENUE)])
    chat(project, [("lee.w", "And the offsite venue?"), ("rsmith", ROB_VENUE)])
    embed_all()


def client_for(project) -> APIClient:
    _, raw = ApiToken.issue(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_a_question_naming_someone_by_their_alias_finds_their_message_through_the_api():
    project = ProjectFactory()
    office(project)
    response = client_for(project).get("/api/v1/search", {"q": QUESTION, "limit": 5})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert results[0]["message"]["author"] == "katherine.s"
    assert results[0]["snippet"].startswith("The venue for the offsite is booked")
    rob = next(r for r in results if r["message"]["author"] == "rsmith")
    assert results[0]["relevance"] > rob["relevance"]


def test_the_alias_matches_as_one_word_with_its_speakers_name(monkeypatch):
    project = ProjectFactory()
    office(project)
    found = aliases.expansions(project_access(project), QUESTION)
    assert [(e.alias, e.speaker) for e in found] == [("kate", "katherine.s")]
    assert aliases.with_speakers(QUESTION, found) == QUESTION.replace("Kate", "katherine.s")
    kquery = keyword.parse(QUESTION, aliases.keyword_alternatives(found))
    assert kquery.term_query("kate") == "('kate' | ('katherine.s'))"
    result = search(project_access(project), SearchRequest(QUESTION, mode="keyword"))
    kate = next(h for h in result.hits if h.message.author == "katherine.s")
    rob = next(h for h in result.hits if h.message.author == "rsmith")
    assert kate.keyword_coverage > rob.keyword_coverage
    # The pooled ranking of big scopes, on estimated word statistics, expands the same way.
    monkeypatch.setattr(keyword, "EXACT_STATS_MAX_DOCS", 0)
    pooled = search(project_access(project), SearchRequest(QUESTION, mode="keyword"))
    assert pooled.hits[0].message.author == "katherine.s"


def test_another_teams_aliases_never_apply():
    learned_here, elsewhere = ProjectFactory(), ProjectFactory()
    office(learned_here)
    # The other team has people of the same display names, who never called each other.
    chat(elsewhere, [("lee.w", "Any news on the offsite?"), ("katherine.s", KATE_VENUE)])
    chat(elsewhere, [("lee.w", "And the offsite venue?"), ("rsmith", ROB_VENUE)])
    assert aliases.expansions(project_access(elsewhere), QUESTION) == ()
    assert aliases.expansions(Access(team_ids=(elsewhere.team_id,)), QUESTION) == ()
    # Its own team's member (every project of the team) has them.
    assert aliases.expansions(Access(team_ids=(learned_here.team_id,)), QUESTION)
    same_team_other_project = ProjectFactory(team=learned_here.team)
    assert aliases.expansions(project_access(same_team_other_project), QUESTION) == ()


def test_the_lookup_is_one_query_and_none_without_words(django_assert_num_queries):
    project = ProjectFactory()
    access = project_access(project)
    with django_assert_num_queries(1):
        aliases.expansions(access, QUESTION)
    with django_assert_num_queries(0):
        assert aliases.expansions(access, "🚀 ✅ 42") == ()


@pytest.mark.parametrize(
    "query",
    ["", "the", "🚀", "Kate 🚀", "Кейт забронировала?", "ケイトはどこ", "kate kate KATE", "'Kate'"],
)
def test_any_query_still_works_with_aliases_learned(query):
    project = ProjectFactory()
    office(project)
    response = client_for(project).get("/api/v1/search", {"q": query or " "})
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert query.strip() == ""  # only an empty query is refused


def test_the_aliases_list_shows_the_callers_projects_only(team, owner, teammate, outsider):
    project = ProjectFactory(team=team)
    chat(project, TWO_FRIENDS)
    elsewhere = ProjectFactory()
    chat(elsewhere, TWO_FRIENDS)

    def listing(client, **params):
        response = client.get("/api/v1/aliases", params)
        assert response.status_code == 200, response.content
        return {(a["alias"], a["speaker"], a["used"]) for a in response.json()["results"]}

    expected = {("Kate", "katherine.s", True), ("Rob", "rsmith", True)}
    for person in (owner, teammate):
        client = APIClient()
        client.force_authenticate(person)
        assert expected <= listing(client)
        assert listing(client) == listing(client, project=f"{project.team.slug}/{project.slug}")
    assert expected <= listing(client_for(project))
    stranger = APIClient()
    stranger.force_authenticate(outsider)
    assert listing(stranger) == set()
    assert stranger.get("/api/v1/aliases", {"project": str(project.pk)}).status_code == 404
    assert listing(client_for(ProjectFactory(team=project.team))) == set()
