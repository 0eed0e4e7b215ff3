"""The review queue by keyboard in a real browser (headless Chromium, as
tests/web/test_browser.py), under the Content-Security-Policy: `e` edits the statement and
Ctrl+Enter accepts the edit, `x` selects and `R` rejects the selected, `a` and `r` act on
the focused proposal. It also measures review throughput (proposals handled per minute by
keyboard, page reloads included) into test-output/review_throughput.txt, the figure
docs/benchmarks.md quotes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memories.capture.record import Evidence, MemoryDraft, record
from memories.models import Memory, Origin
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

PROPOSALS = 24
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "review_throughput.txt"


@pytest.fixture
def queue():
    team = TeamFactory(name="Acme")
    project = ProjectFactory(team=team, name="Web")
    MembershipFactory(team=team, role=Role.MEMBER, user=UserFactory(username="ada"))
    session = SessionFactory(project=project, title="A long afternoon", agent_name="codex")
    made = []
    for n in range(PROPOSALS):
        message = MessageFactory(
            session=session, seq=n, content=f"Note {n}: component {n} owns queue q{n}."
        )
        draft = MemoryDraft(
            type="fact",
            content=f"Component {n} owns queue q{n} and nothing else at all, item {n}",
            session=session,
            confidence="low",
            origin=Origin.EXTRACTOR,
            evidence=[Evidence(message, message.content)],
            reconcile=False,
        )
        made.append(record(project, draft).memory)
    return made


def test_reviewing_the_queue_by_keyboard(chromium, live_server, queue):  # noqa: F811
    context, page = new_page(chromium, live_server)
    violations = watch_csp(context)
    sign_in(page, "ada")
    page.click("nav.mainnav >> text=Review")
    page.wait_for_selector(".review-item.is-current")
    assert f"{PROPOSALS} waiting" in page.inner_text("h1")
    shot(page, "memory-review-queue")

    # e: edit the focused (newest) proposal; Ctrl+Enter accepts the edit.
    newest = (
        Memory.objects.filter(pk__in=[m.pk for m in queue]).order_by("-occurred_at", "-id").first()
    )
    page.keyboard.press("e")
    page.keyboard.type(" (checked)")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(f"text={PROPOSALS - 1} waiting")
    newest.refresh_from_db()
    assert newest.status == "active" and newest.content.endswith("(checked)")

    # x on two, then R rejects the selected ones.
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("R")
    page.wait_for_selector(f"text={PROPOSALS - 3} waiting")
    assert Memory.objects.filter(status="rejected").count() == 2

    # Throughput: a or r on the focused proposal, one after another, reloads included.
    handled = PROPOSALS - 3
    start = time.perf_counter()
    for n in range(handled):
        page.keyboard.press("a" if n % 3 else "r")
        left = handled - n - 1
        page.wait_for_selector(f"text={left} waiting" if left else "text=Nothing waits for review")
    seconds = time.perf_counter() - start
    per_minute = handled / seconds * 60
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(
        f"{handled} proposals by keyboard in {seconds:.1f} s: {per_minute:.0f} per minute\n"
    )
    print(OUTPUT.read_text())
    assert Memory.objects.filter(status="proposed").count() == 0
    assert Memory.objects.filter(status="rejected").count() == 2 + len(range(0, handled, 3))
    assert violations == []
    context.close()
