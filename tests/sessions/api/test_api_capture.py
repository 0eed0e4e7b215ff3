"""Capture over REST: whole sessions, appends, events and imports; idempotent and all-or-nothing."""

import json
import re

import pytest
from django.contrib.postgres.search import SearchQuery
from rest_framework.test import APIClient

from sessions.models import SEARCH_CONFIG, Message, Session
from teams.models import ApiToken, Role
from tests.factories import MembershipFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(project):
    """An API client authenticated as an agent with a token of ``project``."""
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def capture(client, **payload):
    payload.setdefault("agent_name", "architect")
    return client.post("/api/v1/sessions", payload, format="json")


def messages_of(session_id):
    return list(
        Message.objects.filter(session__public_id=session_id)
        .order_by("seq")
        .values_list("seq", "role", "content")
    )


def test_requests_without_a_valid_token_are_401(project):
    client = APIClient()
    assert client.get("/api/v1/sessions").status_code in (401, 403)
    client.credentials(HTTP_AUTHORIZATION="Bearer mem_not-a-token")
    response = client.get("/api/v1/sessions")
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid or revoked API token."
    token, raw = ApiToken.issue(project)
    token.revoke()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/sessions").status_code == 401


def test_capture_a_whole_session_with_messages(agent, project):
    response = capture(
        agent,
        agent_persona="Winston",
        workflow="create-architecture",
        topics="auth,db",
        artifacts=["architecture.md"],
        started_at="2025-01-15T14:00:00Z",
        ended_at="2025-01-15T15:30:00Z",
        metadata={"model": "claude"},
        messages=[
            {"role": "user", "content": "How should we handle auth?"},
            {"role": "assistant", "content": "Use OAuth2 with PKCE for the SPA. 🔐"},
            {
                "role": "assistant",
                "content": "pytest -q",
                "tool_name": "Bash",
                "tool_call_id": "t1",
            },
            {"role": "tool", "content": "3 passed", "tool_name": "Bash", "tool_call_id": "t1"},
        ],
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert re.fullmatch(r"2025-01-15-architect-[0-9a-f]{6}", body["id"])
    assert body["project"] == f"{project.team.slug}/{project.slug}"
    assert body["message_count"] == 4
    assert body["topics"] == ["auth", "db"]
    assert body["title"] == "How should we handle auth?"
    assert body["workflow"] == "create-architecture"
    assert body["size_bytes"] == sum(len(c.encode()) for _, _, c in messages_of(body["id"]))
    assert [role for _, role, _ in messages_of(body["id"])] == [
        "user",
        "assistant",
        "assistant",
        "tool",
    ]
    linked = Message.objects.filter(session__public_id=body["id"], tool_call_id="t1")
    assert sorted(linked.values_list("role", flat=True)) == ["assistant", "tool"]
    assert all(m.token_count > 0 for m in Message.objects.filter(session__public_id=body["id"]))
    # Keyword-searchable the moment the request returned.
    query = SearchQuery("PKCE", search_type="websearch", config=SEARCH_CONFIG)
    assert Message.objects.filter(search_vector=query).count() == 1


def test_capture_raw_conversation_text_as_seed_000_sends_it(agent):
    log = "User: Hello\r\n\r\n\r\n\r\nAssistant: Hi! How can I help?\nLet me know.\x00"
    response = capture(agent, conversation=log)
    assert response.status_code == 201, response.json()
    stored = messages_of(response.json()["id"])
    assert [(role, content) for _, role, content in stored] == [
        ("user", "Hello"),
        ("assistant", "Hi! How can I help?\nLet me know."),
    ]
    assert Session.objects.get(public_id=response.json()["id"]).source_format == "plain_text"


def test_same_external_id_returns_the_same_session_and_appends_only_new_messages(agent):
    first = capture(
        agent,
        external_id="run-1",
        status="interrupted",
        messages=[{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}],
    )
    assert first.status_code == 201
    again = capture(
        agent,
        external_id="run-1",
        status="completed",
        messages=[
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "two"},
            {"role": "user", "content": "three"},
        ],
    )
    assert again.status_code == 200
    body = again.json()
    assert body["id"] == first.json()["id"]
    assert body["messages_added"] == 1 and body["duplicates_skipped"] == 2
    assert body["status"] == "completed"
    assert [c for _, _, c in messages_of(body["id"])] == ["one", "two", "three"]
    assert Session.objects.filter(external_id="run-1").count() == 1


def test_appends_keep_order_and_a_retry_never_duplicates(agent):
    session_id = capture(agent, messages=[]).json()["id"]
    url = f"/api/v1/sessions/{session_id}/messages"
    batch = {
        "messages": [
            {"role": "user", "content": "a", "client_id": "m1"},
            {"role": "assistant", "content": "b", "client_id": "m2"},
        ]
    }
    first = agent.post(url, batch, format="json")
    assert first.status_code == 201
    assert [m["seq"] for m in first.json()["messages"]] == [0, 1]
    retry = agent.post(url, batch, format="json")
    assert retry.status_code == 201
    assert retry.json()["messages_added"] == 0 and retry.json()["duplicates_skipped"] == 2
    single = agent.post(url, {"role": "user", "content": "c", "client_id": "m3"}, format="json")
    assert single.json()["messages"][0]["seq"] == 2
    assert [c for _, _, c in messages_of(session_id)] == ["a", "b", "c"]
    assert Session.objects.get(public_id=session_id).message_count == 3
    listed = agent.get(url).json()
    assert [m["content"] for m in listed["results"]] == ["a", "b", "c"]


def test_ndjson_events_create_and_extend_sessions(agent):
    lines = [
        {
            "ts": 1704067200,
            "source": "chainlit",
            "session_id": "chainlit:abc",
            "person_id": "p_me",
            "char_id": "char_cathy",
            "sender": "user",
            "text": "How are you today?",
        },
        {
            "ts": 1704067205,
            "source": "chainlit",
            "session_id": "chainlit:abc",
            "person_id": "p_me",
            "char_id": "char_cathy",
            "sender": "assistant",
            "text": "I'm doing well, Sam!",
        },
    ]
    body = "\n".join(json.dumps(line) for line in lines).encode()
    response = agent.post("/api/v1/events", body, content_type="application/x-ndjson")
    assert response.status_code == 201, response.json()
    session = Session.objects.get(external_id="chainlit:abc")
    assert session.agent_name == "char-cathy" or session.agent_name == "char_cathy"
    assert session.user_name == "p_me"
    assert session.message_count == 2
    more = json.dumps({**lines[1], "ts": 1704067300, "text": "Anything else?"}).encode()
    again = agent.post("/api/v1/events", body + b"\n" + more, content_type="application/x-ndjson")
    assert again.status_code == 201
    assert again.json()["sessions"][0]["messages_added"] == 1
    assert Session.objects.get(external_id="chainlit:abc").message_count == 3


def test_import_a_real_claude_code_transcript_then_reimport_it(agent, shared_dir):
    sample = (shared_dir / "samples" / "claude_code" / "raze.jsonl").read_bytes()
    response = agent.post(
        "/api/v1/import?filename=raze.jsonl", sample, content_type="application/octet-stream"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["format"] == "claude_code"
    created = body["sessions"][0]
    assert created["created"] is True and created["messages_added"] > 0
    again = agent.post(
        "/api/v1/import", {"file": _upload("raze.jsonl", sample)}, format="multipart"
    )
    assert again.status_code == 201, again.json()
    second = again.json()["sessions"][0]
    assert second["id"] == created["id"] and second["created"] is False
    assert second["messages_added"] == 0
    assert second["duplicates_skipped"] == created["messages_added"]


PLAIN = b"User: Where is the deploy script?\nAssistant: In ops/, run it with make deploy."
OPENAI = json.dumps(
    {"messages": [{"role": "user", "content": "Where is the deploy script?"}]}
).encode()


@pytest.mark.parametrize("data", [PLAIN, OPENAI], ids=["plain_text", "openai_chat"])
def test_a_file_whose_format_has_no_ids_imports_once_however_often_it_is_sent(agent, data):
    """A retry whose answer was lost, or a person uploading the same file twice, stores
    nothing twice: a session its format gives no id gets one from its content."""
    first = agent.post("/api/v1/import", data, content_type="application/octet-stream")
    assert first.status_code == 201, first.json()
    again = agent.post("/api/v1/import", data, content_type="application/octet-stream")
    assert again.status_code == 201, again.json()
    (created,), (resent,) = first.json()["sessions"], again.json()["sessions"]
    assert resent["id"] == created["id"] and resent["created"] is False
    assert resent["messages_added"] == 0
    assert resent["duplicates_skipped"] == created["messages_added"] > 0
    # Another conversation (here one message longer) is another session.
    longer = data.replace(b"Where is", b"Hi.\nAssistant: Hello!\nUser: Where is")
    if data is OPENAI:
        longer = json.dumps(
            {"messages": [{"role": "user", "content": "Hi."}, *json.loads(data)["messages"]]}
        ).encode()
    third = agent.post("/api/v1/import", longer, content_type="application/octet-stream")
    assert third.json()["sessions"][0]["created"] is True, third.json()
    assert Session.objects.count() == 2


def _upload(name, data):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def test_a_broken_file_imports_nothing_and_names_the_line(agent):
    good = json.dumps(
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s1",
            "timestamp": "2025-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"},
        }
    )
    data = (good + "\n" + good.replace("u1", "u2") + "\n{not json\n").encode()
    response = agent.post(
        "/api/v1/import?format=claude_code", data, content_type="application/octet-stream"
    )
    assert response.status_code == 400
    assert response.json()["line"] == 3
    assert "line 3" in response.json()["detail"]
    assert Session.objects.count() == 0
    assert Message.objects.count() == 0


def test_unknown_format_and_empty_file_are_400(agent):
    unknown = agent.post("/api/v1/import?format=word", b"x", content_type="text/plain")
    assert unknown.status_code == 400
    assert "word" in unknown.json()["detail"] and "claude_code" in unknown.json()["detail"]
    empty = agent.post("/api/v1/import", b"", content_type="application/octet-stream")
    assert empty.status_code == 400


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages"),
        ({"messages": [{"role": "user"}]}, "messages"),
        ({"messages": "hello"}, "messages"),
        ({"started_at": "yesterday"}, "started_at"),
        ({"status": "exploded"}, "status"),
        ({"messages": [], "conversation": "User: hi"}, "conversation"),
    ],
)
def test_wrong_field_types_are_400_naming_the_field(agent, payload, field):
    response = capture(agent, **payload)
    assert response.status_code == 400
    assert field in response.json()
    assert Session.objects.count() == 0


def test_malformed_json_is_400_and_a_wrong_media_type_415(agent):
    broken = agent.post("/api/v1/sessions", b'{"agent_name": ', content_type="application/json")
    assert broken.status_code == 400
    assert "JSON parse error" in broken.json()["detail"]
    xml = agent.post("/api/v1/sessions", b"<session/>", content_type="application/xml")
    assert xml.status_code == 415


def test_a_session_over_the_project_quota_is_refused_whole(agent, project):
    project.session_quota_bytes = 2000
    project.save()
    response = capture(agent, messages=[{"role": "user", "content": "x" * 1500}] * 2)
    assert response.status_code == 413
    body = response.json()
    assert body["session_bytes"] == 3000 and body["quota_bytes"] == 2000
    assert "3,000 bytes" in body["detail"] and "2,000-byte quota" in body["detail"]
    assert Session.objects.count() == 0
    session_id = capture(agent, messages=[{"role": "user", "content": "x" * 1500}]).json()["id"]
    over = agent.post(
        f"/api/v1/sessions/{session_id}/messages",
        {"role": "user", "content": "y" * 600},
        format="json",
    )
    assert over.status_code == 413
    assert Session.objects.get(public_id=session_id).message_count == 1


def test_a_body_over_the_server_limit_is_413(agent, settings):
    settings.MAX_REQUEST_BYTES = 10_000
    response = agent.post("/api/v1/import", b"x" * 20_000, content_type="application/octet-stream")
    assert response.status_code == 413
    assert response.json()["limit_bytes"] == 10_000


def test_nul_bytes_emoji_and_right_to_left_text(agent):
    text = "مرحبا بالعالم — שלום 👋🏽 zero\x00byte"
    response = capture(
        agent, messages=[{"role": "user", "content": text, "metadata": {"k\x00": "v\x00"}}]
    )
    assert response.status_code == 201, response.json()
    message = Message.objects.get(session__public_id=response.json()["id"])
    assert message.content == "مرحبا بالعالم — שלום 👋🏽 zerobyte"
    assert message.metadata["nul_characters_removed"] == 3
    assert message.metadata["k"] == "v"


def test_secrets_are_redacted_before_they_are_stored(agent):
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    response = capture(agent, messages=[{"role": "user", "content": f"my key is {key}"}])
    message = Message.objects.get(session__public_id=response.json()["id"])
    assert key not in message.content
    assert "[REDACTED" in message.content
    assert message.metadata["redactions"] == 1


def test_another_projects_session_is_404(agent, project):
    other_project = ProjectFactory(team=project.team)
    _, raw = ApiToken.issue(other_project)
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    session_id = capture(other, messages=[{"role": "user", "content": "secret plan"}]).json()["id"]
    assert agent.get(f"/api/v1/sessions/{session_id}").status_code == 404
    assert agent.get(f"/api/v1/sessions/{session_id}/messages").status_code == 404
    posted = agent.post(
        f"/api/v1/sessions/{session_id}/messages", {"role": "user", "content": "x"}, format="json"
    )
    assert posted.status_code == 404
    assert session_id not in json.dumps(agent.get("/api/v1/sessions").json())


def test_people_capture_into_a_named_project_by_role(project, team):
    viewer = MembershipFactory(team=team, role=Role.VIEWER).user
    member = MembershipFactory(team=team, role=Role.MEMBER).user
    client = APIClient()
    client.force_authenticate(viewer)
    denied = capture(client, project=f"{team.slug}/{project.slug}", messages=[])
    assert denied.status_code == 403
    client.force_authenticate(member)
    ok = capture(client, project=f"{team.slug}/{project.slug}", messages=[])
    assert ok.status_code == 201
    unknown = capture(client, project="nope/nope", messages=[])
    assert unknown.status_code == 404
