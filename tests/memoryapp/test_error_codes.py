"""Every API error body carries a stable ``code`` beside ``detail``: each code of
``core.error_codes`` reached by a real request, and the schema and docs list them all."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from core.error_codes import ErrorCode
from memories.models import Memory
from sessions.forget.lifecycle import soft_delete
from sessions.models import Session
from teams.models import ApiToken, Role
from tests.factories import MembershipFactory, ProjectFactory
from tests.search.corpus import capture

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


TOKEN_TALK = [
    ("user", "How should we store the auth tokens?"),
    ("assistant", "Hash them with SHA-256; show them once."),
]


def stored_session(project, title="Token storage") -> Session:
    return capture(project, TOKEN_TALK, title=title)


def token_client(project, permissions=("read", "write", "delete")) -> APIClient:
    _, raw = ApiToken.issue(project, permissions=list(permissions))
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


class World:
    """A project with a live and a trashed session, and callers of every kind."""

    def __init__(self):
        self.project = ProjectFactory()
        self.live = stored_session(self.project)
        self.trashed = soft_delete(stored_session(self.project, "Old"), by=None, reason="test")
        self.agent = token_client(self.project)
        self.reader = token_client(self.project, ("read",))
        self.anonymous = APIClient(raise_request_exception=False)
        viewer = MembershipFactory(team=self.project.team, role=Role.VIEWER).user
        self.viewer = APIClient(raise_request_exception=False)
        self.viewer.force_authenticate(viewer)

    def session_url(self, suffix=""):
        return f"/api/v1/sessions/{self.live.public_id}{suffix}"


def over_quota(w: World):
    w.project.session_quota_bytes = 1024
    w.project.save(update_fields=["session_quota_bytes"])
    big = {"agent_name": "a", "messages": [{"role": "user", "content": "x" * 2000}]}
    return w.agent.post("/api/v1/sessions", big, format="json")


def restore_too_late(w: World):
    """A memory deleted longer ago than its project's trash days cannot be restored."""
    memory = w.agent.post("/api/v1/memories", {"type": "fact", "content": "db-7"}, "json").json()
    w.agent.delete(f"/api/v1/memories/{memory['id']}?reason=moved")
    long_ago = timezone.now() - timedelta(days=w.project.trash_days + 1)
    Memory.objects.filter(project=w.project).update(deleted_at=long_ago)
    return w.agent.post(f"/api/v1/memories/{memory['id']}/restore")


# (code, HTTP status, the request that gets it)
TABLE = [
    (ErrorCode.QUOTA_EXCEEDED, 413, over_quota),
    (ErrorCode.CORRUPTION_DETECTED, 500, lambda w: w.anonymous.get("/api/v1/test-corrupted")),
    (ErrorCode.INVALID_QUERY, 400, lambda w: w.agent.get("/api/v1/search", {"limit": "-1"})),
    (
        ErrorCode.INVALID_QUERY,
        400,
        lambda w: w.agent.post("/api/v1/context", {"query": "x", "colour": 1}, format="json"),
    ),
    (ErrorCode.INVALID_QUERY, 400, lambda w: w.agent.get(w.session_url("/resume"), {"lastn": 0})),
    (
        ErrorCode.SESSION_NOT_FOUND,
        404,
        lambda w: w.agent.get("/api/v1/sessions/2025-01-15-nobody-000000"),
    ),
    (
        ErrorCode.SESSION_NOT_FOUND,
        404,
        lambda w: w.agent.get(f"/api/v1/sessions/{w.trashed.public_id}/similar"),
    ),
    (
        ErrorCode.COMPACTION_FAILED,
        413,
        lambda w: w.anonymous.post("/api/v1/test-compaction-fails"),
    ),
    (ErrorCode.RECOVERY_WINDOW_PASSED, 409, restore_too_late),
    (ErrorCode.VALIDATION_ERROR, 400, lambda w: w.agent.post("/api/v1/sessions", {}, "json")),
    (
        ErrorCode.VALIDATION_ERROR,
        400,
        lambda w: w.agent.get(w.session_url("/export"), {"format": "docx"}),
    ),
    (
        ErrorCode.MALFORMED_REQUEST,
        400,
        lambda w: w.agent.post("/api/v1/sessions", b'{"a": ', content_type="application/json"),
    ),
    (
        ErrorCode.MALFORMED_REQUEST,
        400,
        lambda w: w.agent.get("/api/v1/sessions", HTTP_HOST="evil.example"),
    ),
    (
        ErrorCode.IMPORT_UNREADABLE,
        400,
        lambda w: w.agent.post(
            "/api/v1/import?format=claude_code", b"not json\n", content_type="text/plain"
        ),
    ),
    (
        ErrorCode.TOO_LARGE,
        413,
        lambda w: w.agent.post(
            "/api/v1/sessions", b"{}", content_type="application/json", CONTENT_LENGTH="10" * 9
        ),
    ),
    (
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        415,
        lambda w: w.agent.post("/api/v1/sessions", b"<s/>", content_type="application/xml"),
    ),
    (ErrorCode.NOT_AUTHENTICATED, 401, lambda w: w.anonymous.get("/api/v1/sessions")),
    (
        ErrorCode.PERMISSION_DENIED,
        403,
        lambda w: w.viewer.patch(w.session_url(), {"title": "x"}, format="json"),
    ),
    (
        ErrorCode.TOKEN_PERMISSION_MISSING,
        403,
        lambda w: w.reader.post("/api/v1/sessions", {"agent_name": "a"}, format="json"),
    ),
    (ErrorCode.NOT_FOUND, 404, lambda w: w.agent.get("/api/v1/no-such-thing")),
    (ErrorCode.NOT_FOUND, 404, lambda w: w.agent.get("/api/v1/sessions", {"cursor": "bogus"})),
    (ErrorCode.METHOD_NOT_ALLOWED, 405, lambda w: w.agent.put(w.session_url(), {}, "json")),
    (ErrorCode.METHOD_NOT_ALLOWED, 405, lambda w: w.agent.post("/healthz")),
    (ErrorCode.NOT_ACCEPTABLE, 406, lambda w: w.agent.get(w.session_url(), HTTP_ACCEPT="text/csv")),
    (
        ErrorCode.CONFLICT,
        409,
        lambda w: w.agent.delete(f"/api/v1/sessions/{w.trashed.public_id}"),
    ),
    (
        ErrorCode.CONFLICT,
        409,
        lambda w: w.agent.post(
            f"/api/v1/sessions/{w.trashed.public_id}/messages",
            {"role": "user", "content": "x"},
            format="json",
        ),
    ),
    (ErrorCode.RATE_LIMITED, 429, lambda w: w.anonymous.get("/api/v1/test-throttled")),
    (ErrorCode.INTERNAL_ERROR, 500, lambda w: w.anonymous.get("/api/v1/test-raises")),
]
# Reached by the tests below, which need the database itself changed.
REACHED_ELSEWHERE = {ErrorCode.LOCK_TIMEOUT, ErrorCode.SERVICE_UNAVAILABLE}


def assert_error(response, status, code):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code.value, body
    assert "detail" in body or set(body) - {"code"}  # a message, or the fields in error
    return body


@pytest.mark.urls("tests.memoryapp.failing_urls")
@pytest.mark.django_db
@pytest.mark.parametrize(
    "code, status, request_it",
    TABLE,
    ids=[f"{code.value}-{status}-{i}" for i, (code, status, _) in enumerate(TABLE)],
)
def test_each_error_answers_its_code(code, status, request_it, caplog):
    with caplog.at_level(logging.CRITICAL):  # the 500s log their tracebacks on purpose
        assert_error(request_it(World()), status, code)


def test_every_code_is_reached_by_a_request_and_documented():
    reached = {code for code, _, _ in TABLE} | REACHED_ELSEWHERE
    assert reached == set(ErrorCode)
    docs = DOCS.read_text()
    for code in ErrorCode:
        assert f"| `{code.value}` |" in docs, f"{code.value} is not in docs/api.md"


@pytest.mark.django_db(transaction=True)
def test_a_lock_timeout_is_a_503_with_its_code_and_nothing_changes():
    """An operator's lock_timeout (none is set by the app) while another transaction holds
    the session's row: the delete gives up with 503 MEM_E002 and Retry-After."""
    w = World()
    name = connection.settings_dict["NAME"]
    params = connection.get_connection_params()
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE \"{name}\" SET lock_timeout = '300ms'")
        try:
            connection.close()  # the next connection takes the setting
            with psycopg.connect(**params) as holder:
                holder.execute(
                    f"SELECT 1 FROM {Session._meta.db_table} WHERE id = %s FOR UPDATE",
                    [w.live.pk],
                )
                response = w.agent.delete(w.session_url())
                holder.rollback()
        finally:
            admin.execute(f'ALTER DATABASE "{name}" RESET lock_timeout')
            connection.close()
    body = assert_error(response, 503, ErrorCode.LOCK_TIMEOUT)
    assert int(response["Retry-After"]) > 0 and body["retry_after"] > 0
    assert "lock_timeout" in body["detail"]
    w.live.refresh_from_db()
    assert w.live.deleted_at is None
    assert w.agent.delete(w.session_url()).status_code == 204  # and works once it is free


@pytest.mark.django_db(transaction=True)
def test_the_database_out_of_reach_is_a_503_with_its_code(tmp_path):
    client = token_client(ProjectFactory())
    settings_dict = connection.settings_dict
    saved = {key: settings_dict[key] for key in ("HOST", "PORT")}
    connection.close()
    settings_dict.update(HOST=str(tmp_path), PORT="")
    try:
        response = client.get("/api/v1/sessions")
    finally:
        connection.close()
        settings_dict.update(saved)
    body = assert_error(response, 503, ErrorCode.SERVICE_UNAVAILABLE)
    assert body["unavailable"] == "database"


def test_codes_are_unique_and_have_a_meaning():
    values = [code.value for code in ErrorCode]
    assert len(values) == len(set(values))
    assert all(code.meaning and code.value.startswith("MEM_E") for code in ErrorCode)
