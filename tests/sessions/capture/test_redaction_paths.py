"""A session's own text (title, persona, person, topics, artifacts, metadata) is redacted as
its messages are, on every path that writes it: capture by the API, import, a re-sent
session, appending (a title drawn from a message), PATCH and the admin. A project with
redaction off keeps what it was sent (the switch acts)."""

from __future__ import annotations

import pytest

from sessions.capture.service import capture_session
from sessions.models import Session
from tests.factories import ProjectFactory
from tests.redaction_inputs import EMAIL, REDACTED, SAID, TOKEN
from tests.search.test_api import client_for
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db


@pytest.fixture
def on():
    """A project that redacts secrets and e-mail addresses."""
    return ProjectFactory(redact_emails=True)


@pytest.fixture
def off():
    """A project that redacts nothing: the switch acts."""
    return ProjectFactory(redact_secrets=False, redact_emails=False)


def session_text(session: Session) -> str:
    fields = ("title", "agent_persona", "user_name", "topics", "artifacts", "metadata")
    return str([getattr(session, name) for name in fields])


def assert_clean(*values):
    for value in values:
        assert TOKEN not in str(value) and EMAIL not in str(value), value


CAPTURE = {
    "agent_name": "dev",
    "external_id": "run-1",
    "title": SAID,
    "agent_persona": f"Winston {EMAIL}",
    "user_name": EMAIL,
    "topics": [f"deploy {TOKEN}"],
    "artifacts": [f"https://x:{TOKEN}@example.com/repo"],
    "metadata": {"note": SAID, "api_key": "hunter2hunter2"},
    "messages": [{"role": "user", "content": "hello"}],
}


def test_capture_by_the_api_stores_and_answers_redacted(on, off):
    response = client_for(on).post("/api/v1/sessions", CAPTURE, format="json")
    assert response.status_code == 201, response.content
    assert_clean(response.json())
    session = Session.objects.get(project=on)
    assert session.title == REDACTED
    assert session.metadata["note"] == REDACTED
    assert session.metadata["api_key"] == "[REDACTED:api_key]"
    assert session.user_name == "[REDACTED:email]"
    assert_clean(session_text(session))

    kept = client_for(off).post("/api/v1/sessions", CAPTURE, format="json")
    assert kept.status_code == 201 and kept.json()["title"] == SAID
    assert Session.objects.get(project=off).topics == [f"deploy {TOKEN}"]


def test_a_resent_session_updates_its_fields_redacted(on):
    client = client_for(on)
    client.post("/api/v1/sessions", {**CAPTURE, "title": "first"}, format="json")
    again = {**CAPTURE, "topics": [f"more {EMAIL}"], "metadata": {"later": SAID}}
    assert client.post("/api/v1/sessions", again, format="json").status_code == 200
    session = Session.objects.get(project=on)
    assert session.title == REDACTED and session.metadata["later"] == REDACTED
    assert "more [REDACTED:email]" in session.topics
    assert_clean(session_text(session))


def test_a_title_drawn_from_the_first_message_is_redacted(on):
    parsed = ParsedSession(source_format="api", messages=[ParsedMessage(role="user", content=SAID)])
    session = capture_session(on, parsed).session
    assert session.title == REDACTED


def test_an_imported_file_is_redacted(on, off):
    line = (
        '{"type":"user","sessionId":"s1","uuid":"u1","timestamp":"2026-01-11T10:00:00Z",'
        f'"message":{{"role":"user","content":"{SAID}"}}}}\n'
    )
    for project, expected in ((on, REDACTED), (off, SAID)):
        response = client_for(project).post(
            f"/api/v1/import?format=claude_code&project={project.pk}",
            line.encode(),
            content_type="application/x-ndjson",
        )
        assert response.status_code in (200, 201), response.content
        session = Session.objects.get(project=project)
        assert session.title == expected
        assert session.messages.get().content == expected


def test_patch_is_redacted(on, off):
    for project, expected in ((on, REDACTED), (off, SAID)):
        client = client_for(project)
        client.post("/api/v1/sessions", {**CAPTURE, "title": "x", "metadata": {}}, format="json")
        session = Session.objects.get(project=project)
        response = client.patch(
            f"/api/v1/sessions/{session.public_id}",
            {"title": SAID, "topics": [TOKEN], "artifacts": [SAID], "metadata": {"n": SAID}},
            format="json",
        )
        assert response.status_code == 200, response.content
        assert response.json()["title"] == expected
        session.refresh_from_db()
        assert session.title == expected and session.metadata["n"] == expected
        assert session.artifacts == [expected]
        assert session.topics == ["[REDACTED:github_token]" if project == on else TOKEN]


def test_the_admin_redacts_what_it_saves(on):
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    from sessions.admin import SessionAdmin

    session = capture_session(
        on, ParsedSession(source_format="api", messages=[ParsedMessage("user", "hi")])
    ).session
    session.title, session.metadata = SAID, {"n": SAID}

    class Form:
        changed_data = ["title", "metadata"]

    SessionAdmin(Session, site).save_model(RequestFactory().post("/"), session, Form(), True)
    session.refresh_from_db()
    assert session.title == REDACTED and session.metadata == {"n": REDACTED}
