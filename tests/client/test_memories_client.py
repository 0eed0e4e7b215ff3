"""The client's memory methods (docs/api.md, "Memories") and `memoryapp memories`,
against a live server."""

from __future__ import annotations

import json

import pytest

from memories.models import Memory
from memoryapp_client import MemoryClient, MemoryError
from memoryapp_client.cli import main
from memoryapp_client.memories_cli import parse_fields

live = pytest.mark.django_db(transaction=True)  # the live server sees committed rows only


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@live
def test_an_agent_records_and_reads_back_its_decisions_findings_and_preferences(agent_env):
    client = MemoryClient()
    decision = client.record_decision(
        "Use OAuth 2.0 with JWT tokens for authentication",
        rationale="Industry standard, good library support",
        alternatives_considered=[{"option": "Session cookies", "rejected_because": "No APIs"}],
        confidence="high",
        tags=["security", "authentication"],
        agent="architect",
    )
    assert decision["id"] == "DEC-001" and decision["outcome"] == "created"
    finding = client.record_finding(
        "No MFA requirement specified", severity="critical", tags=["security"], agent="veritas"
    )
    client.record_finding("Session timeout not defined", severity="important")
    preference = client.record_preference(
        "MFA required for admin users", confidence="explicit", topic="mfa_requirements"
    )
    assert [d["id"] for d in client.get_relevant_decisions("OAuth JWT authentication")] == [
        "DEC-001"
    ]
    assert {f["id"] for f in client.get_open_findings()} == {"FIND-001", "FIND-002"}
    assert [f["id"] for f in client.get_open_findings("MFA requirement")] == [finding["id"]]
    assert [p["id"] for p in client.get_user_preferences()] == [preference["id"]]
    assert [p["id"] for p in client.get_user_preferences("admin MFA")] == [preference["id"]]

    resolved = client.resolve_finding(
        finding["id"], action_taken="Added MFA", resolved_by=decision["id"]
    )
    assert resolved["resolution"] == "resolved"
    assert [f["id"] for f in client.get_open_findings()] == ["FIND-002"]
    link = client.link_memories(preference["id"], "influenced", decision["id"])
    assert link == {"source": "PREF-001", "kind": "influenced", "target": "DEC-001"}
    shown = client.memory("dec-001")
    assert shown["details"]["rationale"].startswith("Industry standard")
    assert {"kind": "resolves", "direction": "out", "memory": "FIND-001"} in shown["links"]
    assert client.related_memories("DEC-001")["links"]
    listed = client.memories(type=["decision", "preference"], include_decayed=True)
    assert {m["id"] for m in listed["results"]} == {"DEC-001", "PREF-001"}


@live
def test_agent_state_round_trip_and_errors_carry_the_field(agent_env):
    client = MemoryClient()
    state = client.update_agent_state(
        "veritas", current_context={"current_task": "verify_requirements"}
    )
    client.update_agent_state("veritas", session_learnings=["Check MFA"])
    back = client.agent_state("veritas")
    assert back["id"] == state["id"]
    assert back["details"] == {
        "current_context": {"current_task": "verify_requirements"},
        "session_learnings": ["Check MFA"],
    }
    with pytest.raises(MemoryError) as refused:
        client.record_decision("Use tabs", mood="happy")
    assert refused.value.status == 400 and "mood: unknown field" in str(refused.value)
    with pytest.raises(MemoryError) as missing:
        client.memory("DEC-404")
    assert missing.value.status == 404 and missing.value.code == "MEM_E120"
    with pytest.raises(MemoryError, match="give a memory id"):
        client.memory(" ")


@live
def test_the_memories_command_adds_lists_shows_searches_and_resolves(agent_env, capsys):
    code, out, err = run(
        capsys,
        "memories",
        "add",
        "finding",
        "No MFA requirement specified",
        "--severity",
        "critical",
        "--tag",
        "security",
        "--field",
        'location={"artifact": "docs/requirements.md", "line_numbers": [45, 60]}',
    )
    assert code == 0, err
    assert out.startswith("FIND-001 (finding, active)\nNo MFA requirement specified")
    assert '"line_numbers": [45, 60]' in out
    location = Memory.objects.get(public_id="FIND-001").details["location"]
    assert location == {"artifact": "docs/requirements.md", "line_numbers": [45, 60]}
    run(capsys, "memories", "add", "decision", "Use", "OAuth", "2.0", "--confidence", "high")

    code, out, _ = run(capsys, "memories", "list", "--type", "finding", "--open")
    assert code == 0
    header, row, content = out.splitlines()
    assert header.split() == ["ID", "TYPE", "PRIO", "STATE", "AGENT", "DATE"]
    assert row.split()[:2] == ["FIND-001", "finding"] and row.split()[3] == "open"
    assert content.strip() == "No MFA requirement specified"

    code, out, _ = run(capsys, "memories", "search", "OAuth", "--json")
    # By meaning too: the other memories may follow, below the match.
    assert code == 0 and json.loads(out)["results"][0]["id"] == "DEC-001"

    code, out, err = run(capsys, "memories", "resolve", "FIND-001", "--action", "Added MFA")
    assert code == 0, err
    assert "resolution: resolved" in out
    code, out, err = run(capsys, "memories", "list", "--type", "finding", "--open")
    assert code == 0 and out == "" and "no memories match" in err

    code, out, _ = run(capsys, "memories", "show", "FIND-001")
    assert "action_taken" in out and "Added MFA" in out
    code, _, err = run(capsys, "memories", "show", "FIND-999")
    assert code == 1 and "HTTP 404" in err
    code, _, err = run(capsys, "memories", "add", "decision", "x y", "--field", "mood=1")
    assert code == 1 and "mood: unknown field" in err


def test_fields_are_json_when_they_are_json():
    assert parse_fields(["reversible=false", "rationale=Because", 'a={"b": 1}']) == {
        "reversible": False,
        "rationale": "Because",
        "a": {"b": 1},
    }
    with pytest.raises(ValueError, match="name=value"):
        parse_fields(["nothing"])


def test_memories_help_lists_its_actions_and_examples(capsys):
    with pytest.raises(SystemExit):
        main(["memories", "--help"])
    out = capsys.readouterr().out
    for action in ("list", "search", "show", "add", "resolve"):
        assert action in out
    assert "memoryapp memories add decision" in out


@live
def test_memories_delete_trash_and_restore_from_the_command_line(
    agent_env, capsys, monkeypatch, project
):
    from teams.models import ApiToken, TokenPermission

    raw = ApiToken.issue(project, name="admin-agent", permissions=list(TokenPermission.values))[1]
    monkeypatch.setenv("MEMORYAPP_TOKEN", raw)
    client = MemoryClient()
    client.record_memory("fact", "The staging host is db-7", topic="hosts")
    client.record_memory("fact", "Deploys run on Fridays", topic="deploys")

    code, out, _ = run(capsys, "memories", "delete", "--topic", "hosts", "--dry-run")
    assert code == 0 and "1 memory would move" in out and "FACT-001" in out
    assert Memory.objects.get(public_id="FACT-001").status == "active"  # a dry run
    code, _, err = run(capsys, "memories", "delete", "--topic", "hosts")
    assert code == 1 and "--reason" in err  # says what is missing
    code, out, _ = run(capsys, "memories", "delete", "--topic", "hosts", "--reason", "moved")
    assert code == 0 and "Moved 1 memory" in out

    code, out, _ = run(capsys, "memories", "trash")
    assert code == 0 and "FACT-001" in out and "why: moved" in out and "FACT-002" not in out
    code, out, _ = run(capsys, "memories", "restore", "FACT-001")
    assert code == 0 and Memory.objects.get(public_id="FACT-001").status == "active"
    code, _, err = run(capsys, "memories", "restore", "FACT-001")
    assert code == 1 and "not deleted" in err
    code, out, _ = run(capsys, "memories", "delete", "FACT-002", "--reason", "wrong")
    assert code == 0 and "memoryapp memories restore FACT-002" in out
