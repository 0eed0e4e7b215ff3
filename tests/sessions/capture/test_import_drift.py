"""A file with records its importer does not know imports what it can read and says what it
skipped (the API's ``skipped``, the CLI's summary line); a file of nothing readable is a 400
naming what it held, with nothing written."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from memoryapp_client.cli import main
from sessions.models import Session
from teams.models import ApiToken
from tests.transcripts.helpers import FIXTURES, SAMPLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def _drifted_claude_code() -> bytes:
    lines = (SAMPLES / "claude_code" / "raze.jsonl").read_bytes().splitlines()
    future = [
        json.dumps({"type": "zz-hook-event", "sessionId": "s", "hook": {"name": n}}).encode()
        for n in ("a", "b")
    ]
    return b"\n".join([lines[0], future[0], *lines[1:], future[1]])


def test_the_import_answer_counts_the_unknown_records(agent):
    plain = agent.post(
        "/api/v1/import?format=claude_code",
        (SAMPLES / "claude_code" / "raze.jsonl").read_bytes(),
        content_type="application/octet-stream",
    )
    assert plain.status_code == 201, plain.content
    assert plain.json()["skipped"] == {}
    Session.objects.all().delete()

    response = agent.post(
        "/api/v1/import", _drifted_claude_code(), content_type="application/octet-stream"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["skipped"] == {"unknown record type 'zz-hook-event'": 2}
    assert body["sessions"][0]["messages_added"] == plain.json()["sessions"][0]["messages_added"]


def test_a_file_of_unknown_records_only_is_a_400_and_writes_nothing(agent):
    data = b'{"role": "zzcritic", "content": "a"}\n{"role": "zzcritic", "content": "b"}\n'
    response = agent.post(
        "/api/v1/import?format=anthropic_session", data, content_type="application/octet-stream"
    )
    assert response.status_code == 400
    assert "unknown role 'zzcritic' (2)" in response.json()["detail"]
    assert not Session.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_cli_summary_line_names_the_skipped_records(
    monkeypatch, live_server, project, tmp_path, capsys
):
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", ApiToken.issue(project, name="cli")[1])
    path = tmp_path / "drifted.jsonl"
    path.write_bytes(_drifted_claude_code())
    assert main(["capture", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 unknown record(s) skipped (unknown record type 'zz-hook-event': 2)" in out


def test_import_sessions_counts_the_skipped_records(tmp_path):
    path = tmp_path / "drifted.jsonl"
    path.write_bytes(_drifted_claude_code())
    out = StringIO()
    call_command("import_sessions", str(path), "--team", "acme", "--project", "web", stdout=out)
    assert "2 unknown record(s) skipped" in out.getvalue()
    assert Session.objects.filter(source_format="claude_code").count() == 1


def test_every_new_format_imports_through_the_api(agent):
    """The fixtures of the new formats, detected and stored as their own source format."""
    for path, fmt in [
        (FIXTURES / "managed_agent" / "session-events.jsonl", "anthropic_managed_agent"),
        (FIXTURES / "gemini_cli" / "session-2026-03-02T09-14-9a8b7c6d.jsonl", "gemini_cli"),
        (FIXTURES / "cursor" / "cursor_add_rate_limiting_to_the_login_route.md", "cursor"),
        (FIXTURES / "opencode" / "ses_6b1f0c2a3ffeQ9tWmZ4kV8nR2d.json", "opencode"),
    ]:
        response = agent.post(
            f"/api/v1/import?filename={path.name}",
            path.read_bytes(),
            content_type="application/octet-stream",
        )
        assert response.status_code == 201, (fmt, response.content)
        assert response.json()["format"] == fmt
        assert response.json()["skipped"] == {}
        assert Session.objects.filter(source_format=fmt).count() == 1
