"""Delete → trash → restore, purge, export downloads, API tokens."""

from __future__ import annotations

import json

import pytest
import yaml
from django.urls import reverse

from sessions.models import Message, Session
from teams.access import find_active_token
from teams.models import ApiToken

pytestmark = pytest.mark.django_db


def url(name, session):
    return reverse(f"web:{name}", args=[session.public_id])


def test_delete_trash_restore_round_trip(admin_client, team_session):
    confirm = admin_client.get(url("delete", team_session))
    assert b"4 messages" in confirm.content
    assert b"30 days" in confirm.content

    response = admin_client.post(url("delete", team_session), {"reason": "wrong project"})
    assert response.status_code == 302 and response["Location"] == "/sessions"
    assert b"to the trash" in admin_client.get("/sessions").content  # the flash message
    assert team_session.public_id.encode() not in admin_client.get("/sessions").content
    trash = admin_client.get("/trash")
    assert b"Fix the login redirect" in trash.content
    assert b"wrong project" in trash.content
    assert b"days left" in trash.content
    # The session page says it is in the trash, with its deadline.
    assert b"In the trash since" in admin_client.get(url("session", team_session)).content

    # Deleting again is a message, not an error.
    again = admin_client.post(url("delete", team_session), follow=True)
    assert again.status_code == 200
    assert b"already in the trash" in again.content

    restored = admin_client.post(url("restore", team_session), follow=True)
    assert b"Restored" in restored.content
    assert team_session.public_id.encode() in admin_client.get("/sessions").content
    assert b"The trash is empty" in admin_client.get("/trash").content
    # Restoring what is not in the trash is a message too.
    assert (
        b"is not in the trash"
        in admin_client.post(url("restore", team_session), follow=True).content
    )


def test_purge_needs_the_trash_and_a_confirmation(admin_client, team_session):
    not_yet = admin_client.get(url("purge", team_session), follow=True)
    assert b"delete it first" in not_yet.content
    admin_client.post(url("delete", team_session))
    confirm = admin_client.get(url("purge", team_session))
    assert b"cannot be undone" in confirm.content and b"4 messages" in confirm.content
    done = admin_client.post(url("purge", team_session), follow=True)
    assert b"Purged" in done.content
    assert not Session.objects.filter(pk=team_session.pk).exists()
    assert not Message.objects.filter(session_id=team_session.pk).exists()
    assert admin_client.get(url("session", team_session)).status_code == 404


def test_viewers_see_the_trash_without_buttons(viewer_client, team_session):
    from sessions.forget.lifecycle import soft_delete

    soft_delete(team_session)
    body = viewer_client.get("/trash").content
    assert b"Fix the login redirect" in body
    assert b"Restore</button>" not in body


@pytest.mark.parametrize(
    ("fmt", "content_type", "extension"),
    [
        ("json", "application/json", "json"),
        ("jsonl", "application/x-ndjson", "jsonl"),
        ("markdown", "text/markdown; charset=utf-8", "md"),
        ("yaml", "application/yaml; charset=utf-8", "yaml"),
    ],
)
def test_export_downloads(member_client, team_session, fmt, content_type, extension):
    response = member_client.get(f"{url('export', team_session)}?format={fmt}")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"] == (
        f'attachment; filename="{team_session.public_id}.{extension}"'
    )
    body = b"".join(response.streaming_content).decode()
    assert "Why does login redirect?" in body
    if fmt == "json":
        assert len(json.loads(body)["messages"]) == 4
    elif fmt == "yaml":
        assert yaml.safe_load(body)["session"]["id"] == team_session.public_id
    elif fmt == "jsonl":
        assert len(body.strip().splitlines()) == 5


def test_unknown_export_format_is_a_message(member_client, team_session):
    response = member_client.get(f"{url('export', team_session)}?format=exe", follow=True)
    assert response.status_code == 200
    assert b"Unknown export format" in response.content


def test_tokens_create_show_once_and_revoke(admin_client, admin, project):
    response = admin_client.post(
        "/tokens", {"project": project.pk, "name": "ci agent", "permissions": ["read", "write"]}
    )
    assert response.status_code == 200
    raw = response.context["created"]["raw"]
    assert raw.encode() in response.content
    assert response["Cache-Control"].startswith("max-age=0")
    token = ApiToken.objects.get(project=project)
    assert token.name == "ci agent" and token.created_by == admin
    assert token.permissions == ["read", "write"]
    assert find_active_token(raw) == token
    # Shown once: the list shows the prefix only.
    listing = admin_client.get("/tokens").content.decode()
    assert raw not in listing
    assert token.prefix in listing
    assert "ago" in listing  # last used: find_active_token above

    revoked = admin_client.post(reverse("web:token-revoke", args=[token.pk]), follow=True)
    assert b"Revoked" in revoked.content
    assert find_active_token(raw) is None
    again = admin_client.post(reverse("web:token-revoke", args=[token.pk]), follow=True)
    assert b"already revoked" in again.content


def test_token_for_another_teams_project_is_refused(admin_client, other_team_session):
    response = admin_client.post("/tokens", {"project": other_team_session.project_id})
    assert response.status_code == 200
    assert response.context["form"].errors["project"]
    assert not ApiToken.objects.exists()


def test_a_conflict_is_a_message_on_the_trash_page(admin_client, team_session, monkeypatch):
    """Someone else restored (or purged) the session between the page and the click."""
    from sessions.forget.lifecycle import LifecycleConflict, soft_delete

    soft_delete(team_session)

    def restored_meanwhile(session):
        raise LifecycleConflict(f"session {session.public_id} is not in the trash")

    monkeypatch.setattr("web.views.trash.purge", restored_meanwhile)
    response = admin_client.post(url("purge", team_session))
    assert response.status_code == 302 and response["Location"] == "/trash"
    page = admin_client.get("/trash")
    assert f"session {team_session.public_id} is not in the trash".encode() in page.content
