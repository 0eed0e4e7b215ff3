"""The people API: the short-term buffer, the diary list and search, the export zip, and
the character dimension of memories; owner, agent token and outsider."""

from __future__ import annotations

import io
import zipfile

import pytest

from memories.diary.distill import distill_day
from tests.clients import client_for
from tests.memories.conftest import token_client
from tests.memories.diary.conftest import DAY, chat

pytestmark = pytest.mark.django_db
READ = "read"


@pytest.fixture
def diary(sam):
    distill_day(DAY)
    return sam


def test_recent_gives_the_last_events_newest_last_with_a_summary(project, sam, owner):
    answer = client_for(owner).get("/api/v1/people/sam/recent", {"lastn": 3})
    assert answer.status_code == 200
    body = answer.json()
    # rex's session (15:00) is the newest: its two messages come last.
    assert [e["content"] for e in body["events"]] == [
        "Yes, we decided to take the night train.",
        "Review the parser in src/parse.py please.",
        "The parser drops empty lines; I fixed it.",
    ]
    assert [e["character"] for e in body["events"]] == ["cathy", "rex", "rex"]
    assert body["summary"] and "\n" not in body["summary"]


def test_recent_of_one_character(project, sam):
    agent = token_client(project, READ)
    body = agent.get("/api/v1/people/sam/recent?lastn=10&char=Cathy").json()
    assert len(body["events"]) == 3 and {e["character"] for e in body["events"]} == {"cathy"}


def test_recent_of_an_unknown_person_is_empty_not_an_error(project, sam):
    body = token_client(project, READ).get("/api/v1/people/nobody/recent").json()
    assert body["events"] == [] and body["summary"] == ""


@pytest.mark.parametrize("lastn", ["0", "-1", "x", "501"])
def test_a_bad_lastn_is_a_400_naming_it(project, lastn):
    answer = token_client(project, READ).get(f"/api/v1/people/sam/recent?lastn={lastn}")
    assert answer.status_code == 400 and "lastn" in answer.json()


def test_an_unknown_parameter_is_a_400(project):
    answer = token_client(project, READ).get("/api/v1/people/sam/recent?last=3")
    assert answer.status_code == 400 and "last" in answer.json()["detail"]


def test_the_diary_lists_newest_first_and_narrows_by_person_and_character(diary, owner):
    client = client_for(owner)
    every = client.get("/api/v1/diary").json()["results"]
    assert {e["character"] for e in every} == {"cathy", "rex", "_shared"}
    cathy = client.get("/api/v1/diary", {"person": "sam", "char": "cathy"}).json()["results"]
    assert {e["character"] for e in cathy} == {"cathy", "_shared"}
    assert cathy[0]["relevance"] is None


def test_the_diary_is_searchable(diary, project):
    hits = token_client(project, READ).get("/api/v1/diary", {"q": "night train Lisbon"})
    results = hits.json()["results"]
    assert results[0]["character"] == "cathy" and results[0]["relevance"] > 0


def test_a_bad_date_range_is_a_400(project):
    answer = token_client(project, READ).get(
        "/api/v1/diary", {"after": "2026-01-12", "before": "2026-01-11"}
    )
    assert answer.status_code == 400 and "before" in answer.json()


def test_the_export_is_a_zip_in_seed_002s_shape(diary, project):
    answer = token_client(project, READ).get("/api/v1/diary/export", {"person": "sam"})
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    assert sorted(archive.namelist()) == [
        "diary/sam/_shared/2026-01-11.md",
        "diary/sam/cathy/2026-01-11.md",
        "diary/sam/rex/2026-01-11.md",
    ]
    assert "night train" in archive.read("diary/sam/cathy/2026-01-11.md").decode()


def test_a_person_name_cannot_climb_out_of_the_zip(project, owner):
    chat(project, "../../etc", "cathy", [("user", "hello")])
    distill_day(DAY)
    names = zipfile.ZipFile(
        io.BytesIO(client_for(owner).get("/api/v1/diary/export").content)
    ).namelist()
    assert names == ["diary/_.._etc/cathy/2026-01-11.md"]


def test_an_outsider_and_another_projects_token_see_nothing(diary, outsider, team):
    from tests.factories import ProjectFactory

    other_project_agent = token_client(ProjectFactory(team=team), READ)
    for client in (client_for(outsider), other_project_agent):
        assert client.get("/api/v1/people/sam/recent").json()["events"] == []
        assert client.get("/api/v1/diary").json()["results"] == []
        assert client.get("/api/v1/diary", {"q": "Lisbon"}).json()["results"] == []
        names = zipfile.ZipFile(io.BytesIO(client.get("/api/v1/diary/export").content))
        assert names.namelist() == []


def test_naming_another_teams_project_is_a_404(diary, outsider, project):
    stranger = client_for(outsider)
    reference = f"{project.team.slug}/{project.slug}"
    for url in ("/api/v1/diary", "/api/v1/diary/export", "/api/v1/people/sam/recent"):
        assert stranger.get(url, {"project": reference}).status_code == 404, url


def test_a_character_reads_its_own_and_the_shared_memories(sam, project):
    agent = token_client(project, READ)
    rex = agent.get("/api/v1/memories", {"person": "sam", "character": "rex"}).json()
    assert [m["content"] for m in rex["results"]] == ["Sam is vegetarian"]
    cathy = agent.get("/api/v1/memories", {"person": "sam", "character": "cathy"}).json()
    assert len(cathy["results"]) == 3
    assert all(m["person"] == "sam" for m in cathy["results"])
    found = agent.get("/api/v1/memories", {"q": "sister Porto", "character": "rex"}).json()
    assert "Sam's sister lives in Porto" not in [m["content"] for m in found["results"]]


def test_a_memory_can_be_recorded_shared_and_unshared(project, sam):
    agent = token_client(project, "read", "write")
    made = agent.post(
        "/api/v1/memories",
        {
            "type": "fact",
            "content": "Sam has a cat",
            "agent": "rex",
            "person": "sam",
            "shared": True,
        },
        format="json",
    ).json()
    assert made["shared"] is True and made["person"] == "sam"
    changed = agent.patch(f"/api/v1/memories/{made['id']}", {"shared": False}, format="json")
    assert changed.json()["shared"] is False


def test_what_the_person_said_is_held_by_the_character_they_said_it_to(project, sam):
    """The extractors name the speaker, and the speaker of a user's line is the person: a
    memory of what Sam told Cathy belongs to Cathy (docs/people.md), so Cathy reads it, Rex does
    not, and the diary files it under Cathy, never under a character called "sam"."""
    from memories.capture.record import MemoryDraft, record

    told = record(
        project, MemoryDraft("fact", "Sam moved to Lisbon last month", sam["cathy"], agent="Sam")
    ).memory
    assert (told.person, told.agent) == ("sam", "cathy")

    agent = token_client(project, READ)
    cathy = agent.get("/api/v1/memories", {"person": "sam", "character": "cathy"}).json()
    assert "Sam moved to Lisbon last month" in [m["content"] for m in cathy["results"]]
    rex = agent.get("/api/v1/memories", {"person": "sam", "character": "rex"}).json()
    assert "Sam moved to Lisbon last month" not in [m["content"] for m in rex["results"]]

    distill_day(DAY)
    entries = agent.get("/api/v1/diary", {"person": "sam"}).json()["results"]
    assert "sam" not in {e["character"] for e in entries}
    [with_cathy] = [e for e in entries if e["character"] == "cathy"]
    assert "Sam moved to Lisbon last month" in with_cathy["facts"]
