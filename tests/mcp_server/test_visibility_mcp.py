"""The MCP tools under visibility (issue 38, docs/visibility.md): every tool reads through the
REST views as the token's person (``Access.person_id``), so a private session or memory of
alice's reaches alice's agent and nobody else's; save_session and record_memory take a
visibility (a team token cannot ask for private); set_memory_visibility shares a memory or
takes it back, its owner's alone. Over Streamable HTTP on the live server (the stdio side
calls the same API over HTTP: tests/mcp_server/test_tools.py runs both)."""
# ruff: noqa: F811  (the people fixture, imported)

from __future__ import annotations

import pytest

from memories.models import Memory
from sessions.models import Session
from teams.models import ApiToken, TokenPermission, Visibility
from tests.mcp_server.conftest import Agent
from tests.mcp_server.test_tools import data, error
from tests.memories.visibility_people import people  # noqa: F401

live = pytest.mark.django_db(transaction=True)  # the live server sees committed rows only
WRITER = [TokenPermission.READ, TokenPermission.WRITE]


@pytest.fixture
def agents(live_server, project, people) -> dict[str, Agent]:
    """alice's agent, bob's agent and a team token's agent, which read and write (a token
    with the delete permission stands for an admin: it lists every session, reads none)."""
    bob = ApiToken.issue(project, name="b", permissions=WRITER, person=people.bob)[1]
    team = ApiToken.issue(project, name="t", permissions=WRITER)[1]
    return {
        "alice": Agent("http", live_server.url, people.alice_token),
        "bob": Agent("http", live_server.url, bob),
        "team": Agent("http", live_server.url, team),
    }


def listed(agent: Agent, **arguments) -> set[str]:
    found = data(agent.call("list_memories", {"type": "decision", **arguments}))
    return {m["id"] for m in found["memories"]}


@live
def test_a_private_memory_reaches_its_owners_agent_alone(agents, people):
    made = data(
        agents["alice"].call(
            "record_memory",
            {"type": "decision", "content": "Quit the Acme account", "visibility": "private"},
        )
    )
    assert (made["owner"], made["visibility"]) == ("alice", "private")
    assert made["id"] in listed(agents["alice"])
    assert made["id"] in listed(agents["alice"], visibility="private")
    for other in ("bob", "team"):
        assert made["id"] not in listed(agents[other]), other
        assert made["id"] not in listed(agents[other], topic="Acme account"), other
        context = data(agents[other].call("get_context", {"task": "the Acme account"}))
        assert "Quit the Acme account" not in str(context), other


@live
def test_a_team_token_cannot_record_a_private_memory(agents):
    refused = agents["team"].call(
        "record_memory", {"type": "decision", "content": "Keep it quiet", "visibility": "private"}
    )
    assert "visibility" in error(refused)
    assert not Memory.objects.filter(content="Keep it quiet").exists()


@live
def test_an_unknown_visibility_is_refused_by_the_tools_schema(agents):
    refused = agents["alice"].call(
        "record_memory", {"type": "decision", "content": "Anything", "visibility": "secret"}
    )
    assert "visibility" in error(refused)
    assert not Memory.objects.filter(content="Anything").exists()


@live
def test_the_owner_shares_a_memory_and_only_the_owner(agents):
    made = data(
        agents["alice"].call(
            "record_memory",
            {"type": "decision", "content": "Adopt trunk-based dev", "visibility": "private"},
        )
    )
    refused = agents["bob"].call(
        "set_memory_visibility", {"memory_id": made["id"], "visibility": "team"}
    )
    assert "404" in error(refused)  # bob does not read it: as if missing
    shared = data(
        agents["alice"].call(
            "set_memory_visibility", {"memory_id": made["id"], "visibility": "team"}
        )
    )
    assert shared["visibility"] == "team"
    assert made["id"] in listed(agents["bob"])
    # Bob reads it now, yet it is not his to take back.
    refused = agents["bob"].call(
        "set_memory_visibility", {"memory_id": made["id"], "visibility": "private"}
    )
    assert "403" in error(refused) and "owner" in error(refused)
    assert Memory.objects.get(public_id=made["id"]).visibility == Visibility.TEAM


@live
def test_a_private_session_saved_by_mcp_is_its_owners(agents, people):
    saved = data(
        agents["alice"].call(
            "save_session",
            {
                "agent_name": "dev",
                "transcript": "User: my salary review is on Monday\n\nAssistant: noted",
                "visibility": "private",
            },
        )
    )
    session = Session.objects.get(public_id=saved["id"])
    assert (session.owner_id, session.visibility) == (people.alice.pk, Visibility.PRIVATE)
    resumed = agents["alice"].call("resume_session", {"session_id": saved["id"]})
    assert "salary" in str(data(resumed))
    for other in ("bob", "team"):
        assert "404" in error(agents[other].call("resume_session", {"session_id": saved["id"]}))
        recent = data(agents[other].call("list_recent_sessions"))["sessions"]
        assert saved["id"] not in {row["id"] for row in recent}, other
    refused = agents["team"].call(
        "save_session", {"agent_name": "dev", "transcript": "User: hi", "visibility": "private"}
    )
    assert "visibility" in error(refused)
