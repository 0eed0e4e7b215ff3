"""``PATCH /api/v1/sessions/{id}`` with ``lifecycle`` goes through the lifecycle: archiving
drops the message vectors, 'active' on an archived session embeds them again, and what a
person cannot set (idle, decaying; a session in the trash) is refused, changing nothing."""

from __future__ import annotations

import pytest

from sessions.forget.archive import archive_sessions, set_lifecycle
from sessions.forget.lifecycle import LifecycleConflict, soft_delete
from sessions.models import EnrichmentStatus, Lifecycle, Message, MessageChunk, Session
from tests.search.corpus import AUTH, capture, embed_all
from tests.search.test_api import client_for
from tests.sessions.forget.test_archive import make_old

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(project):
    session = capture(project, AUTH, title="Auth fix")
    embed_all()
    assert MessageChunk.objects.filter(session=session).exists()
    return session


def patch(project, session, body):
    return client_for(project).patch(f"/api/v1/sessions/{session.public_id}", body, format="json")


def statuses(session) -> set[str]:
    return set(Message.objects.filter(session=session).values_list("enrichment_status", flat=True))


def test_archived_drops_the_message_vectors(project, session):
    response = patch(project, session, {"lifecycle": "archived", "title": "Auth, archived"})
    assert response.status_code == 200, response.content
    assert response.json()["lifecycle"] == Lifecycle.ARCHIVED
    session.refresh_from_db()
    assert session.lifecycle == Lifecycle.ARCHIVED and session.archived_at is not None
    assert session.title == "Auth, archived"
    assert not MessageChunk.objects.filter(session=session).exists()
    assert session.embedding is not None  # kept for "similar sessions", as the check keeps it
    assert statuses(session) == {EnrichmentStatus.DONE}  # not queued to embed again


def test_active_on_an_archived_session_brings_its_vectors_back(project, session):
    make_old(session)
    assert archive_sessions([session.pk]) == 1
    assert not MessageChunk.objects.filter(session=session).exists()

    response = patch(project, session, {"lifecycle": "active"})
    assert response.status_code == 200, response.content
    assert response.json()["lifecycle"] == Lifecycle.ACTIVE
    session.refresh_from_db()
    assert session.lifecycle == Lifecycle.ACTIVE and session.archived_at is None
    assert statuses(session) == {EnrichmentStatus.PENDING}  # requeued
    embed_all()
    assert MessageChunk.objects.filter(session=session).count() >= len(AUTH)
    # Restoring it again is the conflict it should be: it is not archived any more.
    again = client_for(project).post(f"/api/v1/sessions/{session.public_id}/restore")
    assert again.status_code == 409


def test_active_on_an_idle_session_restarts_its_clock(project, session):
    make_old(session, days=3)
    Session.objects.filter(pk=session.pk).update(lifecycle=Lifecycle.DECAYING)
    before = Session.objects.get(pk=session.pk).last_active_at
    assert patch(project, session, {"lifecycle": "active"}).status_code == 200
    session.refresh_from_db()
    assert session.lifecycle == Lifecycle.ACTIVE and session.last_active_at > before
    assert MessageChunk.objects.filter(session=session).exists()


@pytest.mark.parametrize("value", ["idle", "decaying", "exploded"])
def test_states_of_the_decay_are_refused_naming_the_field(project, session, value):
    response = patch(project, session, {"lifecycle": value, "title": "changed"})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "MEM_E100"
    message = " ".join(body["lifecycle"])
    assert f"'{value}' cannot be set" in message and "'active'" in message
    assert "'archived'" in message
    session.refresh_from_db()
    assert session.lifecycle == Lifecycle.ACTIVE and session.title == "Auth fix"
    assert MessageChunk.objects.filter(session=session).exists()


def test_a_session_in_the_trash_is_restored_first(project, session):
    soft_delete(session, by=None, reason="test")
    response = patch(project, session, {"lifecycle": "archived", "title": "changed"})
    assert response.status_code == 409
    body = response.json()
    assert "in the trash; restore it before changing its lifecycle" in body["detail"]
    assert body["code"] == "MEM_E130"
    session.refresh_from_db()
    assert session.lifecycle == Lifecycle.ACTIVE and session.title == "Auth fix"
    assert MessageChunk.objects.filter(session=session).exists()


def test_set_lifecycle_is_the_one_way(project, session):
    """The admin's actions call it too: the same refusals outside the API."""
    with pytest.raises(ValueError, match="'idle' and 'decaying' follow"):
        set_lifecycle(session, Lifecycle.IDLE)
    assert set_lifecycle(session, Lifecycle.ARCHIVED) is True
    assert set_lifecycle(session, Lifecycle.ARCHIVED) is False  # already: nothing to do
    assert set_lifecycle(session, Lifecycle.ACTIVE) is True
    soft_delete(session, by=None, reason="test")
    with pytest.raises(LifecycleConflict):
        set_lifecycle(session, Lifecycle.ACTIVE)


def test_the_admin_actions_go_through_the_lifecycle(project, session, owner):
    from django.contrib.admin.sites import site
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.test import RequestFactory

    from sessions.admin import SessionAdmin

    request = RequestFactory().post("/")
    request.session, request.user = {}, owner
    request._messages = FallbackStorage(request)
    admin = SessionAdmin(Session, site)
    assert "lifecycle" in admin.readonly_fields  # never edited as a column
    admin.archive(request, Session.objects.filter(pk=session.pk))
    assert not MessageChunk.objects.filter(session=session).exists()
    admin.bring_back(request, Session.objects.filter(pk=session.pk))
    assert statuses(session) == {EnrichmentStatus.PENDING}
    soft_delete(session, by=None, reason="test")
    admin.archive(request, Session.objects.filter(pk=session.pk))
    notes = [str(message) for message in request._messages]
    assert "in the trash, restore first" in notes[-1]
    assert Session.objects.get(pk=session.pk).lifecycle == Lifecycle.ACTIVE
