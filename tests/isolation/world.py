"""The isolation campaign's world (issue 38): one team whose member has a private, a summary
and a team session, each with its own words in every place a session's content can reach;
the team's other people and tokens; a second team. Built once per module through the real
capture API and the real pipeline (embedding, enrichment, extraction, the diary), committed,
and flushed afterwards.

Every session of visibility V carries words that say where they live and so who may see them:

- ``zebracorn-V-title``      its title: LISTED (an admin sees that it exists, with its title);
- ``zebracorn-V-summary``    its summary, ``zebracorn-V-topic`` its topics,
  ``zebracorn-V-memory``     its accepted (active) memory: SUMMARY;
- ``zebracorn-V-message``    its messages, ``zebracorn_V_entity`` a file path in them (an
  entity), ``zebracorn-V-proposal`` a memory still proposed for review: CONTENT.

All share the word ``zebracorn``, so one query reaches all of them and a private session could
change another's rank. Team B's session carries ``zebracorn-otherteam-…`` words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from django.db import connection
from django.utils import timezone

from teams.models import ApiToken, Role, Visibility
from tests.clients import client_for
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory, UserFactory

VISIBILITIES = (Visibility.PRIVATE, Visibility.SUMMARY, Visibility.TEAM)
# The sessions: one of each visibility, of team A's member; and team B's.
TAGS = ("private", "summary", "team", "otherteam")
SHARED_WORD = "zebracorn"
OWNER_NAME = "olga"  # the person of the sessions (user_name) and the owner's username
AGENT = "architect"


class Reading:
    """How much of a session a caller reads, ordered: NONE < LISTED < SUMMARY < CONTENT."""

    NONE, LISTED, SUMMARY, CONTENT = 0, 1, 2, 3
    NAMES = {0: "none", 1: "listed", 2: "summary", 3: "content"}


def words(tag: str) -> dict[int, list[str]]:
    """The words of one session (``tag``: its visibility, or 'otherteam'), by the least
    reading that may see them."""
    return {
        Reading.LISTED: [f"zebracorn-{tag}-title"],
        Reading.SUMMARY: [
            f"zebracorn-{tag}-summary",
            f"zebracorn-{tag}-topic",
            f"zebracorn-{tag}-memory",
        ],
        Reading.CONTENT: [
            f"zebracorn-{tag}-message",
            f"zebracorn_{tag}_entity",
            f"zebracorn-{tag}-proposal",
        ],
    }


def forbidden_words(tag: str, reading: int) -> list[str]:
    """The words of session ``tag`` a caller reading it at ``reading`` must never see."""
    return [w for level, ws in words(tag).items() if level > reading for w in ws]


def messages_of(tag: str) -> list[dict]:
    """A conversation whose memory-bearing turns hold only the memory's and the proposal's
    words (their sentences become memories), the others only the message words."""
    return [
        {
            "role": "user",
            "content": f"Look at the zebracorn-{tag}-message flow in "
            f"src/zebracorn_{tag}_entity/handler.py please.",
        },
        {
            "role": "assistant",
            "content": f"I read src/zebracorn_{tag}_entity/handler.py: the "
            f"zebracorn-{tag}-message loop opens a connection per request.",
        },
        {
            "role": "assistant",
            "content": f"We decided to use the zebracorn-{tag}-memory pool instead of "
            "per-request connections because the database allows only 20 connections.",
        },
        {
            "role": "user",
            "content": f"Please never add the zebracorn-{tag}-proposal package without asking.",
        },
    ]


@dataclass
class Caller:
    """Someone who calls: a person (API as that user, web signed in) or a token (API, MCP)."""

    name: str
    user: object = None
    token: str | None = None
    team: str = "A"  # whose team it is in

    @property
    def is_person(self) -> bool:
        return self.user is not None

    def api(self):
        return client_for(user=self.user, token=self.token)

    def web(self):
        """A browser signed in as this person (its session was made with the world, so it
        outlives each test's rolled-back transaction)."""
        from django.conf import settings
        from django.test import Client

        client = Client()
        client.cookies[settings.SESSION_COOKIE_NAME] = self.web_session
        return client

    web_session: str = ""


@dataclass
class World:
    team: object
    project: object
    other_team: object
    other_project: object
    owner: object
    callers: dict[str, Caller]
    sessions: dict[str, object]  # tag -> Session (tags: the visibilities and 'otherteam')
    memories: dict[str, list] = field(default_factory=dict)  # tag -> [Memory]
    notes: list[str] = field(default_factory=list)

    @property
    def project_ref(self) -> str:
        return f"{self.team.slug}/{self.project.slug}"


def capture(client, tag: str, visibility: str | None, started) -> str:
    body = {
        "agent_name": AGENT,
        "user_name": OWNER_NAME,
        "title": f"zebracorn-{tag}-title plan",
        "started_at": started.isoformat(),
        "ended_at": (started + timedelta(minutes=20)).isoformat(),
        "messages": messages_of(tag),
    }
    if visibility is not None:
        body["visibility"] = visibility
    response = client.post("/api/v1/sessions", body, format="json")
    assert response.status_code == 201, (tag, response.status_code, response.content[:500])
    return response.json()["id"]


def reindex_vectors() -> None:
    """Rebuild the HNSW indexes: earlier tests' rolled-back rows leave dead entries through
    which an index scan can answer nothing (tests/conftest.py, clean_vector_index)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexdef ILIKE '%USING hnsw%'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'REINDEX INDEX "{name}"')


def build_world() -> World:
    from django.conf import settings
    from django.test import Client

    from memories.diary.distill import distill_day
    from memories.enrich import run as extraction
    from memories.models import Memory, MemoryStatus
    from sessions.embedding.backend import embed
    from sessions.embedding.model_files import model_name
    from sessions.enrich import pipeline
    from sessions.models import Session

    team = TeamFactory(name="Isolation A", slug="isolation-a")
    project = ProjectFactory(team=team, name="Atlas", slug="atlas", memory_review_threshold=0)
    owner = MembershipFactory(team=team, role=Role.MEMBER, user=UserFactory(username=OWNER_NAME))
    owner = owner.user
    member = MembershipFactory(team=team, role=Role.MEMBER, user=UserFactory(username="mona")).user
    viewer = MembershipFactory(team=team, role=Role.VIEWER, user=UserFactory(username="vic")).user
    admin = MembershipFactory(team=team, role=Role.ADMIN, user=UserFactory(username="adam")).user
    # Agents' tokens as they are made by default: read and write. (A token with the 'delete'
    # permission stands for an admin of its team.)
    team_token = ApiToken.issue(project, name="team")[1]
    owner_token = ApiToken.issue(project, name="olga", person=owner)[1]
    member_token = ApiToken.issue(project, name="mona", person=member)[1]

    other_team = TeamFactory(name="Isolation B", slug="isolation-b")
    other_project = ProjectFactory(team=other_team, name="Borealis", slug="borealis")
    outsider = MembershipFactory(
        team=other_team, role=Role.OWNER, user=UserFactory(username="otto")
    ).user
    outsider_token = ApiToken.issue(other_project, name="b")[1]

    callers = {
        "owner": Caller("owner", user=owner),
        "owner_token": Caller("owner_token", token=owner_token),
        "admin": Caller("admin", user=admin),
        "member": Caller("member", user=member),
        "viewer": Caller("viewer", user=viewer),
        "member_token": Caller("member_token", token=member_token),
        "team_token": Caller("team_token", token=team_token),
        "outsider": Caller("outsider", user=outsider, team="B"),
        "outsider_token": Caller("outsider_token", token=outsider_token, team="B"),
    }

    # One day, an hour apart (in the past), so that day's diary holds all of them.
    day = (timezone.now() - timedelta(hours=5)).date()
    start = datetime.combine(day, time(1), tzinfo=UTC)
    owner_api = client_for(token=owner_token)
    ids = {}
    for i, visibility in enumerate(VISIBILITIES):
        ids[str(visibility)] = capture(
            owner_api, str(visibility), str(visibility), start + timedelta(hours=i)
        )
    ids["otherteam"] = capture(client_for(token=outsider_token), "otherteam", None, start)

    # The pipeline, in this process: embedding, enrichment (its commit makes extraction due),
    # extraction.
    while pipeline.embed_pending_messages():
        pass
    Session.objects.filter(public_id__in=ids.values()).update(
        updated_at=timezone.now() - timedelta(hours=1)
    )
    while pipeline.enrich_pending_sessions():
        pass
    while extraction.extract_pending_sessions():
        pass

    sessions, memories = {}, {}
    for tag, public_id in ids.items():
        session = Session.objects.get(public_id=public_id)
        # The summary and topics say only their own words (the offline summary would quote
        # the messages); the session's vector is the summary's, as enrichment makes it.
        summary = f"Planning the zebracorn-{tag}-summary work."
        Session.objects.filter(pk=session.pk).update(
            summary=summary,
            topics=[f"zebracorn-{tag}-topic"],
            embedding=embed([summary])[0],
            embedding_model=model_name(),
        )
        session.refresh_from_db()
        sessions[tag] = session
        found = list(Memory.objects.filter(session=session).order_by("id"))
        memories[tag] = found
        # The proposal waits for review; the decision is accepted.
        Memory.objects.filter(pk__in=[m.pk for m in found if "-proposal" in m.content]).update(
            status=MemoryStatus.PROPOSED
        )
    # Team B's memories get numbers team A's do not have: a token of B asking for DEC-001
    # must not find its own DEC-001 where the campaign means A's.
    for memory in Memory.objects.filter(project=other_project):
        number = memory.public_id.split("-")[-1]
        memory.public_id = memory.public_id.replace(number, f"9{number[1:]}")
        memory.save(update_fields=["public_id"])
    distill_day(start.date(), team_id=team.pk)
    distill_day(start.date(), team_id=other_team.pk)
    reindex_vectors()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    for caller in callers.values():
        if caller.is_person:
            signed_in = Client()
            signed_in.force_login(caller.user)
            caller.web_session = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    return World(
        team=team,
        project=project,
        other_team=other_team,
        other_project=other_project,
        owner=owner,
        callers=callers,
        sessions=sessions,
        memories={tag: [Memory.objects.get(pk=m.pk) for m in ms] for tag, ms in memories.items()},
    )
