"""The project's policy in the admin: every field in its fieldset, a dry run of a retention or
trash change before it is saved, and a change that removes more than 10 % of the project
refused until it is confirmed. A staff admin of one team never reaches another team's
project."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from sessions.models import Session
from teams.models import Project, Role
from tests.factories import MembershipFactory, ProjectFactory, SessionFactory, UserFactory

pytestmark = pytest.mark.django_db

POLICY_FIELDS = [
    "retention_days",
    "trash_days",
    "idle_after_hours",
    "decaying_after_days",
    "archive_after_days",
    "session_quota_bytes",
    "quota_warn_percent",
    "quota_compact_percent",
    "quota_action",
    "redact_secrets",
    "redact_emails",
    "redact_phones",
    "memory_review_threshold",
    "default_visibility",
    "allowed_visibilities",
]


@pytest.fixture
def staff(team):
    """A staff user who administers ``team`` (not a superuser), with the project admin's
    permissions."""
    user = UserFactory(is_staff=True)
    MembershipFactory(team=team, user=user, role=Role.ADMIN)
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_project", "change_project"])
    )
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def ten_sessions(project):
    """Two sessions last active 100 days ago, eight today, one in the trash for 20 days."""
    now = timezone.now()
    sessions = [
        SessionFactory(project=project, message_count=5, size_bytes=2048) for _ in range(10)
    ]
    old = [s.pk for s in sessions[:2]]
    Session.objects.filter(pk__in=old).update(
        started_at=now - timedelta(days=101),
        ended_at=now - timedelta(days=100),
        updated_at=now - timedelta(days=100),
    )
    trashed = SessionFactory(project=project, message_count=1, size_bytes=10)
    Session.objects.filter(pk=trashed.pk).update(deleted_at=now - timedelta(days=20))
    return sessions


def change_url(project) -> str:
    return f"/admin/teams/project/{project.pk}/change/"


def form_data(project: Project, **changes) -> dict:
    data = {
        "team": project.team_id,
        "name": project.name,
        "slug": project.slug,
        "description": project.description,
        "retention_days": project.retention_days or "",
        **{field: getattr(project, field) for field in POLICY_FIELDS[1:]},
    }
    data.update(changes)
    for flag in ("redact_secrets", "redact_emails", "redact_phones", "confirm_removal"):
        if not data.get(flag):
            data.pop(flag, None)  # an unticked box is not sent
    return data


def test_the_change_form_shows_every_policy_with_its_help_and_the_preview(staff, project):
    page = staff.get(change_url(project))
    assert page.status_code == 200
    html = page.content.decode()
    for field in POLICY_FIELDS:
        assert f'name="{field}"' in html, field
        help_text = str(Project._meta.get_field(field).help_text)
        assert help_text[:40] in html, field  # the admin shows help text as written
    for legend in (
        "Retention and trash",
        "Lifecycle",
        "Session size",
        "Privacy",
        "Memory review",
        "Who reads sessions",
    ):
        assert legend in html
    assert 'id="retention-preview"' in html and "web/admin-retention.js" in html
    assert "moves nothing to the trash" in html  # no retention yet


def test_the_preview_counts_what_new_values_would_remove(staff, project, ten_sessions):
    url = f"/admin/teams/project/{project.pk}/retention-preview/"
    answer = staff.get(url, {"retention_days": "30", "trash_days": "10"}).content.decode()
    assert "moves <strong>2</strong> of 10 live sessions (20.0 %)" in answer
    assert "10 messages, 4.0\xa0KB" in answer
    assert "purges <strong>1</strong> trashed session for good" in answer
    assert "needs “Confirm removal”" in answer
    gentle = staff.get(url, {"retention_days": "365", "trash_days": "30"}).content.decode()
    assert "moves <strong>0</strong> of 10" in gentle and "purges <strong>0</strong>" in gentle
    assert "Confirm removal" not in gentle
    bad = staff.get(url, {"retention_days": "-3"})
    assert bad.status_code == 400 and "whole number of at least 1" in bad.content.decode()


def test_a_change_removing_over_10_percent_needs_confirmation(staff, project, ten_sessions):
    refused = staff.post(change_url(project), form_data(project, retention_days=30))
    assert refused.status_code == 200  # the form again, with the numbers
    error = refused.context["adminform"].form.errors["confirm_removal"][0]
    assert "move 2 of 10 live sessions (20.0 %; 10 messages, 4.0 KB)" in error
    assert "tick “Confirm removal”" in error
    project.refresh_from_db()
    assert project.retention_days is None

    saved = staff.post(
        change_url(project), form_data(project, retention_days=30, confirm_removal="on")
    )
    assert saved.status_code == 302
    project.refresh_from_db()
    assert project.retention_days == 30


def test_a_shorter_trash_that_purges_over_10_percent_needs_confirmation(
    staff, project, ten_sessions
):
    Session.objects.filter(pk=ten_sessions[-1].pk).update(
        deleted_at=timezone.now() - timedelta(days=6)
    )  # 2 of 11 sessions past a 5-day trash: 18 %
    refused = staff.post(change_url(project), form_data(project, trash_days=5))
    assert (
        "purge 2 trashed sessions for good"
        in refused.context["adminform"].form.errors["confirm_removal"][0]
    )
    project.refresh_from_db()
    assert project.trash_days == 30


def test_a_change_removing_little_saves_without_confirmation(staff, project, ten_sessions):
    response = staff.post(change_url(project), form_data(project, retention_days=365))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.retention_days == 365
    other = staff.post(change_url(project), form_data(project, quota_warn_percent=50))
    assert other.status_code == 302  # not a retention change: nothing to confirm


def test_the_preview_action_says_what_the_next_run_removes(staff, project, ten_sessions):
    Project.objects.filter(pk=project.pk).update(retention_days=30)
    response = staff.post(
        "/admin/teams/project/",
        {"action": "preview_retention", "_selected_action": [project.pk]},
        follow=True,
    )
    said = [str(m) for m in response.context["messages"]]
    assert any(f"{project}: The run of" in m and "move 2 of 10 live sessions" in m for m in said)


def test_another_teams_project_is_out_of_reach(staff, project):
    foreign = ProjectFactory()
    assert staff.get(f"/admin/teams/project/{foreign.pk}/retention-preview/").status_code == 404
    assert staff.get(change_url(foreign)).status_code == 302  # the admin's "does not exist"
    listing = staff.get("/admin/teams/project/").content.decode()
    assert project.name in listing and foreign.name not in listing


def test_visibility_defaults_are_set_in_the_admin_and_checked(staff, project):
    saved = staff.post(
        change_url(project),
        form_data(project, default_visibility="private", allowed_visibilities=["private", "team"]),
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    project.refresh_from_db()
    assert project.default_visibility == "private"
    assert project.allowed_visibilities == ["private", "team"]

    refused = staff.post(
        change_url(project),
        form_data(project, default_visibility="summary", allowed_visibilities=["team"]),
    )
    assert refused.status_code == 200
    assert "The default visibility must be one of the allowed ones." in refused.content.decode()
    nothing = staff.post(change_url(project), form_data(project, allowed_visibilities=[]))
    assert "Allow at least one visibility." in nothing.content.decode()
    project.refresh_from_db()
    assert project.allowed_visibilities == ["private", "team"]
