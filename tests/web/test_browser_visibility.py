"""Who reads a session, in a real browser (headless Chromium, as tests/web/test_browser.py):
its owner makes it private with the control on its page, ticks two on the list and shares
them with the team's summary view; an admin then sees the private one's metadata only. Under
the Content-Security-Policy. Screenshots go to test-output/screenshots/."""

from __future__ import annotations

import pytest

from sessions.models import Session
from teams.models import Role, Visibility
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

SECRET = "My notes on the salary review: Bea asked for a raise."


@pytest.fixture
def private_world():
    team = TeamFactory(name="Acme")
    project = ProjectFactory(team=team, name="Web")
    owner = MembershipFactory(team=team, role=Role.MEMBER, user=UserFactory(username="ada")).user
    MembershipFactory(team=team, role=Role.ADMIN, user=UserFactory(username="root"))
    MembershipFactory(team=team, role=Role.VIEWER, user=UserFactory(username="bea"))
    sessions = []
    for title, content in (
        ("Salary review notes", SECRET),
        ("Fix the login redirect loop", "Users bounce back to /login."),
        ("Speed up the invoice export", "One query per invoice line."),
    ):
        session = SessionFactory(
            project=project, owner=owner, title=title, summary=f"About: {title.lower()}."
        )
        MessageFactory(session=session, seq=0, role="user", content=content)
        Session.objects.filter(pk=session.pk).update(message_count=1, size_bytes=len(content))
        sessions.append(session)
    return {"sessions": sessions}


def test_the_owner_makes_a_session_private_and_an_admin_sees_only_that_it_exists(
    chromium,  # noqa: F811 (the fixture)
    live_server,
    private_world,
):
    notes, login, export = private_world["sessions"]
    context, page = new_page(chromium, live_server)
    blocked = watch_csp(context)
    try:
        sign_in(page, "ada")
        page.goto(f"/sessions/{notes.public_id}")
        card = page.locator("#visibility")
        assert "Everyone in the team reads all of it." in card.inner_text()
        card.locator("select[name=visibility]").select_option("private")
        card.locator("button:has-text('Set visibility')").click()
        page.wait_for_selector(".notice-success")
        assert "Now private: only its owner reads it." in page.inner_text(".notice-success")
        assert "Only you read it." in page.locator("#visibility").inner_text()
        shot(page, "session-visibility")

        page.goto("/sessions")
        for session in (login, export):
            page.check(f"input[name=session][value='{session.public_id}']")
        page.select_option("#bulk-form select[name=visibility]", "summary")
        page.click("#bulk-form button:has-text('Set visibility')")
        page.wait_for_selector(".notice-success")
        assert "2 sessions are now summary only" in page.inner_text(".notice-success")
        assert page.locator(".pill-vis-private").count() == 1
        assert page.locator(".pill-vis-summary").count() == 2
        shot(page, "sessions-visibility")
        assert not blocked
    finally:
        context.close()
    assert Session.objects.get(pk=notes.pk).visibility == Visibility.PRIVATE

    context, page = new_page(chromium, live_server)
    try:
        sign_in(page, "root")
        page.goto(f"/sessions/{notes.public_id}")
        text = page.inner_text("main")
        assert "This session is private to ada" in text
        assert SECRET not in text and "About: salary" not in text
        assert page.locator("a:has-text('Delete…')").count() == 1
        assert page.locator("#visibility select").count() == 0  # nothing less visible left
        shot(page, "session-private-admin")
        page.goto("/tokens")
        page.select_option("select[name=acts_for]", "team")
        page.fill("input[name=name]", "ci")
        page.click("button:has-text('Create token')")
        page.wait_for_selector(".token-created")
        assert "A team token (acts for nobody)" in page.inner_text(".token-created")
        shot(page, "tokens-acts-for")
    finally:
        context.close()

    context, page = new_page(chromium, live_server)
    try:
        sign_in(page, "bea")
        page.goto(f"/sessions/{login.public_id}")
        text = page.inner_text("main")
        assert "Its messages are not shared with you" in text
        assert "About: fix the login redirect loop." in text
        assert "Users bounce back" not in text
        shot(page, "session-summary-teammate")
        assert page.goto(f"/sessions/{notes.public_id}").status == 404
    finally:
        context.close()
