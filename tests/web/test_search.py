"""The search page over real captured, embedded sessions: highlighted hits that jump to the
message, relevance as a percentage, helpful empty states, bad input as messages."""

from __future__ import annotations

import pytest

from tests.search.corpus import AUTH, COOKING, DEPLOY, capture, embed_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project):
    auth = capture(project, AUTH, title="Login fixes", topics=["auth"])
    deploy = capture(project, DEPLOY, agent="devops", title="Shipping")
    capture(project, COOKING, agent="chef", title="Dinner")
    embed_all()
    return {"auth": auth, "deploy": deploy}


def test_hybrid_search_shows_highlighted_hits(member_client, corpus):
    response = member_client.get("/search?q=JWT+refresh+tokens")
    assert response.status_code == 200
    body = response.content.decode()
    auth = corpus["auth"]
    assert response.context["state"] == "results"
    first = response.context["results"][0]
    assert first.session.pk == auth.pk
    assert "<mark>JWT</mark>" in body or "<mark>tokens</mark>" in body
    seq = first.hits[0].message.seq
    assert f'href="/sessions/{auth.public_id}?at={seq}#m-{seq}"' in body
    assert f"{round(first.relevance * 100)}%" in body
    # The link lands on the message.
    page = member_client.get(f"/sessions/{auth.public_id}?at={seq}")
    assert f'id="m-{seq}"'.encode() in page.content


def test_a_hit_in_a_chat_of_people_shows_who_said_it(member_client, project):
    from tests.search.test_aggregate import chat

    chat(project, [("leo_22", "How is the new job?"), ("kate_m", "I love the clinic.")], 1)
    embed_all()
    body = member_client.get("/search?q=clinic+job").content.decode()
    assert '<span class="author">kate_m</span> · #1' in body


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_modes_and_filters(member_client, corpus, mode):
    response = member_client.get(f"/search?q=release+production&mode={mode}&agent=devops")
    assert response.status_code == 200
    sessions = [r.session.pk for r in response.context["results"]]
    assert sessions and set(sessions) == {corpus["deploy"].pk}


def test_empty_and_no_result_states(member_client, corpus):
    empty = member_client.get("/search")
    assert empty.context["state"] == "empty"
    assert b"exact phrase" in empty.content
    none = member_client.get("/search?q=zyxwvut+qqqq&mode=keyword")
    assert none.context["state"] == "none"
    assert b"Nothing found" in none.content
    assert b"hybrid</a> mode" in none.content  # another mode may find it
    assert b"Filters are narrowing" not in none.content  # none are set


def test_no_result_hints_say_only_what_applies(member_client, corpus):
    """No filter set (as the form sends it: empty fields, an unticked box): no hint to drop
    filters. Hybrid already: no hint to switch to it."""
    form = "&project=&agent=&person=&status=&include_archived=&entity="
    none = member_client.get(f"/search?q=zyxwvut+qqqq&mode=keyword{form}")
    assert none.context["state"] == "none"
    assert b"Filters are narrowing" not in none.content
    narrowed = member_client.get("/search?q=deploy&mode=hybrid&agent=nobody")
    assert narrowed.context["state"] == "none"
    assert b"Filters are narrowing" in narrowed.content
    assert b"hybrid</a> mode" not in narrowed.content


def test_entity_search_lists_sessions(member_client, corpus):
    from sessions.models import Entity

    auth = corpus["auth"]
    Entity.objects.get_or_create(
        team=auth.team, session=auth, type="FILE", normalized="src/auth.py",
        defaults={"value": "src/auth.py"},
    )  # fmt: skip
    response = member_client.get("/search?entity=src/auth.py&entity_type=FILE")
    assert response.context["state"] == "entity"
    assert b"Login fixes" in response.content


@pytest.mark.parametrize(
    "query",
    [
        'q="unbalanced+quote',
        "q=(((+or+-+!!+%26%26+|",
        "q=-",
        "q=" + "a" * 2500,
        "q=jwt&page=999999",
        "q=jwt&page=-3",
        "q=jwt&page=abc",
        "q=jwt&mode=telepathy",
        "q=jwt&started_after=2025-02-30",
        "q=jwt&started_after=2025-05-01&started_before=2025-01-01",
        "q=jwt&entity_type=PLANET",
        "q=jwt&project=12345678",
        "q=%00%01%02",
    ],
)
def test_bad_input_is_a_message(member_client, corpus, query):
    response = member_client.get(f"/search?{query}")
    assert response.status_code == 200
    assert response.context["state"] in {"invalid", "none", "results", "error"}
    if response.context["state"] == "invalid":
        assert b"notice-error" in response.content


def test_more_pages(member_client, corpus):
    response = member_client.get("/search?q=the&page=2")
    assert response.status_code == 200


def test_other_teams_sessions_are_not_found(outsider_client, corpus):
    response = outsider_client.get("/search?q=JWT+refresh+tokens")
    assert response.status_code == 200
    assert response.context["results"] == []
    assert b"Login fixes" not in response.content
