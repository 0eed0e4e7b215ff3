"""The people pages in a real browser (headless Chromium, as tests/web/test_browser.py): a
person opens People, then one person's diary, and downloads it, under the
Content-Security-Policy. Screenshots go to test-output/screenshots/."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest

from memories.capture.record import MemoryDraft, record
from memories.diary.distill import distill_day
from teams.models import Role
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory, UserFactory
from tests.memories.diary.conftest import AT, DAY, chat
from tests.web.test_browser import chromium, new_page, shot, sign_in, watch_csp  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def people_world():
    team = TeamFactory(name="Acme")
    project = ProjectFactory(team=team, name="Companions")
    MembershipFactory(team=team, role=Role.MEMBER, user=UserFactory(username="ada"))
    trip = chat(
        project,
        "sam",
        "cathy",
        [
            ("user", "Let's plan the trip to Lisbon in May."),
            ("assistant", "Lisbon in May is lovely. Shall we book the night train?"),
            ("user", "Yes, the night train. I am vegetarian, remember that for restaurants."),
        ],
        title="Planning Lisbon",
    )
    chat(
        project,
        "sam",
        "rex",
        [("user", "Review src/parse.py"), ("assistant", "It drops empty lines; fixed.")],
        at=AT.replace(hour=15),
        title="Parser review",
        status="interrupted",
    )
    record(project, MemoryDraft("decision", "Take the night train to Lisbon", trip, agent="cathy"))
    record(
        project,
        MemoryDraft("preference", "Sam is vegetarian", trip, agent="cathy", shared=True),
    )
    distill_day(DAY)


def test_people_then_a_persons_diary_and_its_download(chromium, live_server, people_world):  # noqa: F811
    context, page = new_page(chromium, live_server)
    violations = watch_csp(context)
    sign_in(page, "ada")
    page.click("nav.mainnav >> text=People")
    page.wait_for_url(re.compile(r"/people$"))
    shot(page, "people-list")
    page.click("a.row-link >> text=sam")
    page.wait_for_url(re.compile(r"/people/sam$"))
    text = page.inner_text("main")
    assert "Sunday, Jan 11, 2026" in text and "Take the night train to Lisbon" in text
    assert "was left interrupted" in text
    shot(page, "person-diary")
    with page.expect_download() as download:
        page.click("text=Download the diary (Markdown)")
    archive = zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes()))
    assert "diary/sam/cathy/2026-01-11.md" in archive.namelist()
    assert violations == []
    context.close()
