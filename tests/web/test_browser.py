"""The UI in a real browser: headless Chromium (Debian's ``chromium``, installed by
``.ci/run``) driven by Playwright against pytest-django's live server.

A person signs in, reads the dashboard, searches (the messages embedded by the real
pipeline), opens a result at its message, exports, deletes one session and a selection,
restores from the trash; a person of another team sees none of it. Screenshots of the main
pages go to ``test-output/screenshots/``.

Marked ``slow`` (deselect with ``-m 'not slow'``), but part of the default run. Without
Chromium the tests fail, saying how to install it: CI installs it, so a skip would hide a
broken CI machine.
"""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from sessions.enrich.pipeline import embed_pending_messages
from sessions.models import Entity, Message, Session
from teams.models import ApiToken, Role
from tests.conftest import TEST_OUTPUT
from tests.factories import (
    MembershipFactory,
    MessageFactory,
    ProjectFactory,
    SessionFactory,
    TeamFactory,
    UserFactory,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SCREENSHOTS = TEST_OUTPUT / "screenshots"
PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's
TIMEOUT_MS = 15_000

CONVERSATIONS = [
    (
        "Fix the login redirect loop",
        "claude-code",
        ["auth"],
        [
            ("user", "After signing in, users bounce back to /login forever. Why?"),
            (
                "assistant",
                "The session cookie is set with `Secure` while the dev server speaks plain "
                "HTTP, so the browser drops it.\n\n```python\nSESSION_COOKIE_SECURE = False\n```",
            ),
            ("user", "And in production?"),
            ("assistant", "Keep it secure there; behind the proxy set SECURE_PROXY_SSL_HEADER."),
        ],
    ),
    (
        "Speed up the nightly invoice export",
        "codex",
        ["billing", "performance"],
        [
            ("user", "The nightly invoice export takes three hours. Can we make it faster?"),
            (
                "assistant",
                "It issues one query per invoice line. Prefetching the lines and streaming "
                "the CSV brings it to four minutes.",
            ),
        ],
    ),
    (
        "Flaky payment webhook test",
        "codex",
        ["billing", "testing"],
        [
            ("user", "test_payment_webhook fails one run in ten on CI."),
            ("assistant", "It depends on dict ordering of the signature headers; sort them."),
        ],
    ),
    (
        "Rotate the staging database password",
        "architect",
        ["security"],
        [
            ("user", "We need to rotate the staging database password without downtime."),
            ("assistant", "Create a second role, switch the app over, then drop the old one."),
        ],
    ),
]


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for the module. Fails (never skips) when it is missing."""
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: the browser tests need Debian's "
            "`chromium` package (`apt-get install -y chromium`, as .ci/run does), or "
            "CHROMIUM_PATH pointing at a Chromium binary. Deselect them with -m 'not slow'."
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - a dev dependency
        pytest.fail("the `playwright` Python package is missing: pip install -e '.[dev]'")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls
    # (fixtures, checks) are synchronous and safe, so let Django allow them.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield browser
        browser.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def world():
    """A team with a project, four conversations (embedded), an admin; another team with
    its own session and owner."""
    team = TeamFactory(name="Acme")
    project = ProjectFactory(team=team, name="Web")
    admin = MembershipFactory(team=team, role=Role.ADMIN, user=UserFactory(username="ada")).user
    sessions = []
    now = timezone.now()
    for i, (title, agent, topics, turns) in enumerate(CONVERSATIONS):
        session = SessionFactory(
            project=project,
            title=title,
            agent_name=agent,
            topics=topics,
            started_at=now - timedelta(days=3 * i, hours=i),
        )
        for value, kind in (("src/auth.py", "FILE"), (f"{agent} --run", "COMMAND")):
            Entity.objects.create(
                team=team, session=session, type=kind, value=value, normalized=value.lower()
            )
        for seq, (role, content) in enumerate(turns):
            MessageFactory(session=session, seq=seq, role=role, content=content)
        session.message_count = len(turns)
        session.size_bytes = sum(len(c) for _, c in turns)
        session.save(update_fields=["message_count", "size_bytes"])
        sessions.append(session)
    other = TeamFactory(name="Globex")
    secret = SessionFactory(project=ProjectFactory(team=other, name="Ops"), title="Globex plans")
    MessageFactory(session=secret, seq=0, content="Our launch is on Tuesday.")
    outsider = MembershipFactory(
        team=other, role=Role.OWNER, user=UserFactory(username="otto")
    ).user
    while embed_pending_messages():
        pass
    assert not Message.objects.exclude(enrichment_status="done").exists()
    return {
        "team": team,
        "admin": admin,
        "outsider": outsider,
        "sessions": sessions,
        "secret": secret,
    }


def new_page(chromium, live_server, width=1280, height=900):
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}, accept_downloads=True
    )
    context.set_default_timeout(TIMEOUT_MS)
    return context, context.new_page()


def watch_csp(context) -> list[str]:
    """What the Content-Security-Policy blocks on the context's pages, as the browser
    reports it (``securitypolicyviolation``): the list a test asserts stays empty."""
    violations: list[str] = []
    context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    context.add_init_script(
        "document.addEventListener('securitypolicyviolation', (e) => window.reportCspViolation("
        "`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} on ${e.documentURI}`))"
    )
    return violations


def sign_in(page, username):
    page.goto("/")
    assert "/accounts/login/" in page.url  # signed out: the sign-in page
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def shot(page, name):
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_sign_in_search_read_export_delete_restore(chromium, live_server, world):
    context, page = new_page(chromium, live_server)
    blocked = watch_csp(context)
    try:
        sign_in(page, "ada")
        # The dashboard: totals, the chart, the enrichment card (loaded by htmx).
        page.wait_for_selector("#enrichment .enrich-facts")
        assert page.locator(".stat-value").first.inner_text() == "4"
        assert page.locator(".chart svg rect").count() == 60  # 30 days, two series
        assert page.locator("#enrichment dd").first.inner_text() == "0"  # messages waiting
        shot(page, "dashboard")

        page.click("nav.mainnav >> text=Sessions")
        page.wait_for_url("**/sessions")
        assert page.locator("table.sessions-table tbody tr").count() == 4
        shot(page, "sessions-list")

        # Search by meaning and words; open the result at its message.
        page.goto("/search")
        page.fill("#id_q", "why do users get sent back to the sign-in page?")
        page.press("#id_q", "Enter")
        page.wait_for_selector(".results-list .result")
        first = page.locator(".results-list .result").first
        assert "Fix the login redirect loop" in first.inner_text()
        shot(page, "search-results")
        hit = first.locator("a.hit").first
        href = hit.get_attribute("href")
        seq = href.rsplit("#m-", 1)[1]
        hit.click()
        page.wait_for_url(f"**#m-{seq}")
        target = page.locator(f"#m-{seq}")
        assert target.is_visible()
        assert "is-target" in (target.get_attribute("class") or "")
        shot(page, "session-page")

        # Export: a real download.
        page.click("summary:has-text('Export')")
        with page.expect_download() as info:
            page.click("a.menu-item:has-text('JSON (.json)')")
        download = info.value
        assert download.suggested_filename.endswith(".json")
        saved = SCREENSHOTS.parent / "downloads" / download.suggested_filename
        download.save_as(str(saved))
        assert "SESSION_COOKIE_SECURE" in saved.read_text()

        # Delete this session: a confirmation with the counts, then the trash.
        page.click("a:has-text('Delete…')")
        page.wait_for_selector("text=Delete this session?")
        assert "4 messages" in page.inner_text(".confirm")
        shot(page, "delete-confirm")
        page.fill("input[name=reason]", "wrong project")
        page.click("button:has-text('Move to trash')")
        page.wait_for_url("**/sessions")
        assert "to the trash" in page.inner_text(".flash")
        assert page.locator("table.sessions-table tbody tr").count() == 3

        # Bulk: tick two sessions, confirm, and they go too.
        page.check("tr:has-text('Speed up the nightly') input[type=checkbox]")
        page.check("tr:has-text('Flaky payment webhook') input[type=checkbox]")
        assert page.inner_text("[data-bulk-count]") == "2 selected"
        page.click("button:has-text('Delete selected…')")
        page.wait_for_selector("text=Delete 2 sessions?")
        assert "4 messages" in page.inner_text(".confirm")
        shot(page, "bulk-delete-confirm")
        page.click("button:has-text('Move 2 sessions to the trash')")
        page.wait_for_selector(".flash")
        assert "Moved 2 sessions and 4 messages" in page.inner_text(".flash")
        assert page.locator("table.sessions-table tbody tr").count() == 1

        # The trash: restore one by its button, the others together.
        page.click("nav.mainnav >> text=Trash")
        page.wait_for_url("**/trash")
        assert page.locator("table tbody tr").count() == 3
        assert "wrong project" in page.inner_text("table")
        shot(page, "trash")
        page.click("tr:has-text('Fix the login redirect') button:has-text('Restore')")
        page.wait_for_selector("text=Restored")
        assert Session.objects.filter(team=world["team"]).alive().count() == 2
        page.goto("/trash")
        page.check("[data-check-all]")
        page.click("button:has-text('Restore selected')")
        page.wait_for_selector(".flash")
        assert "Restored 2 sessions" in page.inner_text(".flash")
        assert "The trash is empty" in page.content()
        assert Session.objects.filter(team=world["team"]).alive().count() == 4

        # Phone width: the dashboard still reads.
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto("/")
        page.wait_for_selector("#enrichment .enrich-facts")
        shot(page, "dashboard-phone")
        # Everything above ran under the strict policy: nothing was refused.
        assert blocked == []
    finally:
        context.close()


def test_another_team_sees_none_of_it(chromium, live_server, world):
    context, page = new_page(chromium, live_server)
    blocked = watch_csp(context)
    try:
        sign_in(page, "otto")
        theirs = world["sessions"][0]
        response = page.goto(f"/sessions/{theirs.public_id}")
        assert response.status == 404
        assert "Not found" in page.inner_text("main")
        assert page.goto(f"/sessions/{theirs.public_id}/export?format=json").status == 404

        page.goto("/sessions")
        rows = page.locator("table.sessions-table tbody tr")
        assert rows.count() == 1 and "Globex plans" in rows.first.inner_text()
        page.goto("/search?q=login+redirect+cookie")
        assert "Nothing found" in page.inner_text("#search-results")
        page.goto("/search?q=invoice+export")
        assert "Speed up" not in page.content()
        page.goto("/")
        page.wait_for_selector("#enrichment .enrich-facts")
        assert page.locator(".stat-value").first.inner_text() == "1"
        assert "Fix the login redirect" not in page.content()
        shot(page, "other-team-dashboard")
        page.goto("/trash")
        assert "The trash is empty" in page.content()
        assert blocked == []
    finally:
        context.close()


def test_api_docs_work_under_the_content_security_policy(chromium, live_server, world):
    context, page = new_page(chromium, live_server)
    blocked = watch_csp(context)
    try:
        sign_in(page, "ada")
        response = page.goto("/api/docs/")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_selector(".swagger-ui .info .title")
        assert "memoryapp API" in page.inner_text(".swagger-ui .info .title")
        # Try a call from the page: it goes to the API with the browser's session.
        page.click("#operations-v1-v1_pipeline_retrieve .opblock-summary")
        page.click("button:has-text('Try it out')")
        page.click("button:has-text('Execute')")
        status = page.locator(".live-responses-table .response .response-col_status")
        assert status.inner_text().strip() == "200"
        shot(page, "api-docs")
        assert blocked == []
    finally:
        context.close()


def test_the_admin_works_under_the_content_security_policy(chromium, live_server, world):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    context, page = new_page(chromium, live_server)
    blocked = watch_csp(context)
    try:
        page.goto("/admin/login/")
        page.fill("input[name=username]", "root")
        page.fill("input[name=password]", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url("**/admin/")
        page.goto(f"/admin/teams/team/{world['team'].pk}/change/")
        page.wait_for_selector("text=Add another Membership")
        page.click("text=Add another Membership")  # the inline formset's script
        page.goto("/admin/axes/accessattempt/")
        page.wait_for_selector("#changelist")
        assert blocked == []
    finally:
        context.close()


def test_an_admin_makes_a_token_that_may_delete(chromium, live_server, world):
    context, page = new_page(chromium, live_server)
    blocked = watch_csp(context)
    try:
        sign_in(page, "ada")
        page.goto("/tokens")
        # Read and write are ticked to begin with; delete is offered.
        assert page.is_checked("input[name=permissions][value=read]")
        assert page.is_checked("input[name=permissions][value=write]")
        assert not page.is_checked("input[name=permissions][value=delete]")
        page.fill("input[name=name]", "cleanup agent")
        page.check("input[name=permissions][value=delete]")
        page.click("button:has-text('Create token')")
        page.wait_for_selector(".token-created")
        assert "Permissions: read, write, delete." in page.inner_text(".token-created")
        row = page.locator("tr", has_text="cleanup agent")
        assert row.locator(".pill").all_inner_texts() == ["read", "write", "delete"]
        shot(page, "tokens")
        assert ApiToken.objects.get(name="cleanup agent").permissions == [
            "read",
            "write",
            "delete",
        ]
        assert not blocked
    finally:
        context.close()


@pytest.mark.parametrize("width", [1440, 1280, 1024, 800, 390])
def test_the_top_bar_fits_the_window_with_every_menu_entry_reachable(
    chromium, live_server, world, width
):
    """Every entry of the top bar is inside the window (the user menu was cut off at
    1280px once the menu grew); on narrow windows the menu scrolls in a row of its own."""
    context, page = new_page(chromium, live_server, width=width, height=700)
    try:
        sign_in(page, "ada")
        page.goto("/search")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        right = page.locator(".topbar-right").bounding_box()
        assert right["x"] + right["width"] <= width
        for link in page.locator(".mainnav a").all():
            link.scroll_into_view_if_needed()
            box = link.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, link.inner_text()
    finally:
        context.close()
