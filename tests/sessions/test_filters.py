"""One filter vocabulary, three ways in: the API's session list (ORM), the search API (SQL)
and the UI's session list (ORM, through a page's form) give the same sessions for the same
filter, refuse the same bad input on the same field, and never show another team's data,
whatever the filter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from rest_framework.test import APIClient

from sessions.filters import Filters, FiltersSerializer
from sessions.models import Session
from teams.models import ApiToken
from tests.factories import (
    EntityFactory,
    MembershipFactory,
    MessageFactory,
    ProjectFactory,
    SessionFactory,
    TeamFactory,
)
from web.forms import FILTER_INPUTS

pytestmark = pytest.mark.django_db

# Every session holds this entity, so the search API (which needs a query or an entity)
# lists whole sessions by any other filter through its entity mode.
SHARED_ENTITY = {"entity": "django"}


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


def make_session(project, *, title, roles, entities, **fields) -> Session:
    session = SessionFactory(project=project, title=title, **fields)
    for seq, role in enumerate(roles):
        MessageFactory(session=session, seq=seq, role=role, content=f"{title} {role} notes")
    for kind, value in [("PACKAGE", "django"), *entities]:
        EntityFactory(session=session, type=kind, value=value)
    return session


def populate(team) -> dict[str, Session]:
    """Three sessions in one project and one in a second project of ``team``."""
    main, side = ProjectFactory(team=team), ProjectFactory(team=team)
    return {
        "review": make_session(
            main,
            title="review",
            agent_name="coder",
            workflow="review",
            user_name="alice",
            decay_priority=0.9,
            topics=["auth"],
            started_at=at("2025-01-10"),
            ended_at=at("2025-01-10", 13),
            roles=["user", "assistant"],
            entities=[("FILE", "src/auth.py")],
        ),
        "deploy": make_session(
            main,
            title="deploy",
            agent_name="architect",
            status="error",
            lifecycle="idle",
            user_name="bob",
            decay_priority=0.2,
            source_format="claude_code",
            topics=["deploy"],
            started_at=at("2025-02-10"),
            roles=["user", "assistant", "tool"],
            entities=[("COMMAND", "make release")],
        ),
        "security": make_session(
            main,
            title="security",
            agent_name="coder",
            workflow="security",
            status="interrupted",
            lifecycle="archived",
            user_name="alice",
            decay_priority=0.5,
            source_format="plain_text",
            topics=["auth", "db"],
            started_at=at("2025-03-10"),
            ended_at=at("2025-03-12"),
            roles=["system", "user"],
            entities=[("FILE", "src/db.py")],
        ),
        "side": make_session(
            side,
            title="side",
            agent_name="helper",
            topics=["docs"],
            started_at=at("2025-02-20"),
            ended_at=at("2025-02-21"),
            roles=["user"],
            entities=[],
        ),
    }


@pytest.fixture
def world(team, teammate):
    ours = populate(team)
    # Another team holding the same kinds of sessions (same agents, topics, entities, roles).
    theirs = populate(TeamFactory())
    # A session of each team in the trash: listed only with deleted=true, never searched.
    trashed = [
        SessionFactory(
            project=sessions["review"].project, title="trashed", deleted_at=at("2025-04-01")
        )
        for sessions in (ours, theirs)
    ]
    client = Client()
    client.force_login(teammate)
    return {
        "ours": ours,
        "theirs": theirs,
        "their_ids": {s.public_id for s in [*theirs.values(), trashed[1]]},
        "client": client,
    }


# The UI picks days: its "To" (…_before) includes the day it names, where the API's bound
# excludes its instant; the UI names the day before the API's bound.
UI_DAYS = {"started_before", "ended_before"}


def ui_params(params: dict) -> dict:
    shifted = dict(params)
    for name in UI_DAYS & set(params):
        day = datetime.fromisoformat(params[name]).date() - timedelta(days=1)
        shifted[name] = day.isoformat()
    return shifted


def through_api_list(client, params) -> set[str]:
    response = client.get("/api/v1/sessions", {**params, "limit": 500})
    assert response.status_code == 200, response.content
    return {s["title"] for s in response.json()["results"]}


def through_search_api(client, params) -> set[str]:
    if not {"entity", "entity_type"} & set(params):
        params = {**params, **SHARED_ENTITY}
    # Search leaves archived sessions out unless asked (a search option, not a filter:
    # test_search_leaves_archived_sessions_out_unless_asked).
    response = client.get("/api/v1/search", {**params, "limit": 100, "include_archived": "true"})
    assert response.status_code == 200, response.content
    return {s["session"]["title"] for s in response.json()["sessions"]}


def through_ui_list(client, params) -> set[str]:
    response = client.get("/sessions", ui_params(params))
    assert response.status_code == 200
    assert not response.context["form"].errors, response.context["form"].errors
    return {s.title for s in response.context["page"].rows}


FILTER_CASES = [
    ({}, {"review", "deploy", "security", "side"}),
    ({"agent": " Coder "}, {"review", "security"}),
    ({"workflow": "review"}, {"review"}),
    ({"person": "alice"}, {"review", "security"}),
    ({"min_priority": "0.5"}, {"review", "security", "side"}),
    ({"role": "tool"}, {"deploy"}),
    ({"role": "system"}, {"security"}),
    ({"status": "error"}, {"deploy"}),
    ({"lifecycle": "archived"}, {"security"}),
    ({"source_format": "claude_code"}, {"deploy"}),
    ({"topic": "auth"}, {"review", "security"}),
    ({"entity_type": "FILE"}, {"review", "security"}),
    ({"entity": "SRC/Auth.py"}, {"review"}),
    ({"entity": "src/db.py", "entity_type": "COMMAND"}, set()),
    ({"started_after": "2025-02-10"}, {"deploy", "security", "side"}),
    ({"started_before": "2025-02-11"}, {"review", "deploy"}),
    ({"ended_after": "2025-02-01"}, {"security", "side"}),
    ({"ended_before": "2025-03-01"}, {"review", "side"}),
    ({"agent": "coder", "topic": "auth", "started_after": "2025-03-01"}, {"security"}),
]


@pytest.mark.parametrize(("params", "expected"), FILTER_CASES)
def test_the_same_filter_gives_the_same_sessions_everywhere(world, params, expected):
    client = world["client"]
    assert through_api_list(client, params) == expected
    assert through_search_api(client, params) == expected
    assert through_ui_list(client, params) == expected


def test_search_leaves_archived_sessions_out_unless_asked(world):
    client = world["client"]
    response = client.get("/api/v1/search", {**SHARED_ENTITY, "limit": 100})
    assert {s["session"]["title"] for s in response.json()["sessions"]} == {
        "review",
        "deploy",
        "side",
    }
    # Naming the archived state is asking for it.
    assert through_search_api(client, {"lifecycle": "archived"}) == {"security"}
    response = client.get("/api/v1/search", {**SHARED_ENTITY, "lifecycle": "archived"})
    assert {s["session"]["title"] for s in response.json()["sessions"]} == {"security"}


def test_the_cases_cover_every_filter_and_the_pages_show_them_all():
    vocabulary = set(FiltersSerializer().fields) - {"project"}
    assert {name for params, _ in FILTER_CASES for name in params} == vocabulary
    assert set(FILTER_INPUTS) == vocabulary


def test_a_project_narrows_every_path_alike(world):
    client, side = world["client"], world["ours"]["side"].project
    params = {"project": str(side.pk)}
    assert through_api_list(client, params) == {"side"}
    assert through_search_api(client, params) == {"side"}
    assert through_ui_list(client, params) == {"side"}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "exploded"}, "status"),
        ({"role": "narrator"}, "role"),
        ({"entity_type": "PLANET"}, "entity_type"),
        ({"agent": "x" * 65}, "agent"),
        ({"topic": "x" * 65}, "topic"),
        ({"entity": "x" * 501}, "entity"),
        ({"min_priority": "1.5"}, "min_priority"),
        ({"person": "x" * 201}, "person"),
        ({"started_after": "2025-03-01", "started_before": "2025-02-01"}, "started_before"),
        ({"ended_after": "2025-03-01", "ended_before": "2025-02-01"}, "ended_before"),
    ],
)
def test_bad_input_names_the_same_field_everywhere(world, params, field):
    client = world["client"]
    params = {**SHARED_ENTITY, **params}
    for url in ("/api/v1/sessions", "/api/v1/search"):
        response = client.get(url, params)
        assert response.status_code == 400, (url, response.content)
        body = response.json()
        # The session list's code is a validation error's; search's an invalid query's.
        assert body.pop("code") == ("MEM_E100" if url == "/api/v1/sessions" else "MEM_E004")
        assert list(body) == [field], url
    for url in ("/sessions", "/search"):
        response = client.get(url, params)
        assert response.status_code == 200
        assert list(response.context["form"].errors) == [field], url


def test_filters_normalise_what_the_stores_compare():
    filters = Filters(agent=" Coder ", entity=" SRC/Auth.py ", topic=" auth ")
    assert (filters.agent, filters.entity, filters.topic) == ("coder", "src/auth.py", "auth")


# --- another team's data, through every path and every filter ---------------------------------


def agent_client(project) -> APIClient:
    _, raw = ApiToken.issue(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def search_ids(client, params) -> set[str]:
    """Sessions of the search API's hits, in entity mode and in keyword mode."""
    seen = set()
    for query in ({}, {"q": "notes", "mode": "keyword"}):
        search_params = {**params, **query, "group": "true", "limit": 100}
        if not query and not {"entity", "entity_type"} & set(params):
            search_params.update(SHARED_ENTITY)
        body = client.get("/api/v1/search", search_params).json()
        seen |= {s["session"]["id"] for s in body.get("sessions", [])}
        seen |= {hit["session"]["id"] for hit in body["results"]}
    return seen


@pytest.mark.parametrize(("params", "expected"), FILTER_CASES)
def test_another_teams_sessions_never_appear_with_any_filter(world, params, expected):
    main = world["ours"]["review"].project
    in_main = {t for t in expected if world["ours"][t].project == main}
    seen = set()
    for client, visible in ((world["client"], expected), (agent_client(main), in_main)):
        listed = client.get("/api/v1/sessions", {**params, "limit": 500}).json()["results"]
        assert {s["title"] for s in listed} == visible
        trash = client.get("/api/v1/sessions", {**params, "deleted": "true"}).json()["results"]
        seen |= {s["id"] for s in [*listed, *trash]} | search_ids(client, params)
        # Every session holds the shared entity once: its count is the visible sessions'.
        counts = client.get("/api/v1/entities", {**params, "type": "PACKAGE"}).json()["entities"]
        assert sum(e["sessions"] for e in counts) == len(visible)
    person = world["client"]
    page = person.get("/sessions", ui_params(params)).context["page"]
    found = person.get("/search", {**ui_params(params), "q": "notes", "mode": "keyword"})
    seen |= {s.public_id for s in page.rows}
    seen |= {hit.session.public_id for hit in found.context["results"]}
    assert not seen & world["their_ids"]


def test_another_teams_project_is_never_a_way_in(world):
    client, their_project = world["client"], world["theirs"]["review"].project
    reference = {"project": f"{their_project.team.slug}/{their_project.slug}"}
    by_id = {"project": str(their_project.pk)}
    for params in (reference, by_id):
        assert client.get("/api/v1/sessions", params).json()["results"] == []
        assert client.get("/api/v1/search", {**params, **SHARED_ENTITY}).status_code == 404
        assert client.get("/api/v1/entities", params).status_code == 404
    response = client.get("/sessions", by_id)
    assert "project" in response.context["form"].errors and response.context["page"] is None


def test_the_ui_lists_the_current_team_only_for_a_member_of_two(world, teammate):
    their_team = world["theirs"]["review"].team
    MembershipFactory(team=their_team, user=teammate)
    client = world["client"]
    teams = ((world["ours"]["review"].team, world["ours"]), (their_team, world["theirs"]))
    for team, sessions in teams:
        client.post("/switch", {"team": team.pk})
        for query, titles in (("", set(sessions)), ("?topic=auth", {"review", "security"})):
            rows = client.get(f"/sessions{query}").context["page"].rows
            assert {s.public_id for s in rows} == {sessions[t].public_id for t in titles}
