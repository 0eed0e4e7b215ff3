"""Evidence in a session in the trash is hidden with it and comes back on restore, in the
API as on the memory's page."""

from __future__ import annotations

import pytest

from memories.capture.record import Evidence, MemoryDraft, record
from sessions.forget.lifecycle import restore, soft_delete
from sessions.models import Message

pytestmark = pytest.mark.django_db


def test_a_trashed_sessions_evidence_is_hidden_until_it_is_restored(agent, project, session):
    memory = record(
        project,
        MemoryDraft(
            "decision",
            "Use OAuth 2.0 with JWT tokens",
            None,
            agent="architect",
            evidence=[Evidence(Message.objects.get(session=session, seq=1), quote="JWT tokens")],
        ),
    ).memory
    url = f"/api/v1/memories/{memory.public_id}?project={project.team.slug}/{project.slug}"

    def evidence():
        response = agent.get(url)
        assert response.status_code == 200, response.content
        return response.json()["evidence"]

    assert evidence() == [{"session": session.public_id, "seq": 1, "quote": "JWT tokens"}]
    soft_delete(session, reason="test")
    assert evidence() == []
    restore(session)
    assert [e["quote"] for e in evidence()] == ["JWT tokens"]
