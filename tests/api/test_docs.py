"""/api/docs/ works offline and under a strict Content-Security-Policy: Swagger UI's files
come from the app's own static files (drf-spectacular-sidecar, served by WhiteNoise after
collectstatic, as `make run` and the image do), and its start-up script is a file of its
own rather than an inline script."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.test import Client

from tests.web.test_browser import SCREENSHOTS, TIMEOUT_MS, chromium  # noqa: F401 (a fixture)

STRICT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'"
)


class Assets(HTMLParser):
    """The URLs a page loads, and the text of any inline script or style."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.inline: list[str] = []
        self._in_inline = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.urls.append(attrs["src"])
        elif tag in ("script", "style"):
            self._in_inline = tag
        elif tag == "link" and attrs.get("href"):
            self.urls.append(attrs["href"])

    def handle_endtag(self, tag):
        self._in_inline = None

    def handle_data(self, data):
        if self._in_inline and data.strip():
            self.inline.append(f"<{self._in_inline}> {data.strip()[:80]}")


def assets_of(html: str) -> Assets:
    parser = Assets()
    parser.feed(html)
    return parser


def body_of(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


@pytest.fixture
def collected_static(settings, tmp_path):
    """STATIC_ROOT filled by collectstatic, as `make run` and the Docker image do."""
    settings.STATIC_ROOT = tmp_path
    call_command("collectstatic", interactive=False, verbosity=0)


def test_the_docs_page_loads_only_its_own_files_and_no_inline_script(db):
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    page = assets_of(response.content.decode())
    assert page.inline == []
    assert len(page.urls) == 5  # favicon, stylesheet, two bundles, the start-up script
    for url in page.urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, url  # same origin
    assert sum("drf_spectacular_sidecar/swagger-ui-dist/" in url for url in page.urls) == 4


def test_the_docs_files_are_served_by_the_app(db, collected_static):
    client = Client()  # a new client loads WhiteNoise over the collected files
    page = assets_of(client.get("/api/docs/").content.decode())
    for url in page.urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert body_of(response), url
    script = client.get(next(url for url in page.urls if "script" in urlsplit(url).query))
    assert script["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in body_of(script)
    assert b'"/api/schema/"' in body_of(script)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_swagger_ui_works_offline_under_a_strict_csp(chromium, live_server):  # noqa: F811
    """A real browser, refused every address but the app's, with a CSP of 'self' only:
    Swagger UI shows the operations and the console reports no policy violation."""
    context = chromium.new_context(base_url=live_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    elsewhere: list[str] = []

    def only_the_app(route):
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    def with_csp(route):
        response = route.fetch()
        route.fulfill(
            response=response,
            headers={**response.headers, "content-security-policy": STRICT_CSP},
        )

    context.route("**/*", only_the_app)
    context.route("**/api/docs/", with_csp)
    page = context.new_page()
    violations: list[str] = []

    def note_violation(message):
        if "Content Security Policy" in message.text:
            violations.append(message.text)

    page.on("console", note_violation)
    try:
        page.goto("/api/docs/")
        page.wait_for_selector('.opblock-summary-path[data-path="/api/v1/sessions/{id}/messages"]')
        assert page.locator(".opblock").count() >= 18
        assert page.locator(".auth-wrapper .authorize").count() == 1  # the token scheme
        page.screenshot(path=str(SCREENSHOTS / "api-docs.png"), full_page=False)
    finally:
        context.close()
    assert violations == []
    assert elsewhere == []
