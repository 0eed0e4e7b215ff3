"""The erasure audit: what is erased or anonymised is gone from every table and every read.

Hypothesis makes a few projects of chat sessions whose text holds names, e-mail addresses,
code words and secrets found nowhere else; a real Celery worker runs the whole pipeline on
them (embeddings, summaries, entities, aliases, memory extraction), an agent records a
memory of its own, and the diaries are distilled. Then one way of forgetting runs (the
trash and a purge, retention and the daily purge, a removed message, a session's or the
whole project's anonymisation) and the audit reads every text, JSON, keyword-index and
text-array column of every table, from PostgreSQL's catalogue (``sessions/forget/audit.py``),
so a table added later is covered without editing this test. No erased string may remain,
and search, context, memories, diaries, a person's recent events, exports and MCP may
return none of it. What was not erased must still be found (the scan can fail).
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memories.diary import due
from memories.diary.distill import distill_day
from memories.diary.models import DiaryEntry
from memories.models import Memory, MemoryExtraction
from sessions import derived
from sessions.forget import lifecycle, retention
from sessions.forget.audit import find_text
from sessions.models import EnrichmentStatus, Message, Session
from teams.models import ApiToken, Role, TokenPermission
from tests.clients import client_for
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory
from tests.waiting import wait_for

# Letters a stemmer leaves alone and that make no English word: a name is found as itself
# in a keyword index too.
LETTERS = "bcfghjkmnpqrtvwxz"
SCENARIOS = (
    "trash_and_purge",
    "retention",
    "remove_message",
    "anonymise_session",
    "project",
    "memories_deleted",
)
MCP_HEADERS = {
    "HTTP_ACCEPT": "application/json, text/event-stream",
    "HTTP_MCP_PROTOCOL_VERSION": "2025-06-18",
}
# Found in a memory's own words (the agent wrote it): not a reason to keep the session's.
FOUND = (
    "The problem was that src/{code}/login.py opens a new database connection per request. "
    "We decided to use a connection pool instead of per-request connections because the "
    "database allows only 20 connections."
)


@dataclass
class Person:
    first: str
    last: str
    code: str  # a word of one message only: what removing that message erases
    secret: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def email(self) -> str:
        return f"{self.first}.{self.last}@example.org".lower()

    @property
    def personal(self) -> list[str]:
        return [self.first, self.last, self.email]


def rota(person: Person) -> str:
    """A word of one memory only (recorded by an agent, no session): what deleting it
    erases."""
    return f"rota{person.code}"


EXAMPLES = itertools.count(1)


def salted(folks: list[Person]) -> list[Person]:
    """Each example's own words: the examples of one run share the database, and Hypothesis
    may draw the same words twice."""
    number, salt = next(EXAMPLES), ""
    while number:
        number, digit = divmod(number, len(LETTERS))
        salt += LETTERS[digit]
    return [replace(p, first=p.first + salt, last=p.last + salt, code=p.code + salt) for p in folks]


def word(prefix: str):
    return st.text(LETTERS, min_size=6, max_size=6).map(lambda s: prefix + s)


people = st.builds(
    Person,
    first=word("Zq").map(str.capitalize),
    last=word("Vx").map(str.capitalize),
    code=word("kw"),
    secret=st.text("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=36, max_size=36).map(
        lambda s: "ghp_" + s
    ),
)


def transcript(person: Person) -> list[dict]:
    said = {"role": "user", "author": person.name}
    return [
        {**said, "content": f"Hi, I am {person.name}. My email is {person.email}."},
        {"role": "assistant", "content": f"Nice to meet you, {person.first}! How can I help?"},
        {**said, "content": "Please never add new dependencies without asking."},
        {**said, "content": f"Here is my token {person.secret} for the deploy."},
        {"role": "assistant", "content": FOUND.format(code=person.code)},
        {"role": "assistant", "content": f"Thanks {person.first}, I will remember that."},
    ]


@pytest.fixture(scope="module")
def no_quiet_period():
    """The worker (started after this) enriches a session as soon as it is embedded."""
    before = os.environ.get("SESSION_ENRICH_DELAY_SECONDS")
    os.environ["SESSION_ENRICH_DELAY_SECONDS"] = "0"
    yield
    if before is None:
        os.environ.pop("SESSION_ENRICH_DELAY_SECONDS")
    else:
        os.environ["SESSION_ENRICH_DELAY_SECONDS"] = before


def pipeline_done(project) -> bool:
    sessions = Session.objects.filter(project=project)
    return (
        not Message.objects.filter(session__project=project)
        .exclude(enrichment_status=EnrichmentStatus.DONE)
        .exists()
        and not sessions.exclude(enrichment_status=EnrichmentStatus.DONE).exists()
        and not MemoryExtraction.objects.filter(session__project=project)
        .exclude(status=EnrichmentStatus.DONE)
        .exists()
        and MemoryExtraction.objects.filter(session__project=project).count()
        == sessions.alive().count()
    )


def distil_diaries(project) -> None:
    """What the beat does: today's diaries, then every day marked due."""
    distill_day(timezone.now().date(), team_id=project.team_id)
    due.distill_due()


class World:
    """One project, its people's sessions, and the clients that read it."""

    def __init__(self, folks: list[Person], *, old_target: bool):
        team = TeamFactory()
        self.project = ProjectFactory(team=team)
        self.admin = MembershipFactory(team=team, role=Role.OWNER).user
        _, raw = ApiToken.issue(
            self.project,
            permissions=[TokenPermission.READ, TokenPermission.WRITE, TokenPermission.DELETE],
        )
        self.token = raw
        self.agent = client_for(token=raw)
        self.people = folks
        self.ids = []
        for index, person in enumerate(folks):
            body = {
                "agent_name": "helper",
                "user_name": person.name,
                "title": f"Chat with {person.first}",
                "messages": transcript(person),
            }
            if old_target and index == 0:
                body["started_at"] = (timezone.now() - timedelta(days=400)).isoformat()
            response = self.agent.post("/api/v1/sessions", body, format="json")
            assert response.status_code == 201, response.content
            self.ids.append(response.json()["id"])
        # An agent's own memory of the first person, from their first message; and one of
        # no session naming the last person (only a project-wide anonymisation reaches it).
        first, last = folks[0], folks[-1]
        for body in (
            {
                "type": "preference",
                "content": f"{first.first} {first.last} likes short answers.",
                "session": self.ids[0],
                "evidence": [0],
            },
            {
                "type": "fact",
                "content": f"{last.name} is on call this week ({rota(last)}).",
                "person": last.name,
                "agent": "helper",
            },
        ):
            response = self.agent.post("/api/v1/memories", body, format="json")
            assert response.status_code == 201, response.content

    @property
    def target(self) -> Session:
        return Session.objects.get(public_id=self.ids[0])

    def reads(self, needle: str) -> list[str]:
        """Which reads return ``needle``: search, context, memories, diaries, the person's
        recent events, exports, MCP."""
        user = client_for(self.admin)
        project = self.project.pk
        found = []
        answers = {
            "search": self.agent.get("/api/v1/search", {"q": needle}),
            "context": self.agent.get("/api/v1/context", {"query": needle}),
            "context of the project": self.agent.get("/api/v1/context"),
            "memories": self.agent.get("/api/v1/memories", {"q": needle}),
            "memory list": self.agent.get("/api/v1/memories"),
            "diary": user.get("/api/v1/diary", {"project": project}),
            "diary search": user.get("/api/v1/diary", {"project": project, "q": needle}),
            "diary export": user.get("/api/v1/diary/export", {"project": project}),
            "sessions": self.agent.get("/api/v1/sessions"),
            "mcp": self.agent.post(
                "/mcp",
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": "search_sessions", "arguments": {"query": needle}},
                    }
                ),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {self.token}",
                **MCP_HEADERS,
            ),
        }
        for person in self.people:
            answers[f"recent of {person.first}"] = user.get(
                f"/api/v1/people/{person.name}/recent", {"project": project}
            )
        for public_id in Session.objects.filter(project=self.project).values_list(
            "public_id", flat=True
        ):
            answers[f"export {public_id}"] = self.agent.get(
                f"/api/v1/sessions/{public_id}/export", {"format": "json"}
            )
        for read, response in answers.items():
            assert response.status_code in (200, 404), (read, response.status_code)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            if response["Content-Type"].startswith("application/json"):
                # Not what is stored: the question and the person asked about, echoed.
                answer = json.loads(body)
                for echoed in ("query", "person"):
                    if isinstance(answer, dict):
                        answer.pop(echoed, None)
                body = json.dumps(answer).encode()
            at = body.lower().find(needle.lower().encode())
            if at >= 0:
                found.append(f"{read}: …{body[max(0, at - 80) : at + 40].decode(errors='replace')}")
        return found


def forget(world: World, scenario: str) -> tuple[list[str], list[str]]:
    """Run one way of forgetting; returns what must be gone and what must remain."""
    target, folks = world.target, world.people
    others = folks[1:]
    admin = client_for(world.admin)
    if scenario == "trash_and_purge":
        response = admin.delete(f"/api/v1/sessions/{target.public_id}")
        assert response.status_code == 204, response.content
        lifecycle.purge(Session.objects.get(pk=target.pk))
        gone = [*folks[0].personal, folks[0].code]
    elif scenario == "retention":
        world.project.retention_days = 30
        world.project.save(update_fields=["retention_days"])
        # Untouched since it was captured, 400 days ago (the pipeline just wrote to it).
        Session.objects.filter(pk=target.pk).update(updated_at=target.started_at)
        assert retention.enforce_retention()["sessions"] == 1
        later = timezone.now() + timedelta(days=world.project.trash_days + 1)
        assert lifecycle.purge_expired(later) == 1
        gone = [*folks[0].personal, folks[0].code]
    elif scenario == "remove_message":
        response = admin.delete(f"/api/v1/sessions/{target.public_id}/messages/4")
        assert response.status_code in (200, 204), response.content
        gone = [folks[0].code]
        others = folks  # the rest of the target session stays
    elif scenario == "anonymise_session":
        response = admin.post(
            f"/api/v1/sessions/{target.public_id}/anonymize", {"dry_run": False}, format="json"
        )
        assert response.status_code == 200, response.content
        gone = folks[0].personal
        return gone, [folks[0].code, *(t for p in others[:-1] for t in p.personal)]
    elif scenario == "memories_deleted":
        # A memory recorded by an agent (no session) deleted in bulk by its person, then
        # purged by the daily purge once the project's recovery window has passed.
        last = folks[-1]
        response = admin.post(
            "/api/v1/memories/delete",
            {"person": last.name, "dry_run": False, "reason": "asked to"},
            format="json",
        )
        assert response.status_code == 200, response.content
        assert response.json()["memories"] >= 1
        later = timezone.now() + timedelta(days=world.project.trash_days + 1)
        assert derived.purge_expired(later)["memories"] >= 1
        return [rota(last)], [t for p in folks for t in (*p.personal, p.code)]
    else:
        response = admin.post(
            f"/api/v1/anonymize?project={world.project.pk}", {"dry_run": False}, format="json"
        )
        assert response.status_code in (200, 202), response.content
        job = response.json().get("job")
        if job:
            assert wait_for(
                lambda: admin.get(f"/api/v1/anonymize/{job}").json()["state"] == "done",
                timeout=120,
            )
        gone = [t for p in folks for t in p.personal]
        return gone, [p.code for p in folks]
    kept = [t for p in others for t in (*p.personal, p.code) if t not in gone]
    return gone, kept


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scenario", SCENARIOS)
@settings(
    max_examples=2,
    deadline=None,
    # An example takes seconds of real work: shrinking a failure would take many minutes
    # and the failure already names the scenario and what remains where.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    folks=st.lists(
        people,
        min_size=2,
        max_size=3,
        unique_by=(lambda p: p.first, lambda p: p.last, lambda p: p.code),
    ),
)
def test_what_is_forgotten_is_gone_from_every_table_and_every_read(
    no_quiet_period, celery_worker_process, folks, scenario
):
    folks = salted(folks)
    world = World(folks, old_target=scenario == "retention")
    project = world.project
    assert wait_for(lambda: pipeline_done(project), timeout=240), "the pipeline did not finish"
    distil_diaries(project)
    # The pipeline made what forgetting must reach: memories (extracted and recorded),
    # diary entries, summaries; and secrets never reached the database at all.
    assert Memory.objects.filter(project=project, origin="extractor").exists()
    assert DiaryEntry.objects.filter(project=project).exists()
    assert not find_text([p.secret for p in folks])
    assert find_text([folks[0].first]), "the scan must see what is there"

    gone, kept = forget(world, scenario)
    celery_worker_process.wait_idle()
    assert wait_for(lambda: pipeline_done(project), timeout=240)
    distil_diaries(project)

    left = find_text(gone)
    assert not left, f"{scenario}: erased text remains in {left}"
    for needle in gone:
        assert not world.reads(needle), f"{scenario}: {needle} is still read"
    remaining = {hit.needle for hit in find_text(kept)}
    assert remaining == {k.casefold() for k in kept}, "what was not erased must remain"
    if scenario != "project":
        survivor = kept[0]
        assert world.reads(survivor), f"the reads must find what remains ({survivor})"
    if scenario.startswith("anonymise") or scenario == "project":
        # Vectors were made again from the anonymised text, never kept from the original.
        from memories.capture.record import _embed

        for memory in Memory.objects.filter(project=project).exclude(embedding=None):
            assert float(abs(memory.embedding - _embed(memory.content)).max()) < 1e-3
