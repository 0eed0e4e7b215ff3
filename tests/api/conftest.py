"""The API as a client sees it: requests through Django's WSGI application (the one gunicorn
serves), checked against the OpenAPI schema the app publishes, by schemathesis."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from memories.capture.record import MemoryDraft, record
from memoryapp.wsgi import application
from sessions.capture.service import capture_session
from sessions.forget.lifecycle import soft_delete
from sessions.models import Session
from teams.models import ApiToken
from tests.factories import ProjectFactory
from transcripts.base import ParsedMessage, ParsedSession

ALIVE_ID = "2025-01-15-architect-a7b3c9"
TRASHED_ID = "2025-01-16-architect-d4e5f6"
MEMORY_IDS = ("DEC-001", "FIND-001")

# NDJSON goes on the wire as the UTF-8 text the schema describes (a string); schemathesis
# has no serializer of its own for it.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


def load_schema():
    return schemathesis.openapi.from_wsgi(
        "/api/schema/", application, headers={"Accept": "application/json"}
    )


def seed_session(project, public_id: str, title: str) -> Session:
    parsed = ParsedSession(
        source_format="api",
        title=title,
        agent_name="architect",
        messages=[
            ParsedMessage(role="user", content="How should we store the auth tokens?"),
            ParsedMessage(role="assistant", content="Hash them with SHA-256; show them once."),
        ],
    )
    session = capture_session(project, parsed).session
    Session.objects.filter(pk=session.pk).update(public_id=public_id)
    session.refresh_from_db()
    return session


@pytest.fixture
def wsgi(db):
    """Requests through the WSGI handler, inside the test's transaction. The handler closes
    the database connection after each request (inside a transaction Django sees it as
    unusable); Django's own test client unhooks this the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield application
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_token(wsgi):
    """A project API token whose project holds a session with messages (ALIVE_ID) and one in
    the trash (TRASHED_ID), a decision and an open finding (MEMORY_IDS)."""
    project = ProjectFactory()
    alive = seed_session(project, ALIVE_ID, "Token storage")
    for kind, content in (("decision", "Hash API tokens with SHA-256"), ("finding", "No expiry")):
        record(project, MemoryDraft(type=kind, content=content, session=alive))
    soft_delete(seed_session(project, TRASHED_ID, "Old notes"), by=None, reason="test")
    _, raw = ApiToken.issue(project, name="schemathesis")
    return raw


@pytest.fixture
def auth(api_token):
    return {"Authorization": f"Bearer {api_token}"}
