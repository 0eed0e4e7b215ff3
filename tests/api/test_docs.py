"""/api/docs/ works offline and under a strict Content-Security-Policy: Swagger UI's files
come from the app's own static files (drf-spectacular-sidecar, served by WhiteNoise after
collectstatic, as `make run` and the image do), and its start-up script is a file of its
own rather than an inline script.

And the README and docs/ a newcomer follows: every link leads to a file (and heading) of the
repository or to the app on their own machine, never to another site, and every command they
name exists."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command, get_commands
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


# --- README.md and docs/: links that lead somewhere, commands that exist -----------------

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# Addresses of the app a reader runs on their own machine; anything else is another site.
LOCAL_HOSTS = {"127.0.0.1", "localhost"}

FENCED_CODE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)|<(https?://[^>\s]+)>")
URL = re.compile(r"https?://[^\s)>\]`'\"]+")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def prose_of(text: str) -> str:
    """The text outside code blocks and code spans: what a Markdown viewer makes links of."""
    return INLINE_CODE.sub("", FENCED_CODE.sub("", text))


def anchor_of(heading: str) -> str:
    """The anchor a Markdown viewer gives a heading: lower case, code marks and punctuation
    dropped, spaces as hyphens."""
    words = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return words.replace(" ", "-")


def anchors_in(path: Path) -> set[str]:
    return {anchor_of(h) for h in HEADING.findall(FENCED_CODE.sub("", path.read_text()))}


def links_in(path: Path) -> list[str]:
    return [inline or auto for inline, auto in LINK.findall(prose_of(path.read_text()))]


def test_the_docs_folder_has_an_index_and_the_readme_leads_to_every_page():
    pages = {path.name for path in DOCUMENTS if path.parent.name == "docs"}
    assert {"README.md", "api.md", "search.md", "configuration.md", "operations.md"} <= pages
    assert {"architecture.md", "benchmarks.md"} <= pages
    readme_targets = {link.split("#")[0] for link in links_in(REPO / "README.md")}
    index_targets = {link.split("#")[0] for link in links_in(REPO / "docs" / "README.md")}
    assert {f"docs/{page}" for page in pages} <= readme_targets
    assert pages - {"README.md"} <= index_targets


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(REPO).as_posix())
def test_every_relative_link_leads_to_a_file_and_heading_of_the_repository(document):
    broken = []
    for link in links_in(document):
        if urlsplit(link).scheme:
            continue  # an address, not a file: the next test checks it is the local app
        path, _, anchor = link.partition("#")
        target = (document.parent / path).resolve() if path else document
        if not target.is_relative_to(REPO) or not target.exists():
            broken.append(f"{link}: no such file in the repository")
        elif anchor and target.suffix == ".md" and anchor not in anchors_in(target):
            broken.append(f"{link}: no heading with that anchor")
    assert broken == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(REPO).as_posix())
def test_nothing_links_outside_the_repository_but_the_local_app(document):
    elsewhere = [
        url
        for url in URL.findall(prose_of(document.read_text()))
        if urlsplit(url).hostname not in LOCAL_HOSTS
    ]
    assert elsewhere == []


def test_the_checks_see_links_and_skip_code():
    """The helpers above find what a viewer would make a link of, and only that."""
    text = (
        "See [api](docs/api.md#capture), <http://127.0.0.1:8000/> and "
        "`https://example.com/in-code`.\n```sh\ncurl https://example.org/\n```\n"
        "Then https://example.net/ in prose.\n"
    )
    assert [i or a for i, a in LINK.findall(prose_of(text))] == [
        "docs/api.md#capture",
        "http://127.0.0.1:8000/",
    ]
    assert URL.findall(prose_of(text)) == ["http://127.0.0.1:8000/", "https://example.net/"]
    assert anchor_of("One machine: `make run`") == "one-machine-make-run"
    assert anchor_of("Sign-in and HTTPS") == "sign-in-and-https"


def code_of(text: str) -> str:
    """The code blocks and code spans: where the docs give commands to run."""
    blocks = [match.group(0) for match in FENCED_CODE.finditer(text)]
    return "\n".join(blocks + INLINE_CODE.findall(FENCED_CODE.sub("", text)))


def test_the_commands_the_docs_name_exist():
    """Every `manage.py COMMAND` and `make TARGET` in the docs is one a reader can run."""
    commands = set(get_commands())
    targets = set(re.findall(r"^([a-z][a-z-]*):", (REPO / "Makefile").read_text(), re.MULTILINE))
    missing = []
    for document in DOCUMENTS:
        text = code_of(document.read_text())
        for command in re.findall(r"manage\.py ([a-z_]+)", text):
            if command not in commands:
                missing.append(f"{document.name}: manage.py {command}")
        for target in re.findall(r"\bmake ([a-z][a-z-]*)\b", text):
            if target not in targets:
                missing.append(f"{document.name}: make {target}")
    assert missing == []


def test_every_environment_variable_the_code_reads_is_in_the_configuration_page():
    """A setting added to the code without a line in docs/configuration.md fails here."""
    documented = set(
        re.findall(r"`([A-Z][A-Z0-9_]+)`", (REPO / "docs" / "configuration.md").read_text())
    )
    reader = re.compile(
        r"""(?:env_(?:str|int|bool|list)\(|environ\.get\(|getenv\()\s*["']([A-Z][A-Z0-9_]+)["']"""
    )
    read = set()
    for folder in (
        "memoryapp",
        "memoryapp_client",
        "protocol",
        "sessions",
        "search",
        "teams",
        "transcripts",
        "web",
    ):
        for module in (REPO / folder).rglob("*.py"):
            read |= set(reader.findall(module.read_text()))
    assert {"DATABASE_URL", "SECRET_KEY", "PG_SHARED_BUFFERS", "MEMORYAPP_URL"} <= read
    assert sorted(read - documented) == []
