"""The review API: list proposals, accept (edited or not), reject, undo a rejection,
revert, reopen, in bulk; the history in a memory's detail; bad input (empty or too long
content: a 400 naming it; a superseded memory: a 409 naming the newer one; another team's
memory: a 404, for the owner, a teammate and an outsider alike)."""

from __future__ import annotations

import pytest

from memories.capture.record import Evidence, MemoryDraft, record
from memories.models import Memory, MemoryStatus, Origin
from teams.models import TokenPermission
from tests.clients import client_for
from tests.factories import MessageFactory, SessionFactory
from tests.memories.conftest import decision, token_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"


def proposal(project, content="Retries use exponential backoff", kind="fact", **fields):
    session = SessionFactory(project=project)
    message = MessageFactory(session=session, seq=0, content=content)
    draft = MemoryDraft(
        type=kind,
        content=content,
        session=session,
        confidence="low",
        origin=Origin.EXTRACTOR,
        evidence=[Evidence(message, content)],
        **fields,
    )
    memory = record(project, draft).memory
    assert memory.status == MemoryStatus.PROPOSED
    return memory


def test_proposals_are_listed_only_when_asked_and_accepted_with_history(project, teammate):
    memory = proposal(project)
    member = client_for(teammate)
    assert member.get(URL).json()["results"] == []
    listed = member.get(URL, {"status": "proposed"}).json()["results"]
    assert [m["id"] for m in listed] == [memory.public_id]
    assert listed[0]["evidence"][0]["quote"] == "Retries use exponential backoff"
    accepted = member.post(f"{URL}/{memory.public_id}/accept", {"reason": "true"}, format="json")
    assert accepted.status_code == 200
    body = accepted.json()
    assert body["status"] == "active"
    assert [(h["from_status"], h["to_status"], h["by"]) for h in body["history"]] == [
        ("", "proposed", "extractor"),
        ("proposed", "active", teammate.get_username()),
    ]
    assert body["history"][1]["reason"] == "true"
    assert [m["id"] for m in member.get(URL).json()["results"]] == [memory.public_id]


def test_reject_then_list_and_undo(project, agent):
    memory = proposal(project)
    rejected = agent.post(f"{URL}/{memory.public_id}/reject", {"reason": "noise"}, format="json")
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert rejected.json()["history"][-1]["by"].startswith("token ")
    listed = agent.get(URL, {"status": "rejected"}).json()["results"]
    assert [m["id"] for m in listed] == [memory.public_id]
    undone = agent.post(f"{URL}/{memory.public_id}/unreject")
    assert undone.status_code == 200 and undone.json()["status"] == "proposed"
    again = agent.post(f"{URL}/{memory.public_id}/unreject")
    assert again.status_code == 409 and "not rejected" in again.json()["detail"]


def test_edit_then_accept_refuses_empty_or_too_long_content_naming_it(project, agent):
    memory = proposal(project)
    for content in ("", "   ", "x" * 4001):
        refused = agent.post(
            f"{URL}/{memory.public_id}/accept", {"content": content}, format="json"
        )
        assert refused.status_code == 400, content[:5]
        assert refused["Content-Type"].startswith("application/json")
        assert "content" in refused.json()
    memory.refresh_from_db()
    assert (memory.status, memory.content) == ("proposed", "Retries use exponential backoff")
    done = agent.post(
        f"{URL}/{memory.public_id}/accept",
        {"content": "Retries back off exponentially"},
        format="json",
    )
    assert done.status_code == 200
    assert (done.json()["status"], done.json()["content"]) == (
        "active",
        "Retries back off exponentially",
    )


def test_accepting_a_superseded_decision_is_a_409_naming_the_newer_one(project, agent):
    older = agent.post(URL, decision(content="Use MySQL", topic="db"), format="json").json()["id"]
    newer = agent.post(URL, decision(content="Use PostgreSQL", topic="db"), format="json").json()
    assert newer["superseded"] == [older]
    refused = agent.post(f"{URL}/{older}/accept")
    assert refused.status_code == 409
    assert refused.json()["superseded_by"] == newer["id"]
    assert newer["id"] in refused.json()["detail"]
    detail = agent.get(f"{URL}/{older}").json()
    assert detail["history"][-1]["to_status"] == "superseded"
    assert detail["history"][-1]["related"] == newer["id"]


def test_revert_needs_a_reason_and_reopen_a_resolved_finding(project, agent):
    made = agent.post(URL, decision(content="Ship on Fridays"), format="json").json()["id"]
    refused = agent.post(f"{URL}/{made}/revert", {}, format="json")
    assert refused.status_code == 400 and "reason" in refused.json()
    reverted = agent.post(f"{URL}/{made}/revert", {"reason": "broke prod"}, format="json")
    assert reverted.status_code == 200 and reverted.json()["status"] == "reverted"
    assert agent.get(URL).json()["results"] == []
    finding = agent.post(
        URL, {"type": "finding", "content": "Login leaks tokens"}, format="json"
    ).json()["id"]
    assert agent.post(f"{URL}/{finding}/reopen").status_code == 409
    agent.post(f"{URL}/{finding}/resolve", {}, format="json")
    reopened = agent.post(f"{URL}/{finding}/reopen", {"reason": "again"}, format="json")
    assert reopened.status_code == 200 and reopened.json()["resolution"] == "open"


def test_bulk_review_is_all_or_nothing(project, agent):
    a, b, c = (
        proposal(project, text)
        for text in ("The cache lives in Redis", "Deploys go out on Tuesdays", "Logs rotate daily")
    )
    assert len({a.pk, b.pk, c.pk}) == 3
    done = agent.post(
        f"{URL}/review",
        {"accept": [a.public_id, b.public_id], "reject": [c.public_id], "reason": "triage"},
        format="json",
    )
    assert done.status_code == 200
    assert done.json() == {"accepted": [a.public_id, b.public_id], "rejected": [c.public_id]}
    states = dict(Memory.objects.values_list("public_id", "status"))
    assert (states[a.public_id], states[b.public_id], states[c.public_id]) == (
        "active",
        "active",
        "rejected",
    )
    d = proposal(project, "Another statement entirely")
    missing = agent.post(f"{URL}/review", {"accept": [d.public_id, "FACT-999"]}, format="json")
    assert missing.status_code == 404 and missing.json()["field"] == "accept"
    d.refresh_from_db()
    assert d.status == "proposed"
    empty = agent.post(f"{URL}/review", {}, format="json")
    assert empty.json() == {"accepted": [], "rejected": []}
    both = agent.post(
        f"{URL}/review", {"accept": [d.public_id], "reject": [d.public_id]}, format="json"
    )
    assert both.status_code == 400 and "reject" in both.json()


def test_another_teams_memory_is_404_to_review(project, outsider):
    memory = proposal(project)
    stranger = client_for(outsider)
    for action in ("accept", "reject", "unreject", "revert", "reopen", "confirm"):
        answer = stranger.post(f"{URL}/{memory.public_id}/{action}", {"reason": "x"}, format="json")
        assert answer.status_code == 404, action
    bulk = stranger.post(f"{URL}/review", {"reject": [memory.public_id]}, format="json")
    assert bulk.status_code == 404
    assert stranger.get(URL, {"status": "proposed"}).json()["results"] == []
    memory.refresh_from_db()
    assert memory.status == "proposed" and memory.history.count() == 1


def test_a_read_only_token_cannot_review(project):
    memory = proposal(project)
    reader = token_client(project, TokenPermission.READ)
    assert reader.post(f"{URL}/{memory.public_id}/accept").status_code == 403
    assert (
        reader.post(f"{URL}/review", {"accept": [memory.public_id]}, format="json").status_code
        == 403
    )
