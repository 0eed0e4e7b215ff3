"""Reading and managing sessions over REST: list, filter, sort, page, patch, export, trash."""

import json
from datetime import UTC, datetime, timedelta

import pytest
import yaml

from sessions.forget.lifecycle import purge_expired
from sessions.models import Entity, Message, Session
from teams.models import Role
from tests.clients import client_for
from tests.factories import MembershipFactory, MessageFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sessions(project):
    base = datetime(2025, 3, 1, tzinfo=UTC)
    made = [
        SessionFactory(
            project=project,
            agent_name=agent,
            workflow=workflow,
            topics=topics,
            started_at=base + timedelta(days=i),
            message_count=count,
            size_bytes=count * 100,
            source_format=fmt,
        )
        for i, (agent, workflow, topics, count, fmt) in enumerate(
            [
                ("architect", "create-architecture", ["auth"], 5, "api"),
                ("dev", "none", ["db"], 50, "claude_code"),
                ("dev", "dev-story", ["auth", "db"], 20, "codex"),
            ]
        )
    ]
    Entity.objects.create(
        team=project.team,
        session=made[1],
        type="FILE",
        value="src/auth.py",
        normalized="src/auth.py",
    )
    return made


def ids(response):
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_list_filters_and_sorts(teammate, sessions):
    client = client_for(teammate)
    architect, dev_a, dev_b = (s.public_id for s in sessions)
    assert ids(client.get("/api/v1/sessions")) == [dev_b, dev_a, architect]  # newest first
    assert ids(client.get("/api/v1/sessions?agent=DEV")) == [dev_b, dev_a]
    assert ids(client.get("/api/v1/sessions?workflow=dev-story")) == [dev_b]
    assert ids(client.get("/api/v1/sessions?topic=auth")) == [dev_b, architect]
    assert ids(client.get("/api/v1/sessions?source_format=claude_code")) == [dev_a]
    assert ids(client.get("/api/v1/sessions?started_after=2025-03-02T00:00:00Z")) == [dev_b, dev_a]
    assert ids(client.get("/api/v1/sessions?started_before=2025-03-02T00:00:00Z")) == [architect]
    assert ids(client.get("/api/v1/sessions?entity=src/auth.py")) == [dev_a]
    assert ids(client.get("/api/v1/sessions?entity_type=FILE")) == [dev_a]
    assert ids(client.get("/api/v1/sessions?ordering=-message_count")) == [dev_a, dev_b, architect]
    assert ids(client.get("/api/v1/sessions?ordering=size_bytes")) == [architect, dev_b, dev_a]
    bad = client.get("/api/v1/sessions?status=exploded")
    assert bad.status_code == 400 and "status" in bad.json()


def test_cursor_pagination_walks_every_session_once(teammate, project):
    for i in range(7):
        SessionFactory(
            project=project, started_at=datetime(2025, 1, 1, tzinfo=UTC) + timedelta(hours=i)
        )
    client = client_for(teammate)
    seen, url = [], "/api/v1/sessions?limit=3"
    while url:
        page = client.get(url).json()
        seen += [row["id"] for row in page["results"]]
        url = page["next"]
    assert len(seen) == 7 == len(set(seen))
    huge = client.get("/api/v1/sessions?limit=100000")
    assert huge.status_code == 200 and len(huge.json()["results"]) == 7


def test_list_is_a_fixed_number_of_queries(teammate, project, django_assert_max_num_queries):
    for _ in range(20):
        SessionFactory(project=project)
    client = client_for(teammate)
    with django_assert_max_num_queries(4):
        assert len(client.get("/api/v1/sessions").json()["results"]) == 20


def test_patch_merges_metadata_and_checks_roles(team, project):
    session = SessionFactory(project=project, metadata={"a": 1, "b": 2})
    viewer = MembershipFactory(team=team, role=Role.VIEWER).user
    member = MembershipFactory(team=team, role=Role.MEMBER).user
    url = f"/api/v1/sessions/{session.public_id}"
    assert client_for(viewer).patch(url, {"title": "x"}, format="json").status_code == 403
    response = client_for(member).patch(
        url,
        {"title": "Auth design", "metadata": {"b": None, "c": 3}, "topics": "x,y"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    session.refresh_from_db()
    assert session.title == "Auth design"
    assert session.metadata == {"a": 1, "c": 3}
    assert session.topics == ["x", "y"]
    bad = client_for(member).patch(url, {"lifecycle": "exploded"}, format="json")
    assert bad.status_code == 400 and "lifecycle" in bad.json()


@pytest.fixture
def transcript(project):
    session = SessionFactory(project=project, title="Auth", agent_persona="Winston")
    MessageFactory(session=session, seq=0, role="user", content="Use OAuth? 🔐 שלום")
    MessageFactory(
        session=session,
        seq=1,
        role="assistant",
        content="```py\nlogin()\n```",
        tool_name="Edit",
        tool_call_id="c1",
    )
    MessageFactory(
        session=session, seq=2, role="tool", content="ok", tool_name="Edit", tool_call_id="c1"
    )
    return session


def test_export_in_every_format(teammate, transcript):
    client = client_for(teammate)
    url = f"/api/v1/sessions/{transcript.public_id}/export"

    as_json = client.get(url + "?format=json")
    assert as_json.status_code == 200
    assert f'filename="{transcript.public_id}.json"' in as_json["Content-Disposition"]
    data = json.loads(b"".join(as_json.streaming_content))
    assert data["session"]["id"] == transcript.public_id
    assert next(m["content"] for m in data["messages"]) == "Use OAuth? 🔐 שלום"
    assert {m["tool_call_id"] for m in data["messages"][1:]} == {"c1"}

    lines = b"".join(client.get(url + "?format=jsonl").streaming_content).decode().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    assert [json.loads(line)["seq"] for line in lines[1:]] == [0, 1, 2]

    markdown = b"".join(client.get(url + "?format=markdown").streaming_content).decode()
    assert markdown.startswith("# Conversation History")
    assert "## Turn 1\n**Speaker:** user" in markdown and "## Turn 3\n" in markdown
    assert "```py\nlogin()\n```" in markdown

    as_yaml = yaml.safe_load(b"".join(client.get(url + "?format=yaml").streaming_content))
    assert as_yaml["messages"][1]["content"] == "```py\nlogin()\n```"

    bad = client.get(url + "?format=docx")
    assert bad.status_code == 400 and "docx" in bad.json()["format"]


def test_viewers_may_not_export(team, transcript):
    viewer = MembershipFactory(team=team, role=Role.VIEWER).user
    url = f"/api/v1/sessions/{transcript.public_id}/export"
    assert client_for(viewer).get(url).status_code == 403


def test_delete_restore_and_purge(team, project, transcript):
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    member = MembershipFactory(team=team, role=Role.MEMBER).user
    url = f"/api/v1/sessions/{transcript.public_id}"
    assert client_for(member).delete(url).status_code == 403
    client = client_for(admin)
    assert client.delete(url + "?reason=privacy").status_code == 204
    transcript.refresh_from_db()
    assert transcript.deleted_at is not None and transcript.delete_reason == "privacy"
    assert transcript.public_id not in ids(client.get("/api/v1/sessions"))
    assert ids(client.get("/api/v1/sessions?deleted=true")) == [transcript.public_id]
    detail = client.get(url).json()
    deadline = datetime.fromisoformat(detail["recovery_deadline"])
    assert deadline - transcript.deleted_at == timedelta(days=30)

    again = client.delete(url)
    assert again.status_code == 409 and "already in the trash" in again.json()["detail"]

    assert client.post(url + "/restore").status_code == 200
    assert client.post(url + "/restore").status_code == 409
    assert transcript.public_id in ids(client.get("/api/v1/sessions"))

    not_trashed = client.delete(url + "?purge=true")
    assert not_trashed.status_code == 409
    client.delete(url)
    assert client.delete(url + "?purge=true").status_code == 204
    assert not Session.objects.filter(pk=transcript.pk).exists()
    assert not Message.objects.filter(session_id=transcript.pk).exists()


def test_trash_is_purged_after_the_projects_trash_days(project):
    old = SessionFactory(project=project, deleted_at=datetime.now(UTC) - timedelta(days=31))
    recent = SessionFactory(project=project, deleted_at=datetime.now(UTC) - timedelta(days=2))
    alive = SessionFactory(project=project)
    assert purge_expired() == 1
    assert list(Session.objects.order_by("pk").values_list("pk", flat=True)) == sorted(
        [recent.pk, alive.pk]
    )
    assert old.pk not in Session.objects.values_list("pk", flat=True)


def test_outsiders_get_404_everywhere(outsider, transcript):
    client = client_for(outsider)
    url = f"/api/v1/sessions/{transcript.public_id}"
    assert client.get(url).status_code == 404
    assert client.get(url + "/messages").status_code == 404
    assert client.get(url + "/export").status_code == 404
    assert client.patch(url, {"title": "x"}, format="json").status_code == 404
    assert client.delete(url).status_code == 404
    assert client.post(url + "/restore").status_code == 404
    assert client.get("/api/v1/sessions").json()["results"] == []
    own_project = ProjectFactory()  # a project of neither team
    imported = client.post(
        f"/api/v1/import?project={own_project.team.slug}/{own_project.slug}",
        b"User: hi",
        content_type="text/plain",
    )
    assert imported.status_code == 404


def test_openapi_schema_describes_the_api(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    for path in (
        "/api/v1/sessions",
        "/api/v1/sessions/{id}/messages",
        "/api/v1/sessions/{id}/export",
        "/api/v1/import",
        "/api/v1/events",
    ):
        assert any(p.rstrip("/") == path for p in schema["paths"]), path
