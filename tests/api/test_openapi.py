"""The OpenAPI schema tells the truth: answers as documented, the token scheme declared and
applied, the error answers of every endpoint listed, NDJSON events sendable from it."""

from __future__ import annotations

import json
import os

import pytest
from django.core.management import call_command
from schemathesis.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from core.error_codes import ErrorCode
from tests.api.conftest import ALIVE_ID, TRASHED_ID, load_schema

pytestmark = pytest.mark.django_db

schema = load_schema()
document = schema.raw_schema
CONFORMANCE = [
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

# Every status code each endpoint can answer, as documented.
DOCUMENTED = {
    "GET /api/v1/sessions": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/sessions": {200, 201, 400, 401, 403, 404, 409, 413, 415, 503},
    "GET /api/v1/sessions/{id}": {200, 401, 403, 404, 503},
    "PATCH /api/v1/sessions/{id}": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "DELETE /api/v1/sessions/{id}": {204, 400, 401, 403, 404, 409, 503},
    "GET /api/v1/sessions/{id}/messages": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/sessions/{id}/messages": {201, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/sessions/{id}/restore": {200, 401, 403, 404, 409, 503},
    "GET /api/v1/sessions/{id}/export": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/sessions/{id}/similar": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/sessions/{id}/resume": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/import": {201, 400, 401, 403, 404, 409, 413, 503},
    "POST /api/v1/events": {201, 400, 401, 403, 404, 409, 413, 503},
    "PATCH /api/v1/sessions/{id}/messages/{seq}": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/sessions/{id}/compact": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "GET /api/v1/sessions/{id}/size": {200, 401, 403, 404, 503},
    "GET /api/v1/pipeline": {200, 401, 403, 503},
    "GET /api/v1/retention": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/search": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/sessions/{id}/anonymize": {200, 400, 401, 403, 404, 413, 415, 503},
    "POST /api/v1/anonymize": {200, 202, 400, 401, 403, 404, 413, 415, 503},
    "GET /api/v1/anonymize/{job}": {200, 401, 403, 404, 503},
    "POST /api/v1/search": {200, 400, 401, 403, 404, 413, 415, 503},
    "POST /api/v1/context": {200, 400, 401, 403, 404, 413, 415, 503},
    "GET /api/v1/context": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/entities": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/aliases": {200, 400, 401, 403, 404, 503},
    "DELETE /api/v1/sessions/{id}/messages/{seq}": {204, 400, 401, 403, 404, 409, 503},
    "POST /api/v1/sessions/delete": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/sessions/visibility": {200, 400, 401, 403, 404, 413, 415, 503},
    "GET /api/v1/deletions": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/memories/export": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/memories/import": {201, 400, 401, 403, 404, 413, 503},
    "GET /api/v1/memories": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/memories": {200, 201, 400, 401, 403, 404, 409, 413, 415, 503},
    "GET /api/v1/memories/{id}": {200, 400, 401, 403, 404, 503},
    "PATCH /api/v1/memories/{id}": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "DELETE /api/v1/memories/{id}": {204, 400, 401, 403, 404, 409, 503},
    "POST /api/v1/memories/{id}/restore": {200, 400, 401, 403, 404, 409, 503},
    "GET /api/v1/memories/trash": {200, 400, 401, 403, 404, 503},
    "POST /api/v1/memories/delete": {200, 400, 401, 403, 404, 413, 415, 503},
    "POST /api/v1/memories/{id}/resolve": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/accept": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/confirm": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/reject": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/reopen": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/revert": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/unreject": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/visibility": {200, 400, 401, 403, 404, 413, 415, 503},
    "POST /api/v1/memories/review": {200, 400, 401, 403, 404, 409, 413, 415, 503},
    "POST /api/v1/memories/{id}/links": {201, 400, 401, 403, 404, 409, 413, 415, 503},
    "DELETE /api/v1/memories/{id}/links": {204, 400, 401, 403, 404, 503},
    "GET /api/v1/memories/{id}/related": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/memories/topics": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/memories/timeline": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/agent-states/{agent}": {200, 400, 401, 403, 404, 503},
    "PUT /api/v1/agent-states/{agent}": {200, 201, 400, 401, 403, 404, 413, 415, 503},
    "GET /api/v1/people/{person}/recent": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/diary": {200, 400, 401, 403, 404, 503},
    "GET /api/v1/diary/export": {200, 400, 401, 403, 404, 503},
}


def operations():
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {path}", operation


def call(path, method, auth, **case_kwargs):
    case = schema[path][method].Case(**case_kwargs)
    response = case.call(headers=auth)
    case.validate_response(response, checks=CONFORMANCE, headers=auth)
    return response


def test_the_schema_is_valid_openapi_and_generates_without_warnings():
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", os.devnull)


def test_every_endpoint_documents_the_status_codes_it_answers():
    documented = {label: {int(code) for code in op["responses"]} for label, op in operations()}
    assert documented == DOCUMENTED


def test_every_error_answer_is_a_json_object_with_detail():
    for label, operation in operations():
        for code, response in operation["responses"].items():
            if int(code) < 400:
                continue
            ref = response["content"]["application/json"]["schema"]["$ref"]
            expected = "ValidationError" if code == "400" else "Error"
            assert ref == f"#/components/schemas/{expected}", (label, code)
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["code", "detail"]
    assert error["properties"]["detail"] == {"type": "string"}
    validation = document["components"]["schemas"]["ValidationError"]
    assert "detail" in validation["properties"] and validation["required"] == ["code"]


def test_every_error_answer_lists_every_error_code():
    codes = document["components"]["schemas"]["ErrorCodeEnum"]
    assert codes["enum"] == [code.value for code in ErrorCode]
    assert {
        "MEM_E001",
        "MEM_E002",
        "MEM_E003",
        "MEM_E004",
        "MEM_E005",
        "MEM_E006",
        "MEM_E007",
    } <= set(codes["enum"])
    for name in ("Error", "ValidationError"):
        code = document["components"]["schemas"][name]["properties"]["code"]
        assert code["allOf"] == [{"$ref": "#/components/schemas/ErrorCodeEnum"}]


def test_retry_after_is_documented_on_503():
    for label, operation in operations():
        headers = operation["responses"]["503"]["headers"]
        assert headers["Retry-After"]["schema"] == {"type": "integer"}, label


def test_the_bearer_token_scheme_is_declared_and_applied():
    scheme = document["components"]["securitySchemes"]["ApiToken"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    assert scheme["bearerFormat"] == "mem_…"
    for label, operation in operations():
        assert {"ApiToken": []} in operation["security"], label


def test_an_append_answers_201_with_the_messages_added(auth):
    content = document["paths"]["/api/v1/sessions/{id}/messages"]["post"]["responses"]["201"]
    assert content["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AppendResult"
    }
    response = call(
        "/api/v1/sessions/{id}/messages",
        "POST",
        auth,
        path_parameters={"id": ALIVE_ID},
        body={"messages": [{"role": "user", "content": "And rotate them yearly?"}]},
        media_type="application/json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["session"] == ALIVE_ID
    assert body["messages_added"] == 1
    assert [m["content"] for m in body["messages"]] == ["And rotate them yearly?"]


def test_an_append_to_a_trashed_session_answers_a_documented_409(auth):
    response = call(
        "/api/v1/sessions/{id}/messages",
        "POST",
        auth,
        path_parameters={"id": TRASHED_ID},
        body={"role": "user", "content": "Still there?"},
        media_type="application/json",
    )
    assert response.status_code == 409
    assert "restore it" in response.json()["detail"]


def test_a_capture_answers_the_session_with_what_it_added(auth):
    for code in ("200", "201"):
        answer = document["paths"]["/api/v1/sessions"]["post"]["responses"][code]
        ref = answer["content"]["application/json"]["schema"]["$ref"]
        properties = document["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
        assert {"id", "messages_added", "duplicates_skipped"} <= set(properties)
    response = call(
        "/api/v1/sessions",
        "POST",
        auth,
        body={"agent_name": "architect", "messages": [{"role": "user", "content": "Hi"}]},
        media_type="application/json",
    )
    assert response.status_code == 201
    assert response.json()["messages_added"] == 1


@pytest.mark.parametrize("fmt", ["json", "jsonl", "markdown", "yaml"])
def test_every_export_format_answers_a_documented_content_type(auth, fmt):
    response = call(
        "/api/v1/sessions/{id}/export",
        "GET",
        auth,
        path_parameters={"id": ALIVE_ID},
        query={"format": fmt},
    )
    assert response.status_code == 200


def test_an_entity_search_answers_as_documented(auth):
    # No query: entity mode, whose answer has no took_ms.
    response = call("/api/v1/search", "GET", auth, query={"entity_type": "FILE"})
    assert response.json()["mode"] == "entity"


def test_errors_answer_as_documented(auth):
    assert call("/api/v1/sessions", "GET", {}).status_code == 401
    missing = call("/api/v1/sessions/{id}", "GET", auth, path_parameters={"id": "nope"})
    assert missing.status_code == 404
    too_many = call("/api/v1/sessions", "GET", auth, query={"limit": "0"})
    assert too_many.status_code == 400
    assert "limit" in too_many.json()
    not_a_flag = call("/api/v1/sessions", "GET", auth, query={"deleted": "maybe"})
    assert not_a_flag.status_code == 400
    # An admin's action: the token acts as a member.
    delete = call("/api/v1/sessions/{id}", "DELETE", auth, path_parameters={"id": ALIVE_ID})
    assert delete.status_code == 403


def test_ndjson_events_can_be_sent_from_the_schema(auth):
    operation = document["paths"]["/api/v1/events"]["post"]
    body = operation["requestBody"]
    assert body["required"] is True
    assert list(body["content"]) == ["application/x-ndjson"]
    media = body["content"]["application/x-ndjson"]
    assert media["schema"]["type"] == "string"
    example = next(iter(media["examples"].values()))["value"]
    assert [json.loads(line)["sender"] for line in example.splitlines()] == ["user", "assistant"]
    response = call("/api/v1/events", "POST", auth, body=example, media_type="application/x-ndjson")
    assert response.status_code == 201
    assert response.json()["sessions"][0]["messages_added"] == 2


def test_an_empty_query_parameter_counts_as_not_given(auth):
    for label, operation in operations():
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query" and not parameter.get("required"):
                assert parameter["allowEmptyValue"] is True, (label, parameter["name"])
    session = {"path_parameters": {"id": ALIVE_ID}}
    export = call("/api/v1/sessions/{id}/export", "GET", auth, query={"format": ""}, **session)
    assert export.status_code == 200
    assert export.headers["content-type"] == ["application/json"]
    for path, name in (("similar", "limit"), ("resume", "lastn"), ("messages", "limit")):
        response = call(f"/api/v1/sessions/{{id}}/{path}", "GET", auth, query={name: ""}, **session)
        assert response.status_code == 200, path
    assert call("/api/v1/sessions", "GET", auth, query={"deleted": ""}).json()["results"]
