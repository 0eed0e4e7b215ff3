"""After a purge (or a message removal) nothing of the content remains anywhere: sessions are
captured over the API, embedded and enriched by a real worker, found by search, deleted,
and then no search mode finds them, no row of any content table holds their words, the
deletion records hold none of it, and the team's own indexes answer nothing for it.

Also a race: messages removed while the real worker embeds and enriches their session leave
no chunk and no entity behind.
"""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from search.speed import team_indexes
from sessions.models import DeletionRecord, Entity, Message, MessageChunk, Session
from teams.models import ApiToken, Role
from tests.conftest import eager_worker
from tests.factories import MembershipFactory, ProjectFactory
from tests.traces import rows_holding
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PURGED_WORD = "quexatronic"
REMOVED_WORD = "flimbergast"
MODES = ("keyword", "semantic", "hybrid")


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker):
    """A real worker that enriches sessions as soon as they are captured."""
    with eager_worker("nothing-remains-worker.log") as process:
        yield process


@pytest.fixture
def own_team_indexes(settings):
    """Build the team's own indexes (a big team has them); dropped after the test, so other
    tests see only their own."""
    settings.TEAM_INDEX_MIN_MESSAGES = 3
    yield lambda: team_indexes.ensure(concurrently=False)
    with connection.cursor() as cursor:
        for name in team_indexes.existing():
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
    team_indexes.forget()


@pytest.fixture
def team_setup(worker):
    project = ProjectFactory()
    admin = MembershipFactory(team=project.team, role=Role.ADMIN).user
    _, raw = ApiToken.issue(project, name="agent")
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    person = APIClient()
    person.force_authenticate(admin)
    return project, agent, person


def capture(agent, messages: list[tuple[str, str]], **fields) -> str:
    body = {"agent_name": "coder", "messages": [{"role": r, "content": c} for r, c in messages]}
    response = agent.post("/api/v1/sessions", {**body, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def all_done(public_ids) -> bool:
    sessions = Session.objects.filter(public_id__in=public_ids)
    return not (
        sessions.exclude(enrichment_status="done").exists()
        or Message.objects.filter(session__in=sessions).exclude(enrichment_status="done").exists()
    )


def search_bodies(client, query: str) -> dict[str, str]:
    bodies = {}
    for mode in MODES:
        response = client.get("/api/v1/search", {"q": query, "mode": mode, "limit": 50})
        assert response.status_code == 200, response.content
        bodies[mode] = json.dumps(response.json()["results"])  # not the query echoed
    return bodies


SHARED_MESSAGE_INDEXES = (
    "message_team_idx",
    "message_team_time_idx",
    "message_search_gin",
    "message_context_gin",
)


def team_index_hits(team_id: int, word: str) -> int:
    """Matches of the team's own keyword indexes (words and context). The shared indexes
    are dropped in a transaction that is rolled back, so the planner can only read the
    team's own."""
    hits = 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {', '.join(SHARED_MESSAGE_INDEXES)}")
        cursor.execute("SET LOCAL enable_seqscan = off")
        for column in ("search_vector", "context_vector"):
            query = (
                f"SELECT count(*) FROM agent_sessions_message WHERE team_id = %s "
                f"AND {column} @@ plainto_tsquery('english', %s)"
            )
            cursor.execute("EXPLAIN " + query, [team_id, word])
            plan = " ".join(row[0] for row in cursor.fetchall())
            assert f"_team_{team_id}" in plan, plan  # the team's own index answers
            cursor.execute(query, [team_id, word])
            hits += cursor.fetchone()[0]
        transaction.set_rollback(True)  # the shared indexes come back
    return hits


def test_nothing_of_a_purged_session_or_a_removed_message_remains(team_setup, own_team_indexes):
    project, agent, person = team_setup
    purged = capture(
        agent,
        [
            ("user", f"The {PURGED_WORD} service crashes on start."),
            ("assistant", f"Its config lives in src/{PURGED_WORD}/settings.py; fixing it."),
            ("user", "Thanks."),
        ],
        title="Fix the service",
    )
    kept = capture(
        agent,
        [
            ("user", "Where are the deploy notes?"),
            ("assistant", f"In docs/{REMOVED_WORD}_notes.md, with the {REMOVED_WORD} key."),
            ("user", "And the rollback steps for docs/deploy.md?"),
            ("assistant", "They are in docs/deploy.md under Rollback."),
        ],
        title="Deploy notes",
    )
    assert wait_for(lambda: all_done([purged, kept]), timeout=240), "the worker never finished"
    own_team_indexes()
    team_indexes.forget()
    team = project.team_id
    for word, public_id in ((PURGED_WORD, purged), (REMOVED_WORD, kept)):
        held = rows_holding(word)
        assert {"agent_sessions_messagechunk", "agent_sessions_entity"} <= set(held), held
        for mode, body in search_bodies(person, word).items():
            assert public_id in body, f"{mode} search does not find {word} before deletion"
        assert team_index_hits(team, word) >= 1

    # Delete and purge one session; remove one message of the other.
    assert person.delete(f"/api/v1/sessions/{purged}?reason=customer asked").status_code == 204
    assert person.delete(f"/api/v1/sessions/{purged}?purge=true").status_code == 204
    assert person.delete(f"/api/v1/sessions/{kept}/messages/1?reason=key").status_code == 204
    assert wait_for(lambda: all_done([kept]), timeout=120), "the rebuild never finished"

    for word, public_id in ((PURGED_WORD, purged), (REMOVED_WORD, None)):
        assert rows_holding(word) == {}, word
        for mode, body in search_bodies(person, word).items():
            assert word not in body.lower(), f"{mode} search still shows {word}"
            if public_id:
                assert public_id not in body, f"{mode} search still finds the purged session"
        assert team_index_hits(team, word) == 0
    # The summary, entities and vector of the kept session were rebuilt, without the word.
    session = Session.objects.get(public_id=kept)
    assert session.summary and session.embedding is not None
    assert Entity.objects.filter(session=session, normalized="docs/deploy.md").exists()
    # The records say what happened, and nothing of what was said.
    records = {r.scope: r for r in DeletionRecord.objects.filter(team_id=team)}
    assert records["session"].purged_at is not None and records["session"].session_ids == [purged]
    assert records["message"].criteria == {"seq": 1}


def test_messages_removed_while_the_worker_embeds_leave_no_chunk_or_entity(team_setup):
    _, agent, person = team_setup
    messages = [
        (
            "user" if i % 2 == 0 else "assistant",
            f"step {i}: edit src/module_{i}.py and run pytest tests/test_{i}.py",
        )
        for i in range(60)
    ]
    public_id = capture(agent, messages)
    removed = list(range(0, 60, 7))
    for seq in removed:  # at once, while the worker embeds and enriches the session
        response = person.delete(f"/api/v1/sessions/{public_id}/messages/{seq}")
        assert response.status_code == 204, response.content
    assert wait_for(lambda: all_done([public_id]), timeout=240), "the worker never finished"
    session = Session.objects.get(public_id=public_id)
    gone = Message.objects.filter(session=session, seq__in=removed)
    assert all(m.content == "" and m.removed_at for m in gone)
    assert not MessageChunk.objects.filter(message__in=gone).exists()
    kept = Message.objects.filter(session=session).exclude(seq__in=removed)
    assert MessageChunk.objects.filter(message__in=kept).values("message").distinct().count() == (
        60 - len(removed)
    )
    values = set(Entity.objects.filter(session=session).values_list("normalized", flat=True))
    assert "src/module_1.py" in values
    for seq in removed:
        assert f"src/module_{seq}.py" not in values and f"tests/test_{seq}.py" not in values
    assert session.enriched_through_seq == 59
