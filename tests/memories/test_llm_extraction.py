"""The optional LLM extractor against a real local HTTP server: its answer becomes memories
linked to the messages it names; any failure (HTTP error, no answer in time, not JSON, the
wrong shape, a message it was not sent) falls back to the offline rules and says why."""

from __future__ import annotations

import json

import pytest

from memories.enrich import llm
from memories.models import Memory, MemoryExtraction
from sessions.capture.service import capture_session
from tests.memories.test_extraction import FOUND, TASK, agent_session, extract_everything
from tests.sessions import test_summary
from tests.sessions.test_summary import Server

pytestmark = pytest.mark.django_db

ANSWER = {
    "memories": [
        {
            "type": "decision",
            "content": "Use a connection pool for the login database connections.",
            "message": 3,
            "quote": "We decided to use a connection pool",
            "topic": "db_connections",
            "confidence": "high",
            "details": {"rationale": "the database allows only 20 connections"},
        },
        {"type": "preference", "content": "Ask before adding dependencies.", "message": 0},
    ]
}


@pytest.fixture
def configured(settings):
    def configure(server):
        settings.MEMORY_LLM_URL = server.url
        settings.MEMORY_LLM_MODEL = "tiny"
        settings.MEMORY_LLM_API_KEY = "sk-test"

    return configure


def answering(monkeypatch, answer) -> None:
    """The test server answers ``answer`` as the model's message."""
    text = answer if isinstance(answer, str) else json.dumps(answer)
    monkeypatch.setattr(test_summary, "CANNED", text)


def test_the_llms_memories_are_recorded_with_their_evidence(
    project, configured, monkeypatch, django_capture_on_commit_callbacks
):
    answering(monkeypatch, ANSWER)
    session = capture_session(project, agent_session(("user", TASK), ("assistant", FOUND))).session
    with Server("ok") as server:
        configured(server)
        extract_everything(session, django_capture_on_commit_callbacks)
    extraction = MemoryExtraction.objects.get(session=session)
    assert (extraction.status, extraction.method, extraction.error) == ("done", "llm", "")
    decision = Memory.objects.get(session=session, type="decision")
    assert (decision.extractor, decision.origin, decision.agent) == ("llm", "extractor", "coder")
    assert (decision.topic, decision.confidence) == ("db_connections", "high")
    [evidence] = decision.evidence.all()
    assert evidence.message.seq == 3 and evidence.quote == "We decided to use a connection pool"
    preference = Memory.objects.get(session=session, type="preference")
    # dana, the session's person, asked it of coder: coder holds it (seed 002)
    assert (preference.person, preference.agent) == ("dana", "coder")
    assert preference.evidence.get().message.seq == 0

    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    system, user = request["body"]["messages"]
    assert "JSON" in system["content"]
    assert user["content"].startswith(f"[0] user: {TASK}")
    assert "1 failed: TimeoutError" not in user["content"]  # tool output is not sent


@pytest.mark.parametrize(
    "mode, answer, reason",
    [
        ("error", ANSWER, "HTTP 500"),
        ("hang", ANSWER, "no answer from"),
        ("garbage", ANSWER, "answered no JSON memories"),
        ("ok", "Here are the memories: none.", "answered no JSON memories"),
        ("ok", {"memories": [{"type": "opinion", "content": "x", "message": 0}]}, "wrong shape"),
        (
            "ok",
            {"memories": [{"type": "fact", "content": "x", "message": 1}]},
            "message 1, not sent",
        ),
    ],
)
def test_any_failure_falls_back_to_the_offline_rules_and_says_why(
    project, configured, monkeypatch, django_capture_on_commit_callbacks, mode, answer, reason
):
    answering(monkeypatch, answer)
    monkeypatch.setattr(llm, "TIMEOUT_SECONDS", 1)
    session = capture_session(project, agent_session(("user", TASK), ("assistant", FOUND))).session
    with Server(mode) as server:
        configured(server)
        extract_everything(session, django_capture_on_commit_callbacks)
    extraction = MemoryExtraction.objects.get(session=session)
    assert (extraction.status, extraction.method) == ("done", "fallback")
    assert extraction.error.startswith("LLM failed: ") and reason in extraction.error
    extracted = Memory.objects.filter(session=session)
    assert set(extracted.values_list("extractor", flat=True)) == {"offline"}
    assert set(extracted.values_list("type", flat=True)) == {"preference", "finding", "decision"}


def test_a_fenced_json_answer_is_read():
    assert json.loads(llm._unfenced('```json\n{"memories": []}\n```')) == {"memories": []}
