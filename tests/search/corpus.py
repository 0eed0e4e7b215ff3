"""A small team memory to search: sessions captured through the real capture path and
embedded by the real pipeline (the real model)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from sessions.capture.service import capture_session
from sessions.enrich import pipeline
from teams.access import Access
from transcripts.base import ParsedMessage, ParsedSession

AUTH = [
    ("user", "The login page keeps rejecting valid users after the upgrade."),
    (
        "assistant",
        "We switched session handling to JWT bearer tokens signed with RS256; the middleware "
        "in src/auth.py now verifies the signature and the expiry before the view runs.",
    ),
    ("user", "Great, and the refresh flow?"),
    ("assistant", "Refresh tokens rotate on every use and are stored hashed in Redis."),
]
DEPLOY = [
    ("user", "How do we ship the release to production?"),
    (
        "assistant",
        "Run `make release`, which builds the Docker image, pushes it to the registry and "
        "rolls the Kubernetes deployment one pod at a time.",
    ),
]
COOKING = [
    ("user", "What should I cook for dinner tonight?"),
    ("assistant", "A mushroom risotto: arborio rice, stock, parmesan and a little white wine."),
]


def project_access(project) -> Access:
    """What an agent holding the project's token sees."""
    return Access(team_ids=(project.team_id,), project_ids=(project.pk,))


def capture(
    project, messages, *, agent="architect", workflow="none", topics=(), days_ago=0, title=""
):
    started = timezone.now() - timedelta(days=days_ago)
    result = capture_session(
        project,
        ParsedSession(
            source_format="api",
            agent_name=agent,
            agent_persona="Winston",
            workflow=workflow,
            title=title,
            topics=list(topics),
            started_at=started,
            messages=[ParsedMessage(role=role, content=text) for role, text in messages],
        ),
    )
    return result.session


def embed_all() -> None:
    while pipeline.embed_pending_messages():
        pass


def build_team_indexes():
    """``team_indexes.ensure`` inside a test's transaction: not CONCURRENTLY, and with the
    deferred foreign-key checks of the rows just written run first (PostgreSQL will not
    index a table with trigger events pending)."""
    from django.db import connection

    from search.speed import team_indexes

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    return team_indexes.ensure(concurrently=False)


def ranked_turns(client, question: str, turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (speaker or role, text) turns of one session that a search for ``question``
    returns, best first (a message's seq is its place in ``turns``); relevance never
    increases down the list."""
    response = client.get("/api/v1/search", {"q": question, "limit": 10})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    relevances = [r["relevance"] for r in results]
    assert relevances == sorted(relevances, reverse=True)
    return [turns[r["message"]["seq"]] for r in results]
