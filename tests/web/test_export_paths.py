"""The UI's download and the API's export are one function: the same bytes and headers for
the same session, in every format."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from sessions.portable.session_export import FORMATS
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


def body_and_headers(response) -> tuple[bytes, str, str]:
    assert response.status_code == 200
    assert response.streaming
    body = b"".join(response.streaming_content)
    return body, response["Content-Type"], response["Content-Disposition"]


@pytest.mark.parametrize("fmt", [*FORMATS, "YAML", ""])
def test_ui_and_api_export_the_same_bytes(member, member_client, team_session, fmt):
    # Text export writers treat specially: line separators, a multi-line block, emoji.
    MessageFactory(
        session=team_session, seq=4, role="user", content="line\u2028break\n  indented 🔐"
    )
    api = APIClient()
    api.force_authenticate(member)
    ui = member_client.get(reverse("web:export", args=[team_session.public_id]), {"format": fmt})
    rest = api.get(f"/api/v1/sessions/{team_session.public_id}/export", {"format": fmt})
    ui_body, ui_type, ui_name = body_and_headers(ui)
    assert (ui_body, ui_type, ui_name) == body_and_headers(rest)
    if fmt == "anthropic_session":  # a zip: the text is in its transcript
        with zipfile.ZipFile(io.BytesIO(ui_body)) as archive:
            ui_body = archive.read(f"{team_session.public_id}/transcript.jsonl")
    assert b"Why does login redirect?" in ui_body and b"indented" in ui_body
    content_type, extension = FORMATS[fmt.lower() or "json"]
    assert ui_type == content_type
    assert ui_name == f'attachment; filename="{team_session.public_id}.{extension}"'


def test_an_unknown_format_is_refused_by_both(member, member_client, team_session):
    api = APIClient()
    api.force_authenticate(member)
    rest = api.get(f"/api/v1/sessions/{team_session.public_id}/export", {"format": "docx"})
    assert rest.status_code == 400
    assert rest.json() == {
        "format": "unknown export format 'docx'; use one of json, jsonl, markdown, yaml, "
        "anthropic_session",
        "code": "MEM_E100",
    }
    ui = member_client.get(
        reverse("web:export", args=[team_session.public_id]), {"format": "docx"}, follow=True
    )
    assert b"Unknown export format &#x27;docx&#x27;" in ui.content
