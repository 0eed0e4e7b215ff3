"""Extraction end to end on a real Celery worker: a session captured over REST gets its
memories after embedding and enrichment, and an appended message adds only its own."""

from __future__ import annotations

import os

import pytest

from memories.models import Memory, MemoryExtraction
from teams.models import ApiToken
from tests.clients import client_for
from tests.memories.enrich.test_extraction import FOUND, LEARNED, TASK
from tests.waiting import wait_for


def message(role: str, content: str, **extra) -> dict:
    return {"role": role, "content": content, **extra}


@pytest.fixture(scope="module")
def no_quiet_period():
    """The worker (started after this) enriches a session as soon as its messages are
    embedded, instead of waiting for it to be quiet for a while and the beat to come by."""
    before = os.environ.get("SESSION_ENRICH_DELAY_SECONDS")
    os.environ["SESSION_ENRICH_DELAY_SECONDS"] = "0"
    yield
    if before is None:
        os.environ.pop("SESSION_ENRICH_DELAY_SECONDS")
    else:
        os.environ["SESSION_ENRICH_DELAY_SECONDS"] = before


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_memories_are_extracted_in_the_background_and_incrementally(
    no_quiet_period, celery_worker_process, project
):
    _, raw = ApiToken.issue(project)
    agent = client_for(token=raw)
    response = agent.post(
        "/api/v1/sessions",
        {
            "agent_name": "coder",
            "messages": [
                message("user", TASK),
                message("assistant", "pytest -q", tool_name="Bash", tool_call_id="c1"),
                message("tool", "1 failed: TimeoutError", tool_name="Bash", tool_call_id="c1"),
                message("assistant", FOUND),
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    public_id = response.json()["id"]
    memories = Memory.objects.filter(session__public_id=public_id)
    assert wait_for(lambda: memories.count() == 3, timeout=180), list(memories)
    first = {m.type: (m.pk, m.evidence.get().message.seq) for m in memories}
    assert first == {
        "preference": (first["preference"][0], 0),
        "finding": (first["finding"][0], 3),
        "decision": (first["decision"][0], 3),
    }

    response = agent.post(
        f"/api/v1/sessions/{public_id}/messages", message("assistant", LEARNED), format="json"
    )
    assert response.status_code == 201, response.content
    assert wait_for(lambda: memories.filter(type="learning").exists(), timeout=180)
    learning = memories.get(type="learning")
    assert learning.evidence.get().message.seq == 4
    assert {
        m.type: (m.pk, m.evidence.get().message.seq) for m in memories.exclude(pk=learning.pk)
    } == first
    extraction = MemoryExtraction.objects.get(session__public_id=public_id)
    assert (extraction.status, extraction.through_seq, extraction.method) == ("done", 4, "offline")
