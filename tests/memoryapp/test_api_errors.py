"""Every API error is JSON (issue 14 #7): DRF's errors, Django's 400/403/404/405/413, a view
that raises (500 with a request id, logged with its traceback) and the database out of reach
(503 with Retry-After), wherever it is raised. UI paths keep HTML pages."""

from __future__ import annotations

import logging
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from core.error_codes import ErrorCode
from sessions.models import Session
from teams.models import ApiToken, Role
from tests.factories import MembershipFactory, ProjectFactory

TRACEBACK_MARKERS = ("Traceback", "password=hunter2", 'File "')


def api_client(**credentials) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.credentials(**credentials)
    return client


def assert_json_error(response, status):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["code"] in {code.value for code in ErrorCode}, body
    for marker in TRACEBACK_MARKERS:
        assert marker not in response.content.decode()
    return body


# --- Django's own errors under /api/ ------------------------------------------------------


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404_and_a_ui_url_keeps_its_page(client):
    client.raise_request_exception = False
    body = assert_json_error(client.get("/api/v1/no-such-thing"), 404)
    assert "/api/v1/no-such-thing" in body["detail"]
    page = client.get("/no-such-page")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_a_bad_host_under_the_api_is_a_json_400():
    client = APIClient(raise_request_exception=False)
    body = assert_json_error(client.get("/api/v1/sessions", HTTP_HOST="evil.example"), 400)
    assert "ALLOWED_HOSTS" in body["detail"]


@pytest.mark.django_db
def test_a_method_refused_by_a_plain_django_view_is_json():
    response = APIClient(raise_request_exception=False).post("/healthz")
    body = assert_json_error(response, 405)
    assert response["Allow"] == "GET"
    assert "GET" in body["detail"]


def test_form_data_too_big_for_django_is_a_json_413_with_the_limit(project, settings):
    # Django's own limit on in-memory form fields, checked while the multipart body is read
    # (the middleware's Content-Length check uses MAX_REQUEST_BYTES, larger here).
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    _, raw = ApiToken.issue(project)
    client = api_client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.post("/api/v1/import", {"project": "x" * 5000}, format="multipart")
    body = assert_json_error(response, 413)
    assert body["limit_bytes"] == 1000


# --- A view that raises -------------------------------------------------------------------


@pytest.mark.urls("tests.memoryapp.failing_urls")
@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/test-raises", "/api/v1/test-raises-django"])
def test_an_unhandled_exception_is_a_json_500_with_a_request_id_in_the_log(path, caplog):
    with caplog.at_level(logging.ERROR):
        response = api_client().get(path)
    body = assert_json_error(response, 500)
    request_id = body["request_id"]
    assert request_id in body["detail"]
    assert response["X-Request-ID"] == request_id
    logged = [r for r in caplog.records if request_id in r.getMessage()]
    assert len(logged) == 1, [r.getMessage() for r in caplog.records]
    assert logged[0].exc_info and "password=hunter2" in str(logged[0].exc_info[1])
    # Logged once, with the id: Django does not log the same traceback again.
    assert sum(1 for r in caplog.records if r.exc_info) == 1


@pytest.mark.urls("tests.memoryapp.failing_urls")
@pytest.mark.django_db
def test_an_unhandled_exception_on_a_ui_page_keeps_the_html_500(caplog):
    response = Client(raise_request_exception=False).get("/ui-raises")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")
    assert "hunter2" not in response.content.decode()
    assert response["X-Request-ID"]


# --- The database out of reach --------------------------------------------------------------


@contextmanager
def database_unreachable(tmp_path):
    """Point the connection at a folder where no PostgreSQL listens: every query from here on
    fails to connect, as when the server is down."""
    settings_dict = connection.settings_dict
    saved = {key: settings_dict[key] for key in ("HOST", "PORT")}
    connection.close()
    settings_dict.update(HOST=str(tmp_path), PORT="")
    try:
        yield
    finally:
        connection.close()
        settings_dict.update(saved)


@contextmanager
def backends_terminated_and_logins_refused():
    """The server itself goes away for this database: every backend is terminated (the
    open connection breaks mid-use) and new connections are refused until the end."""
    params = connection.get_connection_params()
    name = connection.settings_dict["NAME"]
    connection.ensure_connection()
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        try:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                [name],
            )
            yield
        finally:
            admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
            connection.close()


def assert_database_503(response):
    body = assert_json_error(response, 503)
    assert body["unavailable"] == "database"
    assert response["Retry-After"] == str(body["retry_after"])
    assert int(response["Retry-After"]) > 0
    assert "PostgreSQL" in body["detail"] and "Try again" in body["detail"]


@pytest.fixture
def agent_token(project):
    _, raw = ApiToken.issue(project)
    return raw


@pytest.mark.django_db(transaction=True)
def test_database_down_during_token_authentication_is_a_json_503(agent_token, tmp_path):
    client = api_client(HTTP_AUTHORIZATION=f"Bearer {agent_token}")
    with database_unreachable(tmp_path):
        assert_database_503(client.get("/api/v1/sessions"))
        assert_database_503(
            client.post(
                "/api/v1/sessions",
                {"agent_name": "a", "messages": [{"role": "user", "content": "hi"}]},
                format="json",
            )
        )
        assert_database_503(client.get("/api/v1/search", {"q": "deploy"}))
    # And the next request, with the database back, works.
    assert client.get("/api/v1/sessions").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_database_down_during_session_authentication_is_a_json_503(team, tmp_path):
    person = MembershipFactory(team=team, role=Role.OWNER).user
    ProjectFactory(team=team)
    client = APIClient(raise_request_exception=False)
    client.force_login(person)
    with database_unreachable(tmp_path):
        assert_database_503(client.get("/api/v1/sessions"))


@pytest.mark.django_db(transaction=True)
def test_database_down_in_a_middleware_is_a_json_503(agent_token, tmp_path, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "tests.memoryapp.test_api_errors.QueryFirst"]
    client = api_client(HTTP_AUTHORIZATION=f"Bearer {agent_token}")
    with database_unreachable(tmp_path):
        assert_database_503(client.get("/api/v1/pipeline"))
        assert_database_503(client.get("/api/v1/no-such-thing"))


class QueryFirst:
    """A middleware that reads the database before any view runs."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        Session.objects.exists()
        return self.get_response(request)


@pytest.mark.django_db(transaction=True)
def test_backends_terminated_mid_request_is_a_json_503_and_nothing_half_written(
    agent_token, caplog
):
    client = api_client(HTTP_AUTHORIZATION=f"Bearer {agent_token}")
    payload = {"agent_name": "a", "messages": [{"role": "user", "content": "hi"}]}
    with caplog.at_level(logging.WARNING), backends_terminated_and_logins_refused():
        assert_database_503(client.post("/api/v1/sessions", payload, format="json"))
        assert_database_503(client.get("/api/v1/sessions"))
    # One line per failed request, no traceback.
    outage_lines = [r for r in caplog.records if "database unavailable" in r.getMessage()]
    assert len(outage_lines) == 2 and not any(r.exc_info for r in outage_lines)
    assert Session.objects.count() == 0
    assert client.post("/api/v1/sessions", payload, format="json").status_code == 201


@pytest.mark.django_db(transaction=True)
def test_database_down_on_a_ui_page_is_a_plain_503_page(team, tmp_path):
    person = MembershipFactory(team=team, role=Role.OWNER).user
    client = Client(raise_request_exception=False)
    client.force_login(person)
    with database_unreachable(tmp_path):
        response = client.get("/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert "Service unavailable" in page and "PostgreSQL" in page
    for marker in TRACEBACK_MARKERS:
        assert marker not in page


def test_statement_errors_are_not_mistaken_for_an_outage():
    from core.api_errors import unavailable_service

    assert unavailable_service(psycopg.errors.DeadlockDetected("deadlock detected")) is None
    assert unavailable_service(psycopg.errors.QueryCanceled("statement timeout")) is None
    assert unavailable_service(ValueError("x")) is None
    assert unavailable_service(psycopg.errors.AdminShutdown("terminating")) == "database"
    assert unavailable_service(psycopg.OperationalError("connection failed")) == "database"


# --- the domain's errors, answered in one place -----------------------------------------


def test_domain_errors_map_to_their_answers_and_nothing_else_does():
    from core.api_errors import domain_error_response
    from sessions.capture.service import CaptureError, QuotaExceeded
    from sessions.forget.lifecycle import LifecycleConflict
    from transcripts.base import ImportFormatError

    trashed = domain_error_response(CaptureError("in the trash", status=409))
    assert (trashed.status_code, trashed.data) == (409, {"detail": "in the trash"})
    quota = domain_error_response(
        QuotaExceeded(session_bytes=20, quota_bytes=10, project="t/p", label="s")
    )
    assert quota.status_code == 413
    assert (quota.data["session_bytes"], quota.data["quota_bytes"]) == (20, 10)
    unreadable = domain_error_response(ImportFormatError("bad JSON", line=3, field="ts"))
    assert unreadable.status_code == 400
    assert unreadable.data == {"detail": "line 3, field 'ts': bad JSON", "line": 3, "field": "ts"}
    conflict = domain_error_response(LifecycleConflict("not in the trash"))
    assert (conflict.status_code, conflict.data) == (409, {"detail": "not in the trash"})
    assert domain_error_response(ValueError("a bug")) is None


def test_an_errors_own_code_comes_before_its_kind_and_its_status():
    from core.api_errors import exception_handler
    from sessions.capture.service import CaptureError, QuotaExceeded

    class CompactionFailed(CaptureError):
        code = ErrorCode.COMPACTION_FAILED

    class Relabelled(QuotaExceeded):
        code = "MEM_E006"

    quota = exception_handler(
        QuotaExceeded(session_bytes=20, quota_bytes=10, project="t/p", label="s"), {}
    )
    assert (quota.status_code, quota.data["code"]) == (413, "MEM_E001")
    failed = exception_handler(CompactionFailed("no room", status=413), {})
    assert failed.data == {"detail": "no room", "code": "MEM_E006"}
    relabelled = Relabelled(session_bytes=20, quota_bytes=10, project="t/p", label="s")
    assert exception_handler(relabelled, {}).data["code"] == "MEM_E006"
    # A code that is not one of ours (Django's ValidationError has codes like "invalid") is
    # ignored: the answer's status decides.
    foreign = CaptureError("bad", status=400)
    foreign.code = "invalid"
    assert exception_handler(foreign, {}).data["code"] == "MEM_E100"
