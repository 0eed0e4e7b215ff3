"""The search and context API over HTTP: shapes, scoping, and clear 400s for bad input."""

from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from sessions.models import Session
from teams.models import ApiToken
from tests.factories import EntityFactory, ProjectFactory
from tests.reads import flush_reads
from tests.search.corpus import AUTH, COOKING, DEPLOY, capture, embed_all

pytestmark = pytest.mark.django_db


def client_for(project) -> APIClient:
    _, raw = ApiToken.issue(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def corpus(project):
    sessions = {
        "auth": capture(project, AUTH, agent="architect", workflow="security", title="Auth fix"),
        "deploy": capture(project, DEPLOY, agent="dev", workflow="release"),
        "cooking": capture(project, COOKING, agent="chef"),
    }
    embed_all()
    return sessions


@pytest.fixture
def agent(project):
    return client_for(project)


def test_search_returns_hits_with_session_message_snippet_and_relevance(agent, corpus):
    response = agent.get("/api/v1/search", {"q": "JWT signature middleware"})
    assert response.status_code == 200, response.content
    body = response.json()
    top = body["results"][0]
    assert top["session"]["id"] == corpus["auth"].public_id
    assert top["session"]["title"] == "Auth fix"
    assert top["message"]["seq"] == 1 and top["message"]["role"] == "assistant"
    assert 0.5 < top["relevance"] <= 1
    start, end = top["highlights"][0]
    assert top["snippet"][start:end].lower() in {"jwt", "signature", "middleware"}


def test_post_search_with_json_body_and_grouping(agent, corpus):
    response = agent.post(
        "/api/v1/search", {"q": "tokens", "group": True, "limit": 2}, format="json"
    )
    assert response.status_code == 200, response.content
    sessions = response.json()["sessions"]
    assert sessions[0]["session"]["id"] == corpus["auth"].public_id
    assert len({s["session"]["id"] for s in sessions}) == len(sessions)


def test_search_by_entity_without_a_query(agent, project, corpus):
    EntityFactory(
        session=corpus["deploy"],
        type="COMMAND",
        value="make release",
    )
    response = agent.get("/api/v1/search", {"entity_type": "COMMAND", "entity": "make release"})
    assert response.status_code == 200
    assert [s["session"]["id"] for s in response.json()["sessions"]] == [corpus["deploy"].public_id]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": ""}, "q"),
        ({"q": "x" * 100_000}, "q"),
        ({"q": "tokens", "limit": "-1"}, "limit"),
        ({"q": "tokens", "limit": "100000"}, "limit"),
        ({"q": "tokens", "mode": "psychic"}, "mode"),
        ({"q": "tokens", "entity_type": "PLANET"}, "entity_type"),
        ({"q": "tokens", "min_relevance": "2"}, "min_relevance"),
        ({"q": "tokens", "started_after": "yesterday"}, "started_after"),
        ({"q": "tokens", "colour": "blue"}, "detail"),
        (
            {"q": "tokens", "started_after": "2025-02-01", "started_before": "2025-01-01"},
            "started_before",
        ),
    ],
)
def test_bad_search_input_is_a_400_naming_the_field(agent, corpus, params, field):
    response = agent.post("/api/v1/search", params, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()


@pytest.mark.parametrize(
    "query", ['"unclosed phrase', "-", "or or or", "a & b | !c", "((", "'", "\\", ":*"]
)
def test_malformed_search_syntax_never_fails(agent, corpus, query):
    response = agent.get("/api/v1/search", {"q": query})
    assert response.status_code == 200, response.content


def test_another_teams_session_is_a_404_everywhere(agent, corpus):
    theirs = capture(ProjectFactory(), [("user", "their secret plan")])
    for url in (
        f"/api/v1/sessions/{theirs.public_id}/similar",
        f"/api/v1/sessions/{theirs.public_id}/resume",
    ):
        assert agent.get(url).status_code == 404, url
    response = agent.get("/api/v1/search", {"q": "their secret plan", "mode": "keyword"})
    assert response.json()["results"] == []


def test_an_agent_token_cannot_search_another_project(agent, project, corpus):
    other = ProjectFactory(team=project.team)
    response = agent.get(
        "/api/v1/search", {"q": "tokens", "project": f"{project.team.slug}/{other.slug}"}
    )
    assert response.status_code == 400
    assert "belongs to project" in str(response.json())


def test_context_is_seed_000_markdown_within_the_budget(agent, corpus):
    response = agent.post(
        "/api/v1/context",
        {"query": "how did we handle authentication?", "max_tokens": 300},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    markdown = body["markdown"]
    assert markdown.startswith("## Relevant Past Discussions\n\n### Session: ")
    heading = f"### Session: {corpus['auth'].started_at:%Y-%m-%d} - Architect (Winston) - security"
    assert heading in markdown
    assert "\nRelevance: " in markdown and "%" in markdown
    assert "JWT" in markdown
    assert 0 < body["tokens"] <= 300
    assert body["sessions"][0]["session"]["id"] == corpus["auth"].public_id
    flush_reads()
    corpus["auth"].refresh_from_db()
    assert corpus["auth"].access_count == 1


def test_context_is_empty_when_nothing_is_relevant(agent, corpus):
    response = agent.post(
        "/api/v1/context",
        {"query": "quantum chromodynamics lattice gauge", "min_relevance": 0.5},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["markdown"] == ""
    assert response.json()["sessions"] == []


def test_context_filters_by_current_agent(agent, corpus):
    response = agent.post(
        "/api/v1/context",
        {"query": "tokens", "current_agent": "dev", "min_relevance": 0},
        format="json",
    )
    ids = {s["session"]["id"] for s in response.json()["sessions"]}
    assert ids == {corpus["deploy"].public_id}


def test_resume_returns_summary_and_the_last_messages(agent, corpus):
    session = corpus["auth"]
    session.summary = "Task: fix login. Done: JWT."
    session.save()
    response = agent.get(f"/api/v1/sessions/{session.public_id}/resume", {"lastn": 2})
    assert response.status_code == 200
    body = response.json()
    assert [m["seq"] for m in body["messages"]] == [2, 3]
    assert "Summary: Task: fix login." in body["markdown"]
    assert body["markdown"].index("Great, and the refresh flow?") < body["markdown"].index(
        "Refresh tokens rotate"
    )
    assert (
        agent.get(f"/api/v1/sessions/{session.public_id}/resume", {"lastn": "0"}).status_code == 400
    )


def test_similar_sessions_rank_the_closest_first(agent, project, corpus):
    twin = capture(
        project,
        [
            ("user", "Our login broke: JWT tokens expired too early"),
            ("assistant", "Fixed the expiry check in the auth middleware."),
        ],
    )
    embed_all()
    with connection.cursor() as cursor:  # session vectors as the enrichment would set them
        cursor.execute(
            "UPDATE agent_sessions_session s SET embedding = (SELECT avg(embedding) FROM "
            "agent_sessions_messagechunk c WHERE c.session_id = s.id)"
        )
    response = agent.get(f"/api/v1/sessions/{corpus['auth'].public_id}/similar", {"limit": 3})
    assert response.status_code == 200
    similar = response.json()["similar"]
    assert similar[0]["session"]["id"] == twin.public_id
    assert corpus["auth"].public_id not in {s["session"]["id"] for s in similar}
    assert Session.objects.count() == 4


def test_entities_are_listed_with_session_counts(agent, project, corpus):
    for key in ("auth", "deploy"):
        EntityFactory(
            session=corpus[key],
            type="FILE",
            value="Makefile",
            count=2,
        )
    EntityFactory(
        session=corpus["auth"],
        type="FILE",
        value="src/auth.py",
    )
    other = capture(ProjectFactory(), [("user", "x")])
    EntityFactory(
        session=other,
        type="FILE",
        value="Makefile",
        count=9,
    )
    response = agent.get("/api/v1/entities", {"type": "FILE"})
    assert response.status_code == 200
    rows = response.json()["entities"]
    assert rows[0]["normalized"] == "makefile" and rows[0]["sessions"] == 2
    assert rows[0]["mentions"] == 4
    assert agent.get("/api/v1/entities", {"type": "PLANET"}).status_code == 400


def test_schema_documents_the_search_endpoints(agent):
    schema = APIClient().get("/api/schema/", {"format": "json"})
    paths = (
        schema.json()["paths"] if schema["content-type"].startswith("application/json") else None
    )
    if paths is None:
        import yaml

        paths = yaml.safe_load(schema.content)["paths"]
    for path in (
        "/api/v1/search",
        "/api/v1/context",
        "/api/v1/entities",
        "/api/v1/sessions/{id}/similar",
        "/api/v1/sessions/{id}/resume",
    ):
        assert path in paths, path
