"""Security headers on every kind of response: a UI page, an API answer, the admin's sign-in,
a static file, an error; HSTS and the HTTPS redirect once behind the TLS proxy."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from teams.models import ApiToken

pytestmark = pytest.mark.django_db

STRICT = {
    "default-src": "'none'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    "object-src": "'none'",
}


def policy(response) -> dict[str, str]:
    directives = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, _, value = part.strip().partition(" ")
        directives[name] = value
    return directives


def assert_secure_headers(response):
    directives = policy(response)
    for name, value in STRICT.items():
        assert directives.get(name) == value, (name, response["Content-Security-Policy"])
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert "unsafe-eval" not in response["Content-Security-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_a_ui_page(member_client, team_session):
    response = member_client.get("/sessions")
    assert response.status_code == 200
    assert_secure_headers(response)


def test_an_api_response(project):
    _, raw = ApiToken.issue(project, name="agent")
    response = Client().get("/api/v1/sessions", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    assert_secure_headers(response)


def test_the_admin_sign_in_page():
    response = Client().get("/admin/login/")
    assert response.status_code == 200
    assert_secure_headers(response)


def test_the_sign_in_page_errors_and_redirects(client):
    assert_secure_headers(client.get("/accounts/login/"))
    assert_secure_headers(client.get("/sessions"))  # 302 to sign in
    assert_secure_headers(client.get("/no-such-page"))  # 404


def test_the_ui_has_no_inline_script_style_or_handler(admin_client, team_session):
    """What a strict policy would refuse: inline <script>/<style>, style="" and on*=""."""
    for path in ("/", "/sessions", "/search?q=login", "/trash", "/tokens", "/accounts/login/"):
        body = admin_client.get(path).content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", body), path
        assert "<style" not in body, path
        assert not re.search(r"\sstyle=", body), path
        assert not re.search(r"\son[a-z]+=", body), path


def test_markdown_table_alignment_needs_no_style_attribute():
    from web.markdown import render_markdown

    html = str(render_markdown("| a | b |\n|:--|--:|\n| 1 | 2 |"))
    assert 'class="align-left"' in html and 'class="align-right"' in html
    assert "style=" not in html


def test_the_api_docs_run_under_the_strict_policy_without_inline_code(member_client):
    response = member_client.get("/api/docs/")
    assert response.status_code == 200
    assert policy(response)["script-src"] == "'self'"
    assert policy(response)["style-src"] == "'self'"
    body = response.content.decode()
    assert "<style" not in body
    for tag in re.findall(r"<script\b[^>]*>", body):
        assert "src=" in tag, tag


def test_hsts_and_the_https_redirect_behind_the_tls_proxy(member_client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    plain = member_client.get("/sessions")
    assert plain.status_code == 301
    assert plain["Location"] == "https://testserver/sessions"
    secure = member_client.get("/sessions", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert_secure_headers(secure)


def test_the_health_check_is_not_redirected(client, settings):
    """The container's health check asks http://127.0.0.1:8000/healthz."""
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code != 301
