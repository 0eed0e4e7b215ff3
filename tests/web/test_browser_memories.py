"""The memory pages in a real browser (headless Chromium, as tests/web/test_browser.py):
a person finds memories with the filters (htmx) and the search box, opens one, follows its
evidence into the transcript, pins it, resolves a finding and deletes a memory with a
reason, all under the Content-Security-Policy. Screenshots go to test-output/screenshots/."""

from __future__ import annotations

import re

import pytest

from memories.capture.record import Evidence, MemoryDraft, link, record
from memories.models import LinkKind, Memory, MemoryType
from teams.models import Role
from tests.factories import (
    MembershipFactory,
    MessageFactory,
    ProjectFactory,
    SessionFactory,
    TeamFactory,
    UserFactory,
)
from tests.web.test_browser import chromium, new_page, shot, sign_in, watch_csp  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def memory_world():
    team = TeamFactory(name="Acme")
    project = ProjectFactory(team=team, name="Web")
    MembershipFactory(team=team, role=Role.ADMIN, user=UserFactory(username="ada"))
    session = SessionFactory(project=project, title="Fix the login loop", agent_name="codex")
    MessageFactory(session=session, seq=0, content="Why do users bounce back to /login?")
    said = MessageFactory(
        session=session,
        seq=1,
        role="assistant",
        content="The session cookie is Secure while the dev server speaks plain HTTP.",
    )
    session.message_count = 2
    session.save(update_fields=["message_count"])
    finding = record(
        project,
        MemoryDraft(
            type=MemoryType.FINDING,
            content="The session cookie is dropped over plain HTTP in development",
            session=session,
            agent="codex",
            severity="important",
            evidence=[Evidence(said, "The session cookie is Secure while the dev server speaks")],
        ),
    ).memory
    decision = record(
        project,
        MemoryDraft(
            type=MemoryType.DECISION,
            content="Turn SESSION_COOKIE_SECURE off in development settings only",
            session=session,
            agent="codex",
            details={"rationale": "Production keeps secure cookies behind the proxy"},
        ),
    ).memory
    link(decision, finding, LinkKind.RESOLVES)
    return {"finding": finding, "decision": decision, "session": session}


def test_find_read_follow_pin_resolve_delete(chromium, live_server, memory_world):  # noqa: F811
    finding, decision = memory_world["finding"], memory_world["decision"]
    context, page = new_page(chromium, live_server)
    violations = watch_csp(context)
    sign_in(page, "ada")

    page.click("nav.mainnav >> text=Memories")
    page.wait_for_url(re.compile(r"/memories"))
    rows = page.locator(".memories-table tbody tr")
    assert rows.count() == 2
    assert "FIND-001" in rows.first.inner_text()  # the open finding leads
    shot(page, "memories-list")

    # A filter applies at once (htmx), and the address keeps it.
    page.select_option("select[name=type]", "decision")
    page.wait_for_url(re.compile(r"type=decision"))
    page.wait_for_function("document.querySelectorAll('.memories-table tbody tr').length === 1")
    assert "DEC-001" in page.locator(".memories-table").inner_text()

    page.goto("/memories?q=cookie")
    assert "FIND-001" in page.locator(".memories-table").inner_text()

    page.click(f"text={finding.content}")
    page.wait_for_url(re.compile(r"/memories/\d+/FIND-001$"))
    assert "resolved by" in page.inner_text(".memory-main").lower() and "DEC-001" in page.content()
    shot(page, "memory-finding")

    # The evidence link opens the transcript at that message.
    page.click(".evidence-meta a")
    page.wait_for_url(re.compile(r"/sessions/.+\?at=1#m-1$"))
    assert page.locator("#m-1").is_visible()
    assert "FIND-001" in page.inner_text("#memories")
    page.go_back()

    page.click("button:has-text('Pin')")
    page.wait_for_selector("button:has-text('Unpin')")
    page.fill("input[name=action_taken]", "Turned SESSION_COOKIE_SECURE off in dev")
    page.click("text=Mark resolved")
    page.wait_for_selector("text=Resolved FIND-001.")
    assert "Turned SESSION_COOKIE_SECURE off in dev" in page.inner_text(".memory-main")

    page.click("text=Delete…")
    page.wait_for_url(re.compile(r"/delete$"))
    page.fill("input[name=reason]", "a duplicate")
    page.click("button:has-text('Delete memory')")
    page.wait_for_url(re.compile(r"/memories$"))
    assert "Deleted FIND-001" in page.inner_text(".flash")
    assert "FIND-001" not in page.inner_text("#results")

    stored = Memory.objects.get(pk=finding.pk)
    assert (stored.status, stored.delete_reason, stored.pinned) == ("deleted", "a duplicate", True)
    assert decision.public_id in page.inner_text("#results")
    assert violations == []
    context.close()
