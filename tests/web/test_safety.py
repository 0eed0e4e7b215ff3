"""Message content cannot inject script or markup; every form needs its CSRF token."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import MessageFactory, SessionFactory
from web.markdown import render_markdown

pytestmark = pytest.mark.django_db

EVIL = (
    "<script>alert('x')</script>\n\n"
    "[click me](javascript:alert(1)) and [data](data:text/html;base64,PHNjcmlwdD4=)\n\n"
    '<img src=x onerror="alert(2)">\n\n'
    '<a href="javascript:alert(3)">raw link</a>\n\n'
    "```html\n<script>alert(4)</script>\n```\n\n"
    "![pic](javascript:alert(5))"
)


class ActiveContent(HTMLParser):
    """Collects what a browser would run: script and frame tags, event handler attributes,
    and links or sources with a script or data scheme."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "svg", "style"):
            src = dict(attrs).get("src") or ""
            if not (tag == "script" and src.startswith("/static/web/")):
                self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"{tag}[{name}]")
            scheme = (value or "").strip().lower()
            if name in ("href", "src", "action") and scheme.startswith(("javascript:", "data:")):
                self.found.append(f"{tag}[{name}={value}]")


def active_content(html: str) -> list[str]:
    parser = ActiveContent()
    parser.feed(html)
    return parser.found


@pytest.mark.parametrize(
    "text",
    [EVIL, "<iframe src=//evil>", "<svg onload=alert(1)>", "[x](JaVaScRiPt:alert(1))"],
)
def test_markdown_never_yields_active_content(text):
    html = str(render_markdown(text))
    assert active_content(html) == []
    assert "<script" not in html and "<svg" not in html and "<iframe" not in html


def test_markdown_keeps_the_good_parts():
    html = str(render_markdown("**bold** [site](https://example.com)\n\n- a\n- b"))
    assert "<strong>bold</strong>" in html
    assert 'href="https://example.com"' in html and 'rel="noopener noreferrer nofollow"' in html
    assert "<li>a</li>" in html


def test_session_page_escapes_everything(member_client, project):
    session = SessionFactory(
        project=project,
        title="<script>alert('title')</script>",
        agent_persona="<b>persona</b>",
        summary="<img src=x onerror=alert(1)>",
        topics=["<i>topic</i>"],
        metadata={"note": "<script>alert('meta')</script>"},
    )
    MessageFactory(session=session, seq=0, role="user", content=EVIL, author="<u>me</u>")
    MessageFactory(
        session=session,
        seq=1,
        role="assistant",
        content="<script>alert('tool')</script>",
        tool_name="<b>Bash</b>",
        tool_call_id="c1",
    )
    MessageFactory(session=session, seq=2, role="tool", content="</pre><script>x</script>")
    body = member_client.get(reverse("web:session", args=[session.public_id])).content.decode()
    # The only scripts are ours (htmx and app.js, from static files).
    assert active_content(body) == []
    assert body.count("<script") == 2
    assert "&lt;script&gt;" in body
    assert "<b>persona</b>" not in body and "<u>me</u>" not in body and "<i>topic</i>" not in body


def test_list_and_search_escape_titles(member_client, project):
    SessionFactory(project=project, title="<script>alert(1)</script>")
    body = member_client.get("/sessions").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


@pytest.fixture
def csrf_admin(admin):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin)
    return client


def test_csrf_less_posts_are_rejected(csrf_admin, team_session, project):
    for path in (
        reverse("web:delete", args=[team_session.public_id]),
        reverse("web:restore", args=[team_session.public_id]),
        reverse("web:purge", args=[team_session.public_id]),
        "/tokens",
        "/switch",
        "/accounts/logout/",
        "/accounts/password/",
    ):
        response = csrf_admin.post(path, {"project": project.pk, "name": "forged"})
        assert response.status_code == 403, path
        assert b"could not be accepted" in response.content
    team_session.refresh_from_db()
    assert team_session.deleted_at is None
    assert not project.api_tokens.exists()


def test_forms_carry_the_csrf_token(csrf_admin, team_session):
    page = csrf_admin.get(reverse("web:delete", args=[team_session.public_id]))
    token = page.context["csrf_token"]
    assert f'name="csrfmiddlewaretoken" value="{token}"'.encode() in page.content
    response = csrf_admin.post(
        reverse("web:delete", args=[team_session.public_id]),
        {"csrfmiddlewaretoken": str(token)},
    )
    assert response.status_code == 302
