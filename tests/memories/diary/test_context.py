"""The context endpoint answers a question about a person from their diary first; a
character reads its own entries and the shared ones, and the person and agent filters
narrow sessions, search and context alike."""

from __future__ import annotations

import pytest

from memories.diary.distill import distill_day
from tests.clients import client_for
from tests.memories.conftest import token_client
from tests.memories.diary.conftest import DAY, chat

pytestmark = pytest.mark.django_db


@pytest.fixture
def diary(sam):
    distill_day(DAY)
    return sam


def context(client, **body):
    answer = client.post("/api/v1/context", body, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()["markdown"]


def test_a_question_naming_the_person_puts_their_diary_first(diary, project):
    markdown = context(token_client(project, "read"), query="what do I know about sam?")
    assert markdown.startswith("## Diary: sam")
    assert "### sam with cathy — 2026-01-11" in markdown
    assert "#### Decisions\n- Take the night train to Lisbon" in markdown


def test_the_person_filter_with_a_character_gives_its_own_and_the_shared_entries(diary, project):
    markdown = context(
        token_client(project, "read"),
        query="what happened lately",
        person="sam",
        agent="rex",
    )
    assert markdown.startswith("## Diary: sam")
    assert "sam with rex" in markdown and "shared by every character" in markdown
    assert "sam with cathy" not in markdown
    # rex reads the shared preference, not cathy's own fact.
    assert "Porto" not in markdown


def test_another_teams_diary_never_reaches_the_context(diary, outsider):
    markdown = context(client_for(outsider), query="what do I know about sam?")
    assert "Diary" not in markdown and "Lisbon" not in markdown


def test_a_question_about_no_known_person_has_no_diary(diary, project):
    markdown = context(token_client(project, "read"), query="what do I know about samuel?")
    assert "## Diary" not in markdown


def test_person_and_agent_narrow_the_session_list_and_search(diary, project):
    agent = token_client(project, "read")
    listed = agent.get("/api/v1/sessions", {"person": "sam", "agent": "rex"}).json()
    assert [s["id"] for s in listed["results"]] == [diary["rex"].public_id]
    assert agent.get("/api/v1/sessions", {"person": "kim"}).json()["results"] == []
    found = agent.post(
        "/api/v1/search",
        {"q": "parser", "person": "sam", "agent": "cathy"},
        format="json",
    ).json()
    assert found["results"] == []
    found = agent.post("/api/v1/search", {"q": "parser", "person": "sam"}, format="json").json()
    assert {r["session"]["id"] for r in found["results"]} == {diary["rex"].public_id}


def test_a_person_named_like_an_everyday_word_comes_only_by_the_filter(project):
    chat(project, "me", "cathy", [("user", "I like tea.")])
    distill_day(DAY)
    agent = token_client(project, "read")
    assert "## Diary" not in context(agent, query="tell me about the parser")
    assert context(agent, query="tea", person="me").startswith("## Diary: me")
