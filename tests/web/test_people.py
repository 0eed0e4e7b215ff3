"""The people pages: everyone the agents worked with, one person's diary day by day, and
its Markdown download. Owner and teammate see them; another team's person is a 404 and is
not listed."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.urls import reverse

from memories.diary.distill import distill_day
from tests.memories.diary.conftest import DAY, chat, sam  # noqa: F401 (a fixture)
from tests.web.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def diary(sam):  # noqa: F811
    distill_day(DAY)
    return sam


def test_the_people_page_lists_the_person_with_their_days(diary, owner):
    page = client_for(owner).get(reverse("web:people"))
    assert page.status_code == 200
    html = page.content.decode()
    assert reverse("web:person", args=["sam"]) in html and '<td class="num">2</td>' in html


def test_a_persons_page_shows_each_days_entries_per_character(diary, teammate):
    html = client_for(teammate).get(reverse("web:person", args=["sam"])).content.decode()
    assert "Sunday, Jan 11, 2026" in html
    for text in ("cathy", "rex", "_shared", "Take the night train to Lisbon", "Sam is vegetarian"):
        assert text in html
    assert diary["rex"].public_id in html  # the recent sessions


def test_the_download_is_the_persons_diary_in_seed_002s_shape(diary, owner):
    answer = client_for(owner).get(reverse("web:person-export", args=["sam"]))
    names = zipfile.ZipFile(io.BytesIO(answer.content)).namelist()
    assert sorted(names) == [
        "diary/sam/_shared/2026-01-11.md",
        "diary/sam/cathy/2026-01-11.md",
        "diary/sam/rex/2026-01-11.md",
    ]


def test_a_person_with_a_slash_in_the_name_has_a_page(project, owner):
    chat(project, "team/alice", "cathy", [("user", "hi")])
    distill_day(DAY)
    client = client_for(owner)
    assert client.get(reverse("web:person", args=["team/alice"])).status_code == 200
    export = client.get(reverse("web:person-export", args=["team/alice"]))
    assert zipfile.ZipFile(io.BytesIO(export.content)).namelist() == [
        "diary/team_alice/cathy/2026-01-11.md"
    ]


def test_another_teams_person_is_a_404_and_not_listed(diary, outsider):
    client = client_for(outsider)
    assert "sam" not in client.get(reverse("web:people")).content.decode()
    assert client.get(reverse("web:person", args=["sam"])).status_code == 404
    assert client.get(reverse("web:person-export", args=["sam"])).status_code == 404


def test_an_unknown_person_is_a_404(diary, owner):
    assert client_for(owner).get(reverse("web:person", args=["nobody"])).status_code == 404
