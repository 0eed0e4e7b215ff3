"""Memories given back: the context endpoint's Decisions / Open Findings / Preferences
sections for a query, "where we are" without one, within the one token budget, scoped to
the caller. Real PostgreSQL, the real model; memories written through record; sessions
through the real capture path and pipeline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.capture.record import MemoryDraft, record, resolve
from memories.models import Memory
from search.context import build_context
from sessions.forget.archive import archive_sessions
from teams.models import ApiToken
from tests.clients import client_for
from tests.factories import ProjectFactory
from tests.search.corpus import AUTH, COOKING, DEPLOY, capture, embed_all, project_access

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project)
    return client_for(token=raw)


@pytest.fixture
def sessions(project):
    found = {
        "auth": capture(project, AUTH, agent="architect", workflow="security", title="Auth fix"),
        "deploy": capture(project, DEPLOY, agent="dev", workflow="release", days_ago=1),
        "cooking": capture(project, COOKING, agent="chef", days_ago=2),
    }
    embed_all()
    return found


def remember(project, kind, content, **fields):
    return record(project, MemoryDraft(type=kind, content=content, **fields)).memory


@pytest.fixture
def memories(project, sessions):
    return {
        "oauth": remember(
            project,
            "decision",
            "Use OAuth 2.0 with JWT bearer tokens for authentication",
            details={"rationale": "stateless tokens scale across the API servers"},
            session=sessions["auth"],
        ),
        "k8s": remember(project, "decision", "Deploy releases to Kubernetes one pod at a time"),
        "expiry": remember(
            project,
            "finding",
            "JWT tokens are accepted after their expiry time",
            severity="high",
            resolution="open",
            details={"location": "src/auth.py"},
        ),
        "fixed": remember(
            project,
            "finding",
            "The login page rejected valid users after the upgrade",
            severity="medium",
            resolution="open",
        ),
        "tabs": remember(
            project, "preference", "The user wants authentication errors logged in JSON"
        ),
    }


def context(agent, **body):
    response = agent.post("/api/v1/context", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def lines_of(markdown: str, heading: str) -> list[str]:
    """The "- [ID] …" lines under ``heading``."""
    part = markdown.split(heading + "\n", 1)[1].split("\n\n", 1)[0]
    return [line for line in part.splitlines() if line.startswith("- [")]


def test_relevant_memories_come_in_their_own_sections_with_their_ids(agent, memories):
    resolve(memories["fixed"], by="dev", action_taken="rolled back")
    body = context(agent, query="how do we handle JWT authentication tokens?", max_tokens=2000)
    markdown = body["markdown"]
    oauth, expiry = memories["oauth"], memories["expiry"]
    assert (
        f"- [{oauth.public_id}] Use OAuth 2.0 with JWT bearer tokens for authentication — "
        "because stateless tokens scale across the API servers"
    ) in lines_of(markdown, "## Decisions")
    assert lines_of(markdown, "## Open Findings") == [
        f"- [{expiry.public_id}] (high) JWT tokens are accepted after their expiry time"
        " — at src/auth.py"
    ]
    assert memories["fixed"].public_id not in markdown  # resolved: not an open finding
    assert "## Preferences" in markdown
    assert "## Relevant Past Discussions" in markdown
    assert {s["heading"] for s in body["sections"]} >= {"## Decisions", "## Open Findings"}
    assert oauth.public_id in body["sections"][0]["ids"] or any(
        oauth.public_id in s["ids"] for s in body["sections"]
    )
    assert body["tokens"] <= 2000
    # The sections are more relevant than the sessions here: they come first.
    assert markdown.index("## Decisions") < markdown.index("## Relevant Past Discussions")


def test_what_is_shown_counts_as_read(agent, memories):
    body = context(agent, query="JWT authentication tokens")
    shown = {i for s in body["sections"] for i in s["ids"]}
    assert memories["oauth"].public_id in shown
    counts = dict(Memory.objects.values_list("public_id", "access_count"))
    assert counts[memories["oauth"].public_id] == 1
    assert all(counts[i] == 0 for i in counts if i not in shown)


@pytest.mark.parametrize("max_tokens", [60, 120, 300, 1000])
def test_the_budget_holds_for_memories_and_sessions_together(agent, project, memories, max_tokens):
    for i in range(30):
        remember(
            project,
            "decision",
            f"Authentication decision {i}: JWT tokens signed with key number {i} rotate weekly",
            reconcile=False,
        )
    body = context(agent, query="JWT authentication tokens", max_tokens=max_tokens)
    assert 0 < body["tokens"] <= max_tokens
    assert body["sections"], "the sections get their share even of a small budget"
    if max_tokens >= 300:
        assert body["sessions"], "and the sessions the rest"


def test_another_team_s_memories_never_appear(agent, memories):
    other = ProjectFactory()
    theirs = remember(
        other, "decision", "Use OAuth 2.0 with JWT bearer tokens issued by Okta", scope="team"
    )
    markdown = context(agent, query="OAuth JWT bearer tokens Okta", min_relevance=0)["markdown"]
    assert memories["oauth"].public_id in markdown
    assert "Okta" not in markdown
    assert Memory.objects.get(pk=theirs.pk).access_count == 0


def test_archived_and_trashed_sessions_memories_are_left_out(agent, project, memories, sessions):
    archived = remember(
        project, "decision", "Sign JWT tokens with RS256 keys", session=sessions["deploy"]
    )
    trashed = remember(
        project, "decision", "Keep JWT tokens for fifteen minutes", session=sessions["cooking"]
    )
    # Archived as it would be after a long time unread.
    assert archive_sessions([sessions["deploy"].pk], now=timezone.now() + timedelta(days=3650))
    sessions["cooking"].deleted_at = timezone.now()
    sessions["cooking"].save(update_fields=["deleted_at"])
    markdown = context(agent, query="JWT tokens signing and lifetime", min_relevance=0)["markdown"]
    assert memories["oauth"].public_id in markdown
    assert f"[{archived.public_id}]" not in markdown
    assert f"[{trashed.public_id}]" not in markdown
    with_archive = context(
        agent, query="JWT tokens signing and lifetime", min_relevance=0, include_archived=True
    )["markdown"]
    assert f"[{archived.public_id}]" in with_archive
    assert f"[{trashed.public_id}]" not in with_archive


def test_without_a_query_it_says_where_the_project_stands(agent, project, memories, sessions):
    sessions["auth"].summary = "Task: fix login. Done: JWT middleware verifies signatures."
    sessions["auth"].save(update_fields=["summary"])
    resolve(memories["fixed"], by="dev", action_taken="rolled back")
    response = agent.get("/api/v1/context", {"project": f"{project.team.slug}/{project.slug}"})
    assert response.status_code == 200, response.content
    markdown = response.json()["markdown"]
    decisions = lines_of(markdown, "## Decisions")
    # The latest decision first.
    assert decisions[0].startswith(f"- [{memories['k8s'].public_id}]")
    assert lines_of(markdown, "## Open Findings") == [
        f"- [{memories['expiry'].public_id}] (high) JWT tokens are accepted after their expiry"
        " time — at src/auth.py"
    ]
    assert f"[{memories['tabs'].public_id}]" in markdown
    latest = markdown.split("## Latest Sessions\n\n", 1)[1]
    assert "Summary: Task: fix login." in latest
    # Newest session first.
    assert latest.index("Architect") < latest.index("Dev")
    assert markdown.index("## Decisions") < markdown.index("## Latest Sessions")
    posted = context(agent, max_tokens=100)
    assert 0 < posted["tokens"] <= 100


def test_the_python_function_keeps_within_a_tiny_budget(project, memories):
    result = build_context(project_access(project), "JWT authentication", max_tokens=50)
    assert result.tokens <= 50
