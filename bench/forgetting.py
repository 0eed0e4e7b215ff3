"""Forgetting at scale (issue 34): the time and peak memory of anonymising a project of
``--messages`` messages (100,000 by default) with its memories and diary entries, of moving
such a project's sessions to the trash and purging them, and of the erasure audit's scan.

**Data**: two projects of ``--messages`` messages each (one to anonymise, one to trash and
purge), in their own teams, built without the pipeline's workers but with the rows it
leaves (``tests/sessions/forget/test_erasure_audit.py`` runs it for real):

- sessions of ``--session-messages`` (100) messages, each with one of ``PEOPLE`` people
  (Faker names; the first three are team members) and the agent ``architect``; a title, a
  summary, topics, artifacts and metadata (``cwd`` under the person's home folder, the
  speaker aliases the session contributes) that name the person; a random unit vector as
  the summary's;
- messages in turns of five: the person (author: their name), the agent, the person, a
  tool call and its output. The text is LoCoMo chat lines (real prose) with what a coding
  chat holds: names of people, e-mail addresses, phone numbers, IP addresses, absolute
  paths under home folders. Keyword context computed by ``index_context`` (the capture's
  SQL); one chunk per message with its text and a random unit vector;
- entities (the files and commands each session touched), speaker aliases (first name →
  person, "Winston" → the agent), one memory per 20 messages (extracted: content, details,
  topic, tags naming the person; an evidence row with its quote; a random unit vector) and
  a few memories of no session; the extraction state of each session; one diary entry per
  person, character and day, listing the day's sessions and memories.

**Steps**, in one run (the machine is shared and noisy; a ratio to the baseline compares
across runs better than seconds do). Each in this process, timed with its peak RSS: the
high-water mark is reset before the step (``/proc/self/clear_refs``), and the table gives
its rise over the RSS before the step. PostgreSQL's own memory is not in it.

1. baseline: ``SELECT content`` of one project's messages, fetched into Python once;
2. audit: ``sessions/forget/audit.py`` ``find_text`` of three people's full names and an
   e-mail address over every text column of the whole database (both projects);
3. anonymise preview: ``anonymize_project(dry_run=True)`` (the API's preview: the latest
   ``PREVIEW_SESSIONS`` sessions only);
4. anonymise: ``anonymize_project(dry_run=False)``, as the Celery task runs it: every
   session in its own transaction, memories re-embedded with the real model (one
   ``embed_query`` per changed memory, ``memories/capture/record.py`` ``_embed``). The
   model is loaded before the step (a worker has it loaded); changed messages go back to
   the embedding queue, which is the workers' later cost and not in this figure;
5. trash: every session of the other project through ``sessions/forget/bulk.py``
   ``soft_delete_many`` (what a person's "delete all matching" does, ``MAX_BULK`` at a time);
6. purge: the daily ``sessions.tasks.purge_trash`` once their trash window has passed
   (``purge_expired``: ``PURGE_BATCH`` sessions, at most about ``PURGE_BATCH_MESSAGES``
   messages, per transaction; then the memories' trash).

Afterwards the audit is run again for the anonymised project's names, as a check (it must
find none of them outside ``auth_user``, the members' own accounts), and the purged
project's rows are counted (none of its sessions' may be left; its memories of no session
stay).

    python -m bench.forgetting [--messages 100000] [--session-messages 100] [--repeat 1]
        [--profile anonymise,purge] [--hnsw] [--keep DIR]

``--repeat N`` builds the data again for each repetition (the steps change it) and reports
medians. ``--profile STEP,…`` runs those steps under cProfile and prints their top functions
(the figures of a profiled step are inflated).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import pstats
import random
import shutil
import statistics
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, timedelta
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.capture import locomo_texts
from bench.harness import django_on_embedded_servers

PEOPLE = 40
MEMBERS = 3
MESSAGES_PER_MEMORY = 20
SESSIONLESS_MEMORIES_PER_SESSION = 0.05  # an agent's own memory of no session, now and then
DAYS = 180
DIMENSIONS = 384
HNSW = "chunk_embedding_hnsw"
STEPS = ("baseline", "audit", "preview", "anonymise", "trash", "purge")
REPOS = ("billing-api", "web-shop", "infra", "data-pipeline", "mobile-app")
FILES = (
    "src/app/models.py",
    "src/app/views.py",
    "tests/test_login.py",
    "docker-compose.yaml",
    "README.md",
    "src/app/settings.py",
    "scripts/deploy.sh",
    "pyproject.toml",
)
TOPICS = ("deploy", "login", "database", "billing", "tests", "performance", "docs")


# --- peak memory ------------------------------------------------------------------------


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


class Measured:
    """Wall time and the rise of peak RSS over the RSS at the start, of a ``with`` block.

    The kernel's high-water mark (VmHWM) is reset to the current RSS first (writing 5 to
    ``/proc/self/clear_refs``, Linux 4.0+), so a peak of an earlier step does not hide this
    one's."""

    def __init__(self, profile: bool = False):
        self.profile = cProfile.Profile() if profile else None

    def __enter__(self):
        Path("/proc/self/clear_refs").write_text("5")
        self.rss_before = _status_kib("VmRSS")
        if self.profile:
            self.profile.enable()
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.started
        if self.profile:
            self.profile.disable()
        self.rise_mib = max(0, _status_kib("VmHWM") - self.rss_before) / 1024

    def top(self, n: int = 30) -> str:
        out = io.StringIO()
        stats = pstats.Stats(self.profile, stream=out)
        stats.sort_stats("cumulative").print_stats(n)
        stats.sort_stats("tottime").print_stats(15)
        return out.getvalue()


# --- data -------------------------------------------------------------------------------


class Person:
    def __init__(self, fake, n: int, salt: str):
        self.first = fake.unique.first_name()
        self.last = fake.unique.last_name()
        self.name = f"{self.first} {self.last}"
        self.username = f"{self.first[0]}{self.last}{salt}".lower()
        self.email = f"{self.first}.{self.last}@example-{salt}.com".lower()
        self.phone = f"+1 415 555 {1000 + n:04d}"


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIMENSIONS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class Chat:
    """The text of one session's turns."""

    def __init__(self, rng: random.Random, texts: list[str], people: list[Person]):
        self.rng, self.texts, self.people = rng, texts, people

    def filler(self) -> str:
        return self.rng.choice(self.texts).split(": ", 1)[-1]

    def path(self, person: Person, repo: str) -> str:
        return f"/home/{person.username}/src/{repo}/{self.rng.choice(FILES)}"

    def user(self, p: Person, other: Person, repo: str) -> str:
        choices = (
            f"Hi, I'm {p.name}. Can you look at {self.path(p, repo)}? {self.filler()}",
            f"{self.filler()} Mail me at {p.email} if the build breaks.",
            self.filler(),
            self.filler(),
            f"Ask {other.first} about it, {other.email} or {other.phone}. {self.filler()}",
            f"Please run the tests in {self.path(p, repo)} again.",
            f"{other.name} said the staging box at 10.0.{self.rng.randint(0, 255)}.17 is down.",
        )
        return self.rng.choice(choices)

    def assistant(self, p: Person, other: Person, repo: str) -> str:
        choices = (
            f"Sure {p.first}, {self.filler()}",
            self.filler(),
            self.filler(),
            f"Done, {p.first}. I updated {self.path(p, repo)} and told {other.name}.",
            f"I will remember that, {p.first}. {self.filler()}",
        )
        return self.rng.choice(choices)

    def tool_call(self, p: Person, repo: str) -> str:
        choices = (
            f"cat {self.path(p, repo)}",
            f"ssh deploy@10.0.{self.rng.randint(0, 255)}.{self.rng.randint(2, 250)} uptime",
            f"git log --author='{p.name}' -n 3",
            f"pytest -q {self.path(p, repo)}",
        )
        return self.rng.choice(choices)

    def tool_output(self, p: Person, repo: str) -> str:
        choices = (
            f"commit {self.rng.getrandbits(40):010x}\nAuthor: {p.name} <{p.email}>\n\n"
            f"    {self.filler()}",
            f" 12:01:07 up 41 days,  3 users,  load average: 0.{self.rng.randint(10, 99)}",
            f"FAILED {self.path(p, repo)}::test_login - AssertionError\n1 failed, 41 passed",
            f"import os\n\nDATABASE_URL = os.environ['DATABASE_URL']  # {p.username}\n",
        )
        return self.rng.choice(choices)


def build(label: str, messages: int, per: int, seed: int, texts: list[str]):
    """One project of ``messages`` messages in sessions of ``per``; returns it and its
    people."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone
    from faker import Faker

    from memories.diary.models import DiaryEntry
    from memories.diary.render import markdown
    from memories.models import (
        ID_PREFIX,
        Memory,
        MemoryCounter,
        MemoryEvidence,
        MemoryExtraction,
        MemoryType,
        Origin,
    )
    from sessions.capture.keyword_context import index_context
    from sessions.models import (
        Entity,
        Message,
        Session,
        SpeakerAlias,
        new_public_id,
    )
    from teams.models import Membership, Project, Role, Team

    clock = time.perf_counter()

    def lap(what: str) -> None:
        nonlocal clock
        print(f"    {label}: {what} {time.perf_counter() - clock:.1f} s", flush=True)
        clock = time.perf_counter()

    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    fake = Faker()
    fake.seed_instance(seed)
    salt = f"{label}{seed}"
    people = [Person(fake, n, salt) for n in range(PEOPLE)]
    chat = Chat(rng, texts, people)
    team = Team.objects.create(name=f"Team {salt}", slug=f"team-{salt}")
    project = Project.objects.create(team=team, name=f"Shop {salt}", slug=f"shop-{salt}")
    User = get_user_model()
    for person in people[:MEMBERS]:
        user = User.objects.create(
            username=person.username,
            first_name=person.first,
            last_name=person.last,
            email=person.email,
        )
        Membership.objects.create(team=team, user=user, role=Role.MEMBER)

    now = timezone.now()
    count = max(1, messages // per)
    plan = []  # (session, person, other, repo)
    sessions = []
    for n in range(count):
        person, other = rng.sample(people, 2)
        repo = rng.choice(REPOS)
        started = now - timedelta(days=rng.uniform(1, DAYS))
        topics = rng.sample(TOPICS, 2)
        session = Session(
            team=team,
            project=project,
            public_id=new_public_id("architect", started) + f"-{salt}-{n}",
            external_id=f"{salt}-{n}",
            agent_name="architect",
            agent_persona="Winston",
            title=f"Chat with {person.first} about {topics[0]}",
            user_name=person.name,
            started_at=started,
            ended_at=started + timedelta(seconds=7 * per),
            message_count=per,
            next_seq=per,
            topics=topics,
            artifacts=[chat.path(person, repo) for _ in range(2)],
            metadata={
                "cwd": f"/home/{person.username}/src/{repo}",
                "git_branch": f"{person.username}/{topics[0]}",
                "speaker_aliases": [
                    [person.first, person.name, False, "vocative", 2],
                    ["Winston", "architect", True, "persona", 2],
                ],
            },
            summary=f"{person.name} and the agent worked on {topics[0]} in {repo}; "
            f"{other.name} ({other.email}) was asked about {topics[1]}.",
            enrichment_status="done",
            enriched_at=started,
            enriched_through_seq=per - 1,
            last_active_at=started,
        )
        sessions.append(session)
        plan.append((session, person, other, repo))
    Session.objects.bulk_create(sessions, batch_size=1000)
    vectors = unit_vectors(nrng, len(sessions))
    for session, vector in zip(sessions, vectors, strict=True):
        session.embedding = vector
    Session.objects.bulk_update(sessions, ["embedding", "embedding_model"], batch_size=500)

    # Messages, in batches (a project's worth of objects at once is a few hundred MB).
    sizes = {}
    session_messages: dict[int, list[Message]] = {}
    batch: list[Message] = []
    for session, person, other, repo in plan:
        rows = []
        for g in range(per):
            turn = g % 5
            common = dict(
                team=team,
                session=session,
                seq=g,
                timestamp=session.started_at + timedelta(seconds=7 * g),
                enrichment_status="done",
                enriched_at=session.started_at,
            )
            if turn in (0, 2):
                message = Message(
                    role="user", author=person.name, content=chat.user(person, other, repo)
                )
            elif turn == 1:
                message = Message(
                    role="assistant",
                    author="architect",
                    content=chat.assistant(person, other, repo),
                    metadata={"model": "claude-sonnet"},
                )
            elif turn == 3:
                message = Message(
                    role="assistant",
                    author="architect",
                    content=chat.tool_call(person, repo),
                    tool_name="bash",
                    tool_call_id=f"call-{g // 5}",
                    metadata={"model": "claude-sonnet", "cwd": session.metadata["cwd"]},
                )
            else:
                message = Message(
                    role="tool",
                    content=chat.tool_output(person, repo),
                    tool_name="bash",
                    tool_call_id=f"call-{g // 5}",
                    kind="tool_output",
                )
            for name, value in common.items():
                setattr(message, name, value)
            message.token_count = len(message.content) // 4
            rows.append(message)
        sizes[session.pk] = sum(len(m.content.encode()) for m in rows)
        session_messages[session.pk] = rows
        batch += rows
        if len(batch) >= 5000:
            Message.objects.bulk_create(batch)
            batch = []
    if batch:
        Message.objects.bulk_create(batch)
    lap("sessions and messages")
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE agent_sessions_session SET size_bytes = %s WHERE id = %s",
            [(size, pk) for pk, size in sizes.items()],
        )
    for session in sessions:
        index_context(session.pk, 0)
    lap("keyword context")
    # One chunk per message: its speaker and text, with a random unit vector.
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO agent_sessions_messagechunk (team_id, created_at, session_id,
                message_id, index, char_start, char_end, text, embedding, model)
            SELECT m.team_id, now(), m.session_id, m.id, 0, 0, length(m.content),
                coalesce(nullif(m.author, ''), m.role) || ': ' || m.content,
                (SELECT l2_normalize(array_agg(random() - 0.5)::vector)
                 FROM generate_series(1, {DIMENSIONS}) WHERE m.id IS NOT NULL),
                'bench-random'
            FROM agent_sessions_message m JOIN agent_sessions_session s ON s.id = m.session_id
            WHERE s.project_id = %s
            """,
            [project.pk],
        )
    lap("chunks")

    entities, evidence_rows, memories = [], [], []
    counters: Counter = Counter()
    types = list(MemoryType)
    memory_sessions = []
    for session, person, _other, repo in plan:
        rows = session_messages[session.pk]
        seen = {}
        for message in rows:
            if message.tool_name and message.role == "assistant":
                value = message.content.split()[-1]
                kind = "FILE" if value.startswith("/") else "COMMAND"
                if kind == "COMMAND":
                    value = message.content.split()[0]
                seen.setdefault((kind, value), (message, 0))
                first, n = seen[(kind, value)]
                seen[(kind, value)] = (first, n + 1)
        for (kind, value), (message, n) in list(seen.items())[:12]:
            entities.append(
                Entity(
                    team=team,
                    session=session,
                    message=message,
                    type=kind,
                    value=value[:500],
                    normalized=value.lower()[:500],
                    context=message.content[:200],
                    count=n,
                )
            )
        users = [m for m in rows if m.role == "user"]
        for message in rng.sample(users, min(len(users), max(1, per // MESSAGES_PER_MEMORY))):
            kind = rng.choice(types)
            counters[kind] += 1
            topic = rng.choice(TOPICS)
            content = (
                f"{person.first} {rng.choice(('prefers', 'decided', 'found', 'asked'))} that "
                f"{topic} in {repo} needs {chat.filler()[:120]}"
            )
            memory = Memory(
                team=team,
                project=project,
                session=session,
                public_id=f"{ID_PREFIX[kind]}-{counters[kind]:03d}",
                type=kind,
                content=content,
                details={"rationale": f"{person.name} said so", "by": person.email},
                topic=f"{topic}_{repo}".replace("-", "_"),
                tags=[topic, rng.choice(FILES).rsplit("/", 1)[-1]],
                confidence="medium",
                agent="architect",
                person=person.name,
                origin=Origin.EXTRACTOR,
                extractor="offline",
                occurred_at=message.timestamp,
                fingerprint=f"{rng.getrandbits(128):032x}",
            )
            memories.append(memory)
            evidence_rows.append((memory, message, session, message.content[:200]))
            memory_sessions.append(session)
        if rng.random() < SESSIONLESS_MEMORIES_PER_SESSION:
            counters[MemoryType.FACT] += 1
            memories.append(
                Memory(
                    team=team,
                    project=project,
                    public_id=f"FACT-{counters[MemoryType.FACT]:03d}",
                    type=MemoryType.FACT,
                    content=f"{person.name} is on call this week ({person.phone}).",
                    person=person.name,
                    agent="architect",
                    origin=Origin.AGENT,
                    occurred_at=session.started_at,
                    fingerprint=f"{rng.getrandbits(128):032x}",
                )
            )
    Entity.objects.bulk_create(entities, batch_size=2000, ignore_conflicts=True)
    for memory, vector in zip(memories, unit_vectors(nrng, len(memories)), strict=True):
        memory.embedding = vector
    Memory.objects.bulk_create(memories, batch_size=1000)
    MemoryEvidence.objects.bulk_create(
        [
            MemoryEvidence(team=team, memory=m, message=msg, session=s, quote=q)
            for m, msg, s, q in evidence_rows
        ],
        batch_size=2000,
    )
    MemoryCounter.objects.bulk_create(
        [MemoryCounter(project=project, prefix=ID_PREFIX[k], last=n) for k, n in counters.items()]
    )
    MemoryExtraction.objects.bulk_create(
        [
            MemoryExtraction(
                team=team,
                session=s,
                status="done",
                through_seq=per - 1,
                method="offline",
                extracted_at=now,
            )
            for s in sessions
        ],
        batch_size=2000,
    )

    # Speaker aliases: what the sessions' contributions add up to.
    evidence = Counter()
    for _session, person, _, _ in plan:
        evidence[(person.first, person.name, False, "vocative")] += 2
        evidence[("Winston", "architect", True, "persona")] += 2
    SpeakerAlias.objects.bulk_create(
        [
            SpeakerAlias(
                team=team,
                project=project,
                alias=alias,
                alias_key=alias.lower(),
                speaker=speaker,
                is_agent=is_agent,
                source=source,
                evidence=n,
            )
            for (alias, speaker, is_agent, source), n in evidence.items()
        ]
    )

    # Diary entries: one per person, character and day, listing the day's sessions and the
    # memories said that day.
    by_day = defaultdict(list)
    for session, person, _, _ in plan:
        by_day[(person.name, session.started_at.astimezone(UTC).date())].append(session)
    said = defaultdict(list)
    for memory in memories:
        if memory.session_id:
            said[memory.session_id].append(memory.content)
    entries = []
    for (name, day), day_sessions in by_day.items():
        parts = {
            "happened": "\n".join(
                f"- {s.public_id} ({s.title}): {s.summary}" for s in day_sessions
            ),
            "decisions": [c for s in day_sessions for c in said[s.pk]][:6],
            "facts": [f"{name} works in {s.metadata['cwd']}" for s in day_sessions],
        }
        entries.append(
            DiaryEntry(
                team=team,
                project=project,
                person=name,
                character="architect",
                day=day,
                happened=parts["happened"],
                decisions=parts["decisions"],
                facts=parts["facts"],
                sessions=[s.public_id for s in day_sessions],
                text=markdown(name, "architect", day, parts),
            )
        )
    for entry, vector in zip(entries, unit_vectors(nrng, len(entries)), strict=True):
        entry.embedding = vector
    DiaryEntry.objects.bulk_create(entries, batch_size=1000)
    lap("entities, memories, aliases, diaries")
    counts = {
        "sessions": len(sessions),
        "messages": len(sessions) * per,
        "entities": len(entities),
        "memories": len(memories),
        "evidence": len(evidence_rows),
        "diary_entries": len(entries),
        "aliases": len(evidence),
    }
    return project, people, counts


class HnswDropped:
    """The chunks' HNSW index dropped while the data is loaded (an insert per vector into it
    would take far longer), and built once afterwards when ``rebuild``. No step inserts a
    chunk, and a deleted row leaves its index entries to VACUUM, so the steps' figures do
    not depend on it; building it over 2 × 100,000 vectors takes minutes on 2 cores."""

    def __init__(self, rebuild: bool):
        self.rebuild = rebuild

    def __enter__(self):
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [HNSW])
            self.indexdef = cursor.fetchone()
            if self.indexdef:
                cursor.execute(f"DROP INDEX {HNSW}")
        return self

    def __exit__(self, *exc):
        from django.db import connection

        if self.indexdef and self.rebuild and not exc[0]:
            started = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute("SET maintenance_work_mem = '1GB'")
                cursor.execute(self.indexdef[0])
                cursor.execute("RESET maintenance_work_mem")
            print(f"    chunks' HNSW index built in {time.perf_counter() - started:.0f} s")


def analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")


def reset() -> None:
    """Every team's rows gone (a repetition builds its data again)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE teams_team CASCADE")


# --- steps ------------------------------------------------------------------------------


def read_messages(project) -> int:
    """The baseline: the project's message texts, fetched once."""
    from django.db import connection

    chars = 0
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT content FROM agent_sessions_message WHERE session_id IN "
            "(SELECT id FROM agent_sessions_session WHERE project_id = %s)",
            [project.pk],
        )
        while rows := cursor.fetchmany(2000):
            chars += sum(len(r[0]) for r in rows)
    return chars


def needles(people) -> list[str]:
    """What the audit looks for: whole names and e-mail addresses (a first name alone is
    found inside other words: the audit matches substrings)."""
    return [people[0].name, people[1].name, people[5].name, people[6].email]


def trash_all(project) -> int:
    from sessions.forget import bulk
    from sessions.models import Session

    moved = 0
    while True:
        alive = Session.objects.filter(project=project).alive().order_by("pk")
        pks = list(alive.values_list("pk", flat=True)[: bulk.MAX_BULK])
        if not pks:
            return moved
        plan = bulk.plan_bulk_delete(Session.objects.filter(pk__in=pks))
        moved += bulk.soft_delete_many(plan, by=None, reason="bench: forget the project").done


def past_window(project) -> None:
    """The project's trash window over (not timed): its sessions were trashed long ago."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE agent_sessions_session SET deleted_at = deleted_at - %s "
            "WHERE project_id = %s AND deleted_at IS NOT NULL",
            [timedelta(days=project.trash_days + 1), project.pk],
        )


def left_of(project) -> dict[str, int]:
    from memories.diary.models import DiaryEntry
    from memories.models import Memory
    from sessions.models import Message, Session

    return {
        "sessions": Session.objects.filter(project=project).count(),
        "messages": Message.objects.filter(session__project=project).count(),
        "memories": Memory.objects.filter(project=project).count(),
        "diary_entries": DiaryEntry.objects.filter(project=project).count(),
    }


def repetition(args, texts, seed: int) -> tuple[dict, dict]:
    from django.utils import timezone

    from memories.capture.record import _embed
    from sessions.forget.anonymize import (
        PREVIEW_SESSIONS,
        AnonymizationConfig,
        anonymize_project,
    )
    from sessions.forget.audit import find_text
    from sessions.models import Message
    from sessions.tasks import purge_trash

    started = time.perf_counter()
    with HnswDropped(args.hnsw):
        anon, people, counts = build("a", args.messages, args.session_messages, seed, texts)
        gone, _, _ = build("p", args.messages, args.session_messages, seed + 1, texts)
    analyze()
    total = Message.objects.count()
    print(
        f"built 2 projects in {time.perf_counter() - started:.0f} s, each: "
        f"{json.dumps(counts)}; {total:,} messages in the database",
        flush=True,
    )
    _embed("warm the model up")  # a worker has it loaded already
    figures: dict[str, Measured] = {}
    notes: dict = {}

    def step(name: str, work, *, messages: int):
        with Measured(profile=name in args.profile) as measured:
            result = work()
        measured.messages, measured.result = messages, result
        figures[name] = measured
        print(
            f"  {name}: {measured.seconds:.2f} s, peak RSS +{measured.rise_mib:.0f} MiB",
            flush=True,
        )
        if measured.profile:
            print(measured.top(), flush=True)
        return result

    n = counts["messages"]
    step("baseline", lambda: read_messages(anon), messages=n)
    hits = step("audit", lambda: find_text(needles(people)), messages=total)
    notes["audit hits before"] = len(hits)
    config = AnonymizationConfig()
    # The preview reads the latest PREVIEW_SESSIONS sessions only: its messages are theirs.
    in_preview = min(counts["sessions"], PREVIEW_SESSIONS) * args.session_messages
    preview = step(
        "preview", lambda: anonymize_project(anon, config, dry_run=True), messages=in_preview
    )
    notes["preview sessions"] = preview.sessions
    outcome = step("anonymise", lambda: anonymize_project(anon, config, dry_run=False), messages=n)
    notes["anonymised"] = {
        k: v
        for k, v in outcome.as_dict().items()
        if k in ("sessions_changed", "messages_changed", "entities_changed", "derived_changed")
    }
    step("trash", lambda: trash_all(gone), messages=n)
    past_window(gone)
    step("purge", purge_trash, messages=n)
    # (The team members' own accounts keep their names: auth_user is not the project's.)
    skip = {("auth_user", c) for c in ("username", "first_name", "last_name", "email")}
    notes["audit hits after anonymising"] = [
        (h.table, h.column, h.rows) for h in find_text(needles(people), skip=skip)
    ]
    notes["left of the purged project"] = left_of(gone)
    notes["at"] = timezone.now().isoformat(timespec="seconds")
    return figures, notes


def table(runs: list[dict[str, Measured]]) -> str:
    base = statistics.median(r["baseline"].seconds for r in runs)
    lines = [
        "| step | messages | seconds | s per 1k messages | peak RSS rise MiB | × baseline |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in STEPS:
        seconds = statistics.median(r[name].seconds for r in runs)
        rise = statistics.median(r[name].rise_mib for r in runs)
        messages = runs[0][name].messages
        lines.append(
            f"| {name} | {messages:,} | {seconds:.2f} | {seconds / messages * 1000:.3f} "
            f"| {rise:.0f} | {seconds / base:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.forgetting",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--messages", type=int, default=100_000, help="messages of each project (100000)"
    )
    parser.add_argument(
        "--session-messages", type=int, default=100, help="messages per session (100)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="repetitions, each on new data; medians (1)"
    )
    parser.add_argument("--seed", type=int, default=34, help="random seed of the data (34)")
    parser.add_argument(
        "--profile",
        type=lambda text: text.split(","),
        default=[],
        help=f"steps to run under cProfile, comma-separated ({','.join(STEPS)}): their top "
        "costs are printed (and their figures inflated)",
    )
    parser.add_argument(
        "--hnsw", action="store_true", help="build the chunks' HNSW index after loading"
    )
    parser.add_argument("--keep", type=Path, help="database folder (default: a temporary one)")
    args = parser.parse_args()
    if args.messages < args.session_messages * 4:
        parser.error("--messages must hold at least four sessions")
    texts = locomo_texts()
    runs = []
    with django_on_embedded_servers(args.keep.resolve() if args.keep else None) as folder:
        # Each session's anonymisation and trash logs a line at INFO: not for this table.
        logging.getLogger("sessions").setLevel(logging.WARNING)
        logging.getLogger("memories").setLevel(logging.WARNING)
        for r in range(args.repeat):
            print(f"repetition {r + 1} of {args.repeat}", flush=True)
            if r:
                reset()
            figures, notes = repetition(args, texts, args.seed + 2 * r)
            runs.append(figures)
            print(json.dumps(notes, default=str), flush=True)
    print(
        f"\n{args.messages:,} messages per project, sessions of {args.session_messages}; "
        f"median of {args.repeat}; {psutil.cpu_count()} CPUs, load average "
        f"{psutil.getloadavg()[0]:.1f}"
    )
    print(table(runs))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
