"""Bulk delete (a selection, or everything matching the list's filter) and bulk restore:
confirmation with counts, admins only, one transaction, already-deleted is a message."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.forget.lifecycle import soft_delete
from sessions.models import Session
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sessions(project):
    now = timezone.now()
    made = []
    for i in range(6):
        made.append(
            SessionFactory(
                project=project,
                title=f"s{i}",
                agent_name="coder" if i < 4 else "architect",
                topics=["auth"] if i % 2 == 0 else ["deploy"],
                message_count=10 + i,
                started_at=now - timedelta(days=i),
            )
        )
    return made


def alive_titles():
    return sorted(Session.objects.alive().values_list("title", flat=True))


def test_selection_confirm_then_delete(admin_client, admin, sessions):
    ids = [sessions[0].public_id, sessions[1].public_id]
    confirm = admin_client.post("/sessions/bulk-delete", {"session": ids, "selection": "1"})
    assert confirm.status_code == 200
    body = confirm.content.decode()
    assert "Delete 2 sessions?" in body and "21 messages" in body and "30 days" in body
    assert alive_titles() == ["s0", "s1", "s2", "s3", "s4", "s5"]  # nothing yet

    done = admin_client.post(
        "/sessions/bulk-delete", {"session": ids, "confirm": "1", "reason": "cleanup"}, follow=True
    )
    assert b"Moved 2 sessions and 21 messages to the trash" in done.content
    assert alive_titles() == ["s2", "s3", "s4", "s5"]
    gone = Session.objects.get(pk=sessions[0].pk)
    assert gone.deleted_by == admin and gone.delete_reason == "cleanup"

    again = admin_client.post(
        "/sessions/bulk-delete", {"session": ids, "selection": "1"}, follow=True
    )
    assert b"already in the trash" in again.content


def test_delete_everything_matching_a_filter(admin_client, sessions):
    confirm = admin_client.get("/sessions/bulk-delete?agent=coder&topic=auth")
    body = confirm.content.decode()
    assert "Delete 2 sessions?" in body and "22 messages" in body  # s0 (10) + s2 (12)
    assert "coder" in body and "auth" in body
    done = admin_client.post(
        "/sessions/bulk-delete?agent=coder&topic=auth", {"confirm": "1"}, follow=True
    )
    assert b"Moved 2 sessions" in done.content
    assert alive_titles() == ["s1", "s3", "s4", "s5"]
    # The same filter again: all of it is already in the trash.
    again = admin_client.get("/sessions/bulk-delete?agent=coder&topic=auth", follow=True)
    assert b"already in the trash" in again.content

    day = (timezone.now() - timedelta(days=5)).date().isoformat()
    ranged = admin_client.get(f"/sessions/bulk-delete?started_after={day}&started_before={day}")
    assert b"Delete 1 session?" in ranged.content


def test_filter_delete_needs_a_filter(admin_client, sessions, project):
    for url in ("/sessions/bulk-delete", f"/sessions/bulk-delete?project={project.pk}"):
        response = admin_client.get(url, follow=True)
        assert b"Pick at least one filter" in response.content
    assert len(alive_titles()) == 6
    bad = admin_client.get(
        "/sessions/bulk-delete?started_after=2030-01-01&started_before=2020-01-01", follow=True
    )
    assert bad.status_code == 200 and len(alive_titles()) == 6
    nothing = admin_client.post("/sessions/bulk-delete", {"selection": "1"}, follow=True)
    assert b"Tick the sessions to delete first" in nothing.content


def test_only_admins_and_only_their_team(member_client, admin_client, sessions, other_team_session):
    assert member_client.get("/sessions/bulk-delete?agent=coder").status_code == 403
    response = member_client.post(
        "/sessions/bulk-delete", {"session": [sessions[0].public_id], "confirm": "1"}
    )
    assert response.status_code == 403
    assert member_client.post("/trash/restore", {"session": ["x"]}).status_code == 403
    # Another team's id is simply not found.
    admin_client.post(
        "/sessions/bulk-delete", {"session": [other_team_session.public_id], "confirm": "1"}
    )
    other_team_session.refresh_from_db()
    assert other_team_session.deleted_at is None
    assert len(alive_titles()) == 7


def test_list_shows_delete_to_admins_only(admin_client, member_client, sessions):
    assert b'form="bulk-form"' in admin_client.get("/sessions").content
    filtered = admin_client.get("/sessions?agent=coder").content
    assert b"Delete all matching the filters" in filtered
    # Members tick sessions too, to choose who reads them (docs/visibility.md), not to delete.
    as_member = member_client.get("/sessions").content
    assert b'form="bulk-form"' in as_member and b"Set visibility" in as_member
    assert b"Delete selected" not in as_member


def test_bulk_restore(admin_client, sessions):
    for s in sessions[:3]:
        soft_delete(s)
    trash = admin_client.get("/trash").content
    assert b'form="restore-form"' in trash
    assert b'action="/trash/restore"' in trash and b"Tick sessions to restore" in trash
    ids = [sessions[0].public_id, sessions[1].public_id, sessions[4].public_id]
    done = admin_client.post("/trash/restore", {"session": ids}, follow=True)
    assert b"Restored 2 sessions and 21 messages" in done.content
    assert b"1 session was not in the trash" in done.content
    assert alive_titles() == ["s0", "s1", "s3", "s4", "s5"]
    again = admin_client.post("/trash/restore", {"session": ids[:2]}, follow=True)
    assert b"nothing to restore" in again.content
