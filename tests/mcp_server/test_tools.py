"""The MCP tools as an agent calls them, with the SDK's own client, over both transports:
``memoryapp mcp`` on stdio (a subprocess talking to the live server) and Streamable HTTP on
the live server's ``/mcp``. Every test runs once per transport."""

from __future__ import annotations

import json

import pytest

from memories.capture.record import MemoryDraft, record
from tests.factories import MessageFactory, ProjectFactory, SessionFactory
from tests.mcp_server.conftest import Agent

live = pytest.mark.django_db(transaction=True)  # the live server sees committed rows only

TOOLS = {
    "search_sessions",
    "get_context",
    "resume_session",
    "list_recent_sessions",
    "record_memory",
    "list_memories",
    "list_deleted_memories",
    "restore_memory",
    "accept_memory",
    "reject_memory",
    "set_memory_visibility",
    "save_session",
}


def data(result) -> dict:
    """A tool's answer as JSON (its structured content, else its text)."""
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def text(result) -> str:
    assert not result.is_error, result.content[0].text
    return result.content[0].text


def error(result) -> str:
    assert result.is_error, result.content
    return result.content[0].text


@live
def test_every_tool_is_listed_with_a_description_and_a_json_schema(agent):
    async def script(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in agent.run(script)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert len(tool.description) > 60, tool.name
        assert tool.input_schema["type"] == "object"
        for name, field in tool.input_schema["properties"].items():
            assert field.get("description") or "$ref" in str(field), (tool.name, name)
    assert tools["search_sessions"].input_schema["required"] == ["query"]
    kinds = tools["record_memory"].input_schema["properties"]["type"]["enum"]
    assert kinds == ["decision", "finding", "preference", "learning"]
    assert tools["get_context"].annotations.read_only_hint is True
    assert tools["save_session"].annotations is None  # it writes


@live
def test_search_finds_the_past_session_that_answers(agent, memory):
    found = data(agent.call("search_sessions", {"query": "JWT refresh tokens", "limit": 3}))
    best = found["results"][0]
    assert best["session"] == memory["auth"]
    assert best["agent"] == "architect"
    assert 0 < best["relevance"] <= 1
    assert "JWT" in best["snippet"] or "Refresh" in best["snippet"]
    only_dev = data(agent.call("search_sessions", {"query": "JWT", "agent": "dev"}))
    assert {hit["session"] for hit in only_dev["results"]} <= {memory["deploy"]}


@live
def test_context_is_markdown_within_its_budget(agent, memory):
    question = {"task": "how did we handle authentication?"}
    full = text(agent.call("get_context", {**question, "max_tokens": 4000}))
    assert full.startswith("## Relevant Past Discussions")
    assert "Architect (Winston) - security" in full
    short = text(agent.call("get_context", {**question, "max_tokens": 60}))
    assert len(short) < len(full)
    where_it_stands = text(agent.call("get_context", {}))
    assert "## Latest Sessions" in where_it_stands


@live
def test_recent_sessions_then_resume_one(agent, memory):
    recent = data(agent.call("list_recent_sessions", {"limit": 10}))["sessions"]
    assert [s["id"] for s in recent] == [memory["cooking"], memory["deploy"], memory["auth"]]
    assert recent[2]["title"] == "Auth fix"
    assert (
        data(agent.call("list_recent_sessions", {"agent": "dev"}))["sessions"][0]["id"]
        == (memory["deploy"])
    )
    sams = data(agent.call("list_recent_sessions", {"person": "sam"}))["sessions"]
    assert [s["id"] for s in sams] == [memory["deploy"]]
    with_sam = data(agent.call("search_sessions", {"query": "release", "person": "sam"}))
    assert {hit["session"] for hit in with_sam["results"]} == {memory["deploy"]}
    last = text(agent.call("resume_session", {"session_id": memory["deploy"], "lastn": 1}))
    both = text(agent.call("resume_session", {"session_id": memory["deploy"], "lastn": 2}))
    assert "make release" in last
    # The question is the session's title in both, and a message only in the longer one.
    assert (last.count("How do we ship"), both.count("How do we ship")) == (1, 2)


@live
def test_record_memories_then_list_them_by_type(agent, memory):
    decision = data(
        agent.call(
            "record_memory",
            {
                "type": "decision",
                "content": "Use RS256-signed JWT bearer tokens for the API",
                "rationale": "Verifiable without a shared secret",
                "tags": ["auth"],
                "session": memory["auth"],
            },
        )
    )
    assert decision["id"].startswith("DEC-") and decision["outcome"] == "created"
    finding = data(
        agent.call(
            "record_memory",
            {"type": "finding", "content": "Refresh tokens never expire", "severity": "critical"},
        )
    )
    assert finding["resolution"] == "open"
    again = data(
        agent.call(
            "record_memory",
            {"type": "decision", "content": "Use RS256-signed JWT bearer tokens for the API"},
        )
    )
    assert (again["id"], again["outcome"]) == (decision["id"], "merged")

    findings = data(agent.call("list_memories", {"type": "finding"}))["memories"]
    assert [m["id"] for m in findings] == [finding["id"]]
    decisions = data(agent.call("list_memories", {"type": "decision", "topic": "JWT signing"}))
    assert [m["id"] for m in decisions["memories"]] == [decision["id"]]
    assert data(agent.call("list_memories", {"type": "preference"}))["memories"] == []


@live
def test_a_character_records_for_a_person_and_lists_what_it_may_read(agent, agent_env):
    """People (docs/people.md) over MCP: Cathy records Sam's shared preference and her own
    fact about him; Rex lists only what he may read of Sam, Cathy both."""

    def record(content, **more):
        arguments = {"type": "preference", "content": content, "agent": "cathy", **more}
        return data(agent.call("record_memory", {**arguments, "person": "sam"}))

    shared = record("Sam is vegetarian", shared=True)
    own = record("Sam likes window seats")
    assert (shared["person"], shared["shared"]) == ("sam", True)
    assert own["person"] == "sam" and not own.get("shared")

    def readable(character):
        arguments = {"type": "preference", "person": "sam", "character": character}
        return {m["id"] for m in data(agent.call("list_memories", arguments))["memories"]}

    assert readable("rex") == {shared["id"]}
    assert readable("cathy") == {shared["id"], own["id"]}


@live
def test_save_the_current_session_and_again_as_it_grows(agent, agent_env):
    first = [
        {"role": "user", "content": "Why does the nightly backup to S3 fail?"},
        {"role": "assistant", "content": "The IAM role lost s3:PutObject on the bucket."},
    ]
    saved = data(
        agent.call(
            "save_session",
            {"agent_name": "claude-code", "messages": first, "external_id": "cc-42"},
        )
    )
    assert saved["message_count"] == 2 and saved["messages_added"] == 2
    grown = [*first, {"role": "user", "content": "Restored the policy in infra/iam.tf."}]
    again = data(
        agent.call(
            "save_session",
            {"agent_name": "claude-code", "messages": grown, "external_id": "cc-42"},
        )
    )
    assert again["id"] == saved["id"]
    assert (again["message_count"], again["messages_added"]) == (3, 1)
    hits = data(agent.call("search_sessions", {"query": "PutObject", "mode": "keyword"}))
    assert hits["results"][0]["session"] == saved["id"]

    as_text = data(
        agent.call(
            "save_session",
            {
                "agent_name": "codex",
                "transcript": "User: ping the staging box\n\nAssistant: staging answers.\n",
            },
        )
    )
    assert as_text["message_count"] == 2
    assert "staging answers" in text(agent.call("resume_session", {"session_id": as_text["id"]}))


@live
def test_bad_arguments_are_tool_errors_naming_the_field_and_the_server_keeps_serving(agent, memory):
    bad_calls = [
        ("search_sessions", {"query": "JWT", "limit": 0}, "limit"),
        ("search_sessions", {"limit": 3}, "query"),
        ("search_sessions", {"query": "JWT", "started_after": "last tuesday"}, "started_after"),
        ("record_memory", {"type": "opinion", "content": "x"}, "type"),
        ("record_memory", {"type": "finding", "content": "x", "rationale": "y"}, "rationale"),
        ("record_memory", {"type": "decision", "content": "x", "session": "nope"}, "session"),
        ("save_session", {"agent_name": "a"}, "messages"),
        ("save_session", {"agent_name": "a", "messages": [{"role": "robot"}]}, "role"),
        ("resume_session", {"session_id": "2020-01-01-nobody-000000"}, "404"),
    ]

    async def script(client):
        answers = [
            (field, await client.call_tool(tool, arguments)) for tool, arguments, field in bad_calls
        ]
        # The same connection still serves good calls.
        answers.append((None, await client.call_tool("list_recent_sessions", {})))
        return answers

    answers = agent.run(script)
    for field, result in answers[:-1]:
        assert field in error(result)
    assert len(data(answers[-1][1])["sessions"]) == 3


@live
def test_another_teams_sessions_and_memories_are_not_found(agent, memory):
    elsewhere = ProjectFactory()
    theirs = SessionFactory(project=elsewhere, title="Their secret JWT plan")
    MessageFactory(session=theirs, seq=0, content="Their secret JWT rotation plan")
    record(elsewhere, MemoryDraft(type="finding", content="Their JWT secret leaked"))

    assert "404" in error(agent.call("resume_session", {"session_id": theirs.public_id}))
    found = data(agent.call("search_sessions", {"query": "secret JWT rotation plan"}))
    assert theirs.public_id not in {hit["session"] for hit in found["results"]}
    recent = data(agent.call("list_recent_sessions", {"limit": 100}))["sessions"]
    assert theirs.public_id not in {s["id"] for s in recent}
    assert data(agent.call("list_memories", {"type": "finding"}))["memories"] == []
    on_theirs = agent.call(
        "record_memory", {"type": "decision", "content": "x", "session": theirs.public_id}
    )
    assert "session" in error(on_theirs)
    assert "Their" not in text(agent.call("get_context", {"task": "secret JWT rotation plan"}))


def test_memoryapp_mcp_answers_a_tool_error_when_the_server_is_down(closed_port_url):
    agent = Agent("stdio", closed_port_url, "mem_whatever")

    async def script(client):
        down = await client.call_tool("search_sessions", {"query": "JWT"})
        tools = await client.list_tools()  # still serving
        return down, tools

    down, tools = agent.run(script)
    assert "cannot reach memoryapp" in error(down)
    assert len(tools.tools) == len(TOOLS)


@live
def test_an_agent_lists_the_deleted_memories_and_restore_needs_the_delete_permission(
    agent, project
):
    from memories.forget.trash import delete

    memory = record(
        project, MemoryDraft(type="fact", content="The staging host is db-7", topic="hosts")
    ).memory
    delete(memory, reason="moved hosts")
    [listed] = data(agent.call("list_deleted_memories", {}))["memories"]
    assert (listed["id"], listed["reason"]) == (memory.public_id, "moved hosts")
    assert listed["recovery_deadline"] > listed["deleted_at"]
    refused = error(agent.call("restore_memory", {"memory_id": memory.public_id}))
    assert "delete" in refused  # the token's missing permission, named


@live
def test_an_agent_lists_proposals_only_when_asked_and_accepts_or_rejects_them(agent, project):
    from memories.models import Memory, Origin

    drafts = [
        MemoryDraft(type="learning", content=text, confidence="low", origin=Origin.EXTRACTOR)
        for text in ("Run migrations before the tests", "The flaky test is test_upload")
    ]
    keep, drop = (record(project, draft).memory for draft in drafts)
    assert data(agent.call("list_memories", {"type": "learning"}))["memories"] == []
    listed = data(agent.call("list_memories", {"type": "learning", "proposed": True}))
    assert {m["id"] for m in listed["memories"]} == {keep.public_id, drop.public_id}
    assert {m["status"] for m in listed["memories"]} == {"proposed"}
    accepted = data(
        agent.call(
            "accept_memory",
            {"memory_id": keep.public_id, "content": "Run the migrations before the tests"},
        )
    )
    assert (accepted["status"], accepted["content"]) == (
        "active",
        "Run the migrations before the tests",
    )
    rejected = data(agent.call("reject_memory", {"memory_id": drop.public_id, "reason": "fixed"}))
    assert rejected["status"] == "rejected"
    in_use = data(agent.call("list_memories", {"type": "learning"}))["memories"]
    assert [m["id"] for m in in_use] == [keep.public_id]
    missing = error(agent.call("accept_memory", {"memory_id": "LEARN-999"}))
    assert "LEARN-999" in missing
    assert Memory.objects.get(pk=drop.pk).history.last().reason == "fixed"
