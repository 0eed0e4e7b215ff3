"""The admins' project archive page: download an archive, import it into a project of the
team; members are refused, another team's project is a 404, a damaged archive writes
nothing."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from sessions.models import Message, Session
from teams.models import Project

pytestmark = pytest.mark.django_db


def download(client, project) -> bytes:
    response = client.get(f"/project-archive/{project.pk}.zip")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    return b"".join(response.streaming_content)


def test_an_admin_downloads_and_imports_a_project(admin_client, team_session, project):
    body = download(admin_client, project)
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert json.loads(archive.read("manifest.json"))["counts"]["messages"] == 4
    upload = SimpleUploadedFile("a.zip", body, content_type="application/zip")
    page = admin_client.post(
        "/project-archive", {"archive": upload, "project": "copy"}, follow=True
    )
    assert b"1 new session(s), 4 new message(s)" in page.content
    copy = Project.objects.get(team=project.team, slug="copy")
    messages = Message.objects.filter(session__project=copy).order_by("seq")
    assert [m.content for m in messages] == [
        m.content for m in Message.objects.filter(session=team_session).order_by("seq")
    ]


def test_a_damaged_archive_writes_nothing(admin_client, team_session, project):
    body = bytearray(download(admin_client, project))
    with zipfile.ZipFile(io.BytesIO(bytes(body))) as archive:
        names = archive.namelist()
        members = {name: archive.read(name) for name in names}
    members["sessions.jsonl"] = members["sessions.jsonl"].replace(b"login", b"logout")
    damaged = io.BytesIO()
    with zipfile.ZipFile(damaged, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    upload = SimpleUploadedFile("a.zip", damaged.getvalue(), content_type="application/zip")
    page = admin_client.post(
        "/project-archive", {"archive": upload, "project": "copy"}, follow=True
    )
    assert b"Archive refused, nothing was written" in page.content
    assert b"sessions.jsonl: wrong checksum" in page.content
    assert not Project.objects.filter(slug="copy").exists()
    assert Session.objects.count() == 1


def test_members_are_refused_and_another_teams_project_is_a_404(
    member_client, admin_client, other_team_session
):
    assert member_client.get("/project-archive").status_code == 403
    assert (
        admin_client.get(f"/project-archive/{other_team_session.project_id}.zip").status_code == 404
    )
