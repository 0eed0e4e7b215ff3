"""Bad input to the memories API: an unknown type or field, a relationship to another team's
or a missing memory, a cycle of supersedes, a megabyte of text, a memory for a deleted
session. Each is a 400/404/409 naming the field, and nothing is half-written."""

from __future__ import annotations

import pytest

from memories.models import Memory, MemoryEvidence, MemoryLink
from sessions.forget.lifecycle import soft_delete
from tests.clients import client_for
from tests.factories import ProjectFactory, SessionFactory
from tests.memories.conftest import ALL, decision, finding, preference, token_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"


def post(client, body, url=URL):
    return client.post(url, body, format="json")


def snapshot():
    """What the memory tables hold, to show a refused request wrote nothing."""
    return (
        list(Memory.objects.values_list("public_id", "status", "access_count", "tags")),
        MemoryLink.objects.count(),
        MemoryEvidence.objects.count(),
    )


@pytest.fixture
def other_team_memory(db) -> Memory:
    """A decision of another team's project, DEC-001 like ours will be."""
    outsider = token_client(ProjectFactory(), *ALL)
    return Memory.objects.get(public_id=post(outsider, decision()).json()["id"])


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"type": "opinion", "content": "x y"}, "type", "unknown memory type"),
        ({"content": "x y"}, "type", "unknown memory type"),
        (decision(mood="happy"), "mood", "unknown field"),
        (decision(severity="critical"), "severity", "unknown field"),  # a finding's field
        (finding(rationale="because"), "rationale", "unknown field"),
        (
            decision(alternatives_considered=[{"option": "x", "cost": 3}]),
            "alternatives_considered",
            "unknown field",
        ),
        (preference(confidence="high"), "confidence", "not a valid choice"),
        (finding(severity="apocalyptic"), "severity", "not a valid choice"),
        (decision(content="   "), "content", "blank"),
        (decision(content="nul \x00 inside"), "content", "Null characters"),
        (decision(scope="session"), "scope", "needs its session"),
        (decision(evidence=[1]), "evidence", "name the session"),
        (decision(tags=["x" * 65]), "tags", "64 characters"),
    ],
)
def test_a_refused_memory_names_its_field_and_writes_nothing(agent, body, field, words):
    before = snapshot()
    response = post(agent, body)
    assert response.status_code == 400, response.json()
    assert field in response.json(), response.json()
    assert words.lower() in str(response.json()[field]).lower()
    assert response.json()["code"] == "MEM_E100"
    assert snapshot() == before


def test_a_megabyte_of_text_is_refused_naming_content(agent):
    before = snapshot()
    response = post(agent, decision(content="word " * 210_000))
    assert response.status_code == 400
    assert "4000" in response.json()["content"][0]
    assert snapshot() == before


def test_a_memory_for_a_deleted_or_foreign_session_is_refused(agent, session, project):
    foreign = SessionFactory(public_id="2026-01-12-dev-zzz999")  # another team's
    response = post(agent, finding(session=foreign.public_id))
    assert response.status_code == 400 and "no session" in response.json()["session"][0]
    soft_delete(session, by=None, reason="test")
    before = snapshot()
    trashed = post(agent, finding(session=session.public_id, evidence=[1]))
    assert trashed.status_code == 400, trashed.json()
    assert "trash" in trashed.json()["session"][0]
    assert snapshot() == before
    state = agent.put("/api/v1/agent-states/veritas", {"session": session.public_id}, format="json")
    assert state.status_code == 400 and "session" in state.json()


def test_evidence_must_be_messages_of_the_session(agent, session):
    before = snapshot()
    response = post(agent, decision(session=session.public_id, evidence=[1, 7, 9]))
    assert response.status_code == 400
    assert "#7, #9" in response.json()["evidence"][0]
    assert snapshot() == before


def test_a_relationship_to_another_teams_or_a_missing_memory_is_a_404(agent, other_team_memory):
    mine = post(agent, finding()).json()
    before = snapshot()
    for body, field in (
        (decision(supersedes=["DEC-404"]), "supersedes"),
        (decision(links=[{"kind": "resolves", "target": "FIND-404"}]), "links"),
        (decision(links=[{"kind": "resolves", "target": str(10**30)}]), "links"),
        # Another team's DEC-001 by its number: not ours, so as if missing.
        (decision(supersedes=[str(other_team_memory.pk)]), "supersedes"),
    ):
        response = post(agent, body)
        assert response.status_code == 404, (body, response.json())
        assert response.json()["field"] == field
        assert response.json()["code"] == "MEM_E120"
    assert snapshot() == before
    link = agent.post(
        f"{URL}/{mine['id']}/links",
        {"kind": "relates_to", "target": str(other_team_memory.pk)},
        format="json",
    )
    assert link.status_code == 404 and link.json()["field"] == "target"
    resolved_by = agent.post(
        f"{URL}/{mine['id']}/resolve", {"resolved_by": "DEC-404"}, format="json"
    )
    assert resolved_by.status_code == 404 and resolved_by.json()["field"] == "resolved_by"
    assert Memory.objects.get(public_id=mine["id"]).resolution == "open"  # not half-resolved
    assert snapshot() == before


def test_a_cycle_of_supersedes_is_a_409_and_rolls_back(agent):
    a = post(agent, decision(content="Deploy with docker compose on one host")).json()
    b = post(agent, decision(content="Run the worker as a systemd service")).json()
    made = agent.post(
        f"{URL}/{a['id']}/links", {"kind": "supersedes", "target": b["id"]}, format="json"
    )
    assert made.status_code == 201
    cycle = agent.post(
        f"{URL}/{b['id']}/links", {"kind": "supersedes", "target": a["id"]}, format="json"
    )
    assert cycle.status_code == 409 and "cycle" in cycle.json()["detail"]
    assert cycle.json()["code"] == "MEM_E130"
    # A restatement of A (merged into it) whose link cannot be made: refused, and the merge
    # (one more access, its tags) is rolled back with it.
    before = snapshot()
    again = post(
        agent,
        decision(
            content="Deploy with docker compose on one host.",
            tags=["new-tag"],
            links=[{"kind": "supersedes", "target": a["id"]}],
        ),
    )
    assert again.status_code == 400 and "itself" in again.json()["target"][0]
    assert snapshot() == before


def test_an_ambiguous_id_asks_for_the_project(owner, team):
    first, second = ProjectFactory(team=team), ProjectFactory(team=team)
    for project in (first, second):
        assert post(token_client(project, *ALL), decision()).status_code == 201
    agent = token_client(first, *ALL)
    assert agent.get(f"{URL}/DEC-001").json()["project"].endswith(first.slug)
    people = client_for(owner)
    ambiguous = people.get(f"{URL}/DEC-001")
    assert ambiguous.status_code == 400 and "name the project" in ambiguous.json()["project"][0]
    named = people.get(f"{URL}/DEC-001", {"project": f"{team.slug}/{second.slug}"})
    assert named.status_code == 200 and named.json()["project"].endswith(second.slug)
    pk = Memory.objects.get(project=second).pk
    assert people.get(f"{URL}/{pk}").json()["project"].endswith(second.slug)
    assert people.get(f"{URL}/{10**30}").status_code == 404
