"""Input the database cannot store is a 400 naming the field, with nothing written (issue 14
#6): strings over their column's length, NUL and lone surrogates in JSON, JSON nested too
deeply, time zone offsets PostgreSQL refuses. Each of these used to be a 500."""

from __future__ import annotations

import json

import pytest
from django.contrib.postgres.fields import ArrayField
from django.db import models
from rest_framework import serializers
from rest_framework.test import APIClient

from sessions.api.serializers import (
    MessageInSerializer,
    SessionCaptureSerializer,
    SessionPatchSerializer,
)
from sessions.models import Message, Session
from teams.models import ApiToken
from transcripts.sanitize import MAX_JSON_DEPTH

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def session_id(agent):
    response = agent.post(
        "/api/v1/sessions",
        {
            "agent_name": "architect",
            "metadata": {"kept": "yes"},
            "messages": [{"role": "user", "content": "hi"}],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def nothing_written():
    return Session.objects.count() == 0 and Message.objects.count() == 0


def model_string_limits(model, serializer_class) -> dict[str, int]:
    """The serializer's string fields (and lists of strings) whose model column has a
    length, with that length, read from the model (not from the serializer)."""
    limits = {}
    for name, field in serializer_class().fields.items():
        if field.read_only or not isinstance(field, serializers.CharField | serializers.ListField):
            continue
        try:
            column = model._meta.get_field(name)
        except Exception:
            continue
        if isinstance(column, ArrayField):
            column = column.base_field
        if isinstance(column, models.CharField) and not column.choices:
            limits[name] = column.max_length
    return limits


SESSION_LIMITS = model_string_limits(Session, SessionCaptureSerializer)
MESSAGE_LIMITS = model_string_limits(Message, MessageInSerializer)
PATCH_LIMITS = model_string_limits(Session, SessionPatchSerializer)


def test_every_string_field_of_the_capture_serializers_has_its_columns_length():
    assert {"workflow", "title", "agent_persona", "user_name", "external_id"} <= set(SESSION_LIMITS)
    assert {"author", "tool_name", "tool_call_id", "client_id"} <= set(MESSAGE_LIMITS)
    for serializer_class, limits in [
        (SessionCaptureSerializer, SESSION_LIMITS),
        (MessageInSerializer, MESSAGE_LIMITS),
        (SessionPatchSerializer, PATCH_LIMITS),
    ]:
        fields = serializer_class().fields
        for name, limit in limits.items():
            field = fields[name]
            field = getattr(field, "child", field)
            assert field.max_length == limit, (serializer_class.__name__, name)


def over(limit: int, name: str):
    value = "w" * (limit + 1)
    return [value] if name in ("topics", "artifacts") else value


def test_a_300_character_workflow_is_a_400_naming_it(agent):
    response = agent.post(
        "/api/v1/sessions", {"agent_name": "architect", "workflow": "w" * 300}, format="json"
    )
    assert response.status_code == 400
    assert "100 characters" in response.json()["workflow"][0]
    assert nothing_written()


@pytest.mark.parametrize("name", sorted(SESSION_LIMITS))
def test_every_session_string_over_its_column_is_a_400_naming_it(agent, name):
    payload = {
        "agent_name": "architect",
        "messages": [{"role": "user", "content": "hi"}],
        name: over(SESSION_LIMITS[name], name),
    }
    response = agent.post("/api/v1/sessions", payload, format="json")
    assert response.status_code == 400, response.content
    assert name in response.json()
    assert nothing_written()


@pytest.mark.parametrize("name", sorted(MESSAGE_LIMITS))
def test_every_message_string_over_its_column_is_a_400_naming_it(agent, name):
    message = {"role": "user", "content": "hi", name: over(MESSAGE_LIMITS[name], name)}
    response = agent.post(
        "/api/v1/sessions", {"agent_name": "architect", "messages": [message]}, format="json"
    )
    assert response.status_code == 400, response.content
    assert name in json.dumps(response.json()["messages"])
    assert nothing_written()


@pytest.mark.parametrize("name", sorted(MESSAGE_LIMITS))
def test_an_appended_message_over_its_column_is_a_400_naming_it(agent, session_id, name):
    response = agent.post(
        f"/api/v1/sessions/{session_id}/messages",
        {"role": "user", "content": "more", name: over(MESSAGE_LIMITS[name], name)},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert name in json.dumps(response.json())
    assert Message.objects.count() == 1


@pytest.mark.parametrize("name", sorted(PATCH_LIMITS))
def test_a_patch_over_a_column_is_a_400_naming_it(agent, session_id, name):
    before = Session.objects.values().get(public_id=session_id)
    response = agent.patch(
        f"/api/v1/sessions/{session_id}", {name: over(PATCH_LIMITS[name], name)}, format="json"
    )
    assert response.status_code == 400, response.content
    assert name in response.json()
    assert Session.objects.values().get(public_id=session_id) == before


# --- NUL and lone surrogates in JSON --------------------------------------------------------


def test_patch_metadata_with_nul_is_stored_without_it_as_capture_does(agent, session_id):
    response = agent.patch(
        f"/api/v1/sessions/{session_id}",
        b'{"metadata": {"note": "a\\u0000b", "k\\u0000ey": ["x\\u0000"]}}',
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    stored = Session.objects.get(public_id=session_id).metadata
    assert stored == {"kept": "yes", "note": "ab", "key": ["x"]}
    assert response.json()["metadata"] == stored


def test_patch_metadata_with_a_lone_surrogate_is_a_400_naming_it(agent, session_id):
    response = agent.patch(
        f"/api/v1/sessions/{session_id}",
        b'{"metadata": {"note": "a\\ud800b"}, "title": "new"}',
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert "surrogate" in response.json()["metadata"][0]
    session = Session.objects.get(public_id=session_id)
    assert session.metadata == {"kept": "yes"} and session.title != "new"


@pytest.mark.parametrize(
    "body, where",
    [
        (b'{"agent_name": "a", "metadata": {"k": "x\\udc00"}}', ["metadata"]),
        (
            b'{"agent_name": "a", "messages": [{"role": "user", "content": "hi", '
            b'"metadata": {"\\ud83d": 1}}]}',
            ["messages", "0", "metadata"],
        ),
    ],
)
def test_capture_metadata_with_a_lone_surrogate_is_a_400_naming_it(agent, body, where):
    response = agent.post("/api/v1/sessions", body, content_type="application/json")
    assert response.status_code == 400, response.content
    errors = response.json()
    for key in where:
        errors = errors[key]
    assert "surrogate" in errors[0]
    assert nothing_written()


def test_a_surrogate_pair_escape_is_fine(agent):
    response = agent.post(
        "/api/v1/sessions",
        b'{"agent_name": "a", "metadata": {"k": "\\ud83d\\ude80"}, '
        b'"messages": [{"role": "user", "content": "\\ud83d\\ude80 deployed"}]}',
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert Session.objects.get().metadata == {"k": "🚀"}


def test_a_lone_surrogate_in_an_openai_chat_import_is_replaced_not_a_500(agent):
    data = (
        b'[{"role": "user", "content": "what is h\\ud800i?"},'
        b' {"role": "assistant", "content": "a lone \\udfff half", "name": "bot\\ud800"}]'
    )
    response = agent.post(
        "/api/v1/import?format=openai_chat", data, content_type="application/octet-stream"
    )
    assert response.status_code == 201, response.content
    user, assistant = Message.objects.order_by("seq")
    assert user.content == "what is h\ufffdi?"
    assert assistant.content == "a lone \ufffd half"


# --- JSON nested too deeply ------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 5_000])
def test_json_nested_too_deeply_is_a_400_naming_the_body(agent, depth):
    body = f'{{"agent_name": "a", "metadata": {{"x": {nested(depth)}}}}}'.encode()
    response = agent.post("/api/v1/sessions", body, content_type="application/json")
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert "request body" in detail and f"{MAX_JSON_DEPTH} levels" in detail
    assert nothing_written()


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 5_000])
def test_search_body_nested_too_deeply_is_a_400_naming_the_body(agent, depth):
    body = f'{{"q": {nested(depth)}}}'.encode()
    response = agent.post("/api/v1/search", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "request body" in response.json()["detail"]


def test_json_nested_up_to_the_limit_is_stored(agent):
    # The session object is level 1 and metadata level 2: 100 levels in all.
    inner = nested(MAX_JSON_DEPTH - 2)
    body = f'{{"agent_name": "a", "metadata": {{"x": {inner}}}}}'.encode()
    response = agent.post("/api/v1/sessions", body, content_type="application/json")
    assert response.status_code == 201, response.content
    export = agent.get(f"/api/v1/sessions/{response.json()['id']}/export?format=yaml")
    assert export.status_code == 200
    b"".join(export.streaming_content)


def test_an_import_line_nested_too_deeply_is_a_400_naming_the_line(agent):
    good = json.dumps({"ts": 1704067200, "session_id": "s", "sender": "user", "text": "hi"})
    deep = json.dumps({"ts": 1704067201, "session_id": "s", "sender": "user", "text": "x"})
    deep = deep[:-1] + f', "extra": {nested(2_000)}}}'
    response = agent.post(
        "/api/v1/events", f"{good}\n{deep}\n".encode(), content_type="application/x-ndjson"
    )
    assert response.status_code == 400, response.content
    assert response.json()["line"] == 2
    assert "levels deep" in response.json()["detail"]
    assert nothing_written()


# --- Numbers jsonb cannot hold ---------------------------------------------------------------
# Python's json reads NaN, Infinity and 1e400 (as nan/inf) and PostgreSQL's jsonb refuses
# them at INSERT: each was a 500 after the parse, in the API and in every importer.

NON_FINITE = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity"]


def counts():
    return Session.objects.count(), Message.objects.count()


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_number_in_a_capture_is_a_400_naming_it(agent, number):
    body = (
        f'{{"agent_name": "a", "metadata": {{"cost": {number}}}, '
        '"messages": [{"role": "user", "content": "hi"}]}'
    )
    response = agent.post("/api/v1/sessions", body.encode(), content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "MEM_E101"
    assert f"the number {number} is not a finite number" in response.json()["detail"]
    assert nothing_written()


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_number_in_an_append_or_a_patch_is_a_400(agent, session_id, number):
    before = counts()
    message = f'{{"role": "user", "content": "x", "metadata": {{"v": {number}}}}}'
    for method, path, body in [
        ("post", f"/api/v1/sessions/{session_id}/messages", f'{{"messages": [{message}]}}'),
        ("patch", f"/api/v1/sessions/{session_id}", f'{{"metadata": {{"v": {number}}}}}'),
    ]:
        response = getattr(agent, method)(path, body.encode(), content_type="application/json")
        assert response.status_code == 400, (method, response.content)
        assert number in response.json()["detail"]
    assert counts() == before
    assert Session.objects.get(public_id=session_id).metadata == {"kept": "yes"}


def test_the_largest_finite_numbers_are_stored(agent):
    body = '{"agent_name": "a", "metadata": {"big": 1.7e308, "small": -1e-320, "n": 1e3}}'
    response = agent.post("/api/v1/sessions", body.encode(), content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["metadata"] == {"big": 1.7e308, "small": -1e-320, "n": 1000.0}


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_number_in_an_imported_line_is_a_400_naming_the_line(agent, number):
    first = {
        "type": "user",
        "sessionId": "cc-nan",
        "uuid": "u1",
        "timestamp": "2025-01-01T00:00:00Z",
        "message": {"role": "user", "content": "why did the deploy fail?"},
    }
    second = json.dumps({**first, "uuid": "u2", "costUSD": 0.5}).replace("0.5", number)
    body = f"{json.dumps(first)}\n{second}\n".encode()
    response = agent.post("/api/v1/import?format=claude_code", body, content_type="text/plain")
    assert response.status_code == 400, response.content
    assert response.json()["line"] == 2
    assert number in response.json()["detail"]
    assert nothing_written()


def test_a_non_finite_number_in_an_imported_export_is_a_400(agent, session_id):
    exported = agent.get(f"/api/v1/sessions/{session_id}/export?format=json")
    document = json.loads(b"".join(exported.streaming_content))
    document["session"]["external_id"] = "from-export"
    document["messages"][0]["metadata"] = {"score": 0.25}
    text = json.dumps(document).replace("0.25", "NaN")
    before = counts()
    response = agent.post(
        "/api/v1/import?filename=s.json", text.encode(), content_type="text/plain"
    )
    assert response.status_code == 400, response.content
    assert "NaN" in response.json()["detail"]
    assert counts() == before


@pytest.mark.parametrize("number", [".inf", "-.Inf", ".nan"])
def test_a_non_finite_number_in_an_imported_yaml_export_is_a_400_naming_the_line(
    agent, session_id, number
):
    exported = agent.get(f"/api/v1/sessions/{session_id}/export?format=yaml")
    text = b"".join(exported.streaming_content).decode()
    text = text.replace("external_id: ''", "external_id: from-yaml")
    assert "kept: 'yes'" in text
    text = text.replace("kept: 'yes'", f"kept: {number}")
    line = text.splitlines().index(f"    kept: {number}") + 1
    before = counts()
    response = agent.post(
        "/api/v1/import?filename=s.yaml", text.encode(), content_type="text/plain"
    )
    assert response.status_code == 400, response.content
    assert response.json()["line"] == line
    assert number in response.json()["detail"]
    assert counts() == before


# --- Time zone offsets -----------------------------------------------------------------------

OUT_OF_RANGE = "2025-01-01T00:00:00-22:18"


@pytest.mark.parametrize("name", ["started_before", "started_after", "ended_before", "ended_after"])
def test_a_list_filter_with_an_offset_out_of_range_is_a_400_naming_it(agent, name):
    response = agent.get("/api/v1/sessions", {name: OUT_OF_RANGE})
    assert response.status_code == 400, response.content
    assert "-22:18" in response.json()[name][0]
    assert agent.get("/api/v1/sessions", {name: "2025-01-01T00:00:00+05:30"}).status_code == 200


@pytest.mark.parametrize("name", ["started_before", "started_after"])
def test_a_search_filter_with_an_offset_out_of_range_is_a_400_naming_it(agent, name):
    for response in (
        agent.get("/api/v1/search", {"q": "deploy", name: OUT_OF_RANGE}),
        agent.post("/api/v1/search", {"q": "deploy", name: OUT_OF_RANGE}, format="json"),
    ):
        assert response.status_code == 400, response.content
        assert "-22:18" in response.json()[name][0]


def test_an_imported_time_with_an_odd_offset_is_stored_in_utc(agent):
    line = {"ts": OUT_OF_RANGE, "session_id": "s", "sender": "user", "text": "hi"}
    response = agent.post(
        "/api/v1/events", json.dumps(line).encode(), content_type="application/x-ndjson"
    )
    assert response.status_code == 201, response.content
    assert Message.objects.get().timestamp.isoformat() == "2025-01-01T22:18:00+00:00"


@pytest.mark.parametrize(
    "event, field",
    [
        ({"session_id": "s" * 256}, "external_id"),
        ({"char_id": "a" * 65}, "agent_name"),
    ],
)
def test_an_imported_identifier_too_long_to_store_is_a_400_naming_it(agent, event, field):
    first = {"ts": 1704067200, "session_id": "ok", "sender": "user", "text": "hi"}
    line = {"ts": 1704067201, "session_id": "s", "sender": "user", "text": "x", **event}
    response = agent.post(
        "/api/v1/events",
        f"{json.dumps(first)}\n{json.dumps(line)}\n".encode(),
        content_type="application/x-ndjson",
    )
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert nothing_written()


def test_an_imported_message_id_too_long_to_store_is_a_400_naming_it(agent):
    data = json.dumps(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo", "id": "i" * 256}]
    )
    response = agent.post(
        "/api/v1/import?format=openai_chat", data.encode(), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "messages[1].client_id"
    assert nothing_written()
