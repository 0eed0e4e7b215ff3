"""The UI of deletion: removing one message (admins, with a reason and a confirmation),
tombstones in the transcript, bulk deletes that leave records, and the Deletions page."""

from __future__ import annotations

import pytest

from sessions.forget.lifecycle import soft_delete
from sessions.models import DeletionRecord, Message
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db


def remove_url(session, seq):
    return f"/sessions/{session.public_id}/messages/{seq}/remove"


def test_admins_remove_a_message_after_confirming_with_a_reason(admin_client, admin, team_session):
    page = admin_client.get(f"/sessions/{team_session.public_id}").content.decode()
    assert remove_url(team_session, 0) in page

    confirm = admin_client.get(remove_url(team_session, 0))
    assert confirm.status_code == 200 and b"cannot be undone" in confirm.content
    no_reason = admin_client.post(remove_url(team_session, 0), {"reason": ""})
    assert no_reason.status_code == 200 and b"has-error" in no_reason.content
    assert Message.objects.get(session=team_session, seq=0).removed_at is None

    done = admin_client.post(remove_url(team_session, 0), {"reason": "personal"}, follow=True)
    body = done.content.decode()
    assert "Removed message #0" in body
    assert f"This message was removed by {admin.username} on" in body
    assert "Why does login redirect?" not in body
    assert DeletionRecord.objects.get(scope="message").reason == "personal"

    again = admin_client.post(remove_url(team_session, 0), {"reason": "x"}, follow=True)
    assert "already removed by" in again.content.decode()


def test_a_removed_tool_result_shows_as_removed_under_its_call(admin_client, team_session):
    admin_client.post(remove_url(team_session, 3), {"reason": "output had a key"})
    body = admin_client.get(f"/sessions/{team_session.public_id}").content.decode()
    assert "This output was removed by" in body and "3 passed" not in body


def test_members_and_outsiders_cannot_remove(member_client, outsider_client, team_session):
    page = member_client.get(f"/sessions/{team_session.public_id}").content.decode()
    assert remove_url(team_session, 0) not in page
    assert member_client.get(remove_url(team_session, 0)).status_code == 403
    assert member_client.post(remove_url(team_session, 0), {"reason": "x"}).status_code == 403
    assert outsider_client.post(remove_url(team_session, 0), {"reason": "x"}).status_code == 404
    assert not Message.objects.filter(removed_at__isnull=False).exists()


def test_a_bulk_delete_by_filter_leaves_a_filter_record(admin_client, project):
    SessionFactory(project=project, agent_name="coder", topics=["auth"], message_count=2)
    admin_client.post(
        "/sessions/bulk-delete?agent=coder", {"confirm": "1", "reason": "old coder runs"}
    )
    record = DeletionRecord.objects.get()
    assert (record.scope, record.criteria["agent"], record.reason) == (
        "filter",
        "coder",
        "old coder runs",
    )


def test_the_deletions_page_lists_the_teams_records_to_admins_only(
    admin_client, member_client, team_session, other_team_session
):
    admin_client.post(f"/sessions/{team_session.public_id}/delete", {"reason": "wrong project"})
    soft_delete(other_team_session, reason="theirs")  # another team's deletion

    page = admin_client.get("/deletions")
    assert page.status_code == 200
    body = page.content.decode()
    assert "wrong project" in body and "in the trash" in body and "restorable until" in body
    assert "theirs" not in body
    assert member_client.get("/deletions").status_code == 403
    trash = admin_client.get("/trash").content.decode()
    assert 'href="/deletions"' in trash
