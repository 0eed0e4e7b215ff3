"""Daily distillation (docs/people.md, "The diary"): one diary entry per person, character and
day, from that day's sessions and memories.

An entry says what happened (each session of the day with its summary, or, with the
optional LLM configured — ``SUMMARY_LLM_*``, as for session summaries — the model's summary
of the day's messages), the decisions, the preferences, the open threads (open findings,
sessions that did not complete) and the facts and learnings. Memories marked shared go to
the person's ``_shared`` entry of the day instead, which every character of the person
reads (docs/people.md, "Memories: own or shared").

A session belongs to the days it was active on (started, or ended, within the day, UTC).

Entries are written per audience (docs/visibility.md). The team's entry (no owner,
'team') holds what the team reads: its 'team' sessions, the summaries of its 'summary'
sessions (never their messages: the optional model reads only the messages the audience
reads) and the active memories that are not private ('summary' memories once accepted).
Each person with private sessions or private memories that day gets a private entry of
their own (owner: that person, 'private') from those only; nobody else reads it.

Writing is an upsert on (project, person, character, day, owner): re-running a day updates
its entries and removes those whose sessions are gone (trashed, purged, or now read by
another audience), never duplicates, and two runs at once end with one row each.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from memories.diary import render
from memories.diary.models import SHARED, DiaryEntry
from memories.models import Memory, MemoryType, Resolution
from sessions.enrich.summary import SummaryError, llm_summary, summarize
from sessions.models import Message, Session, SessionStatus
from teams.access import Access
from teams.models import Visibility

logger = logging.getLogger(__name__)

SESSION_SUMMARY_CHARS = 300
MAX_LLM_MESSAGES = 2000  # of a day, handed to the optional model (it keeps what fits)
UPDATED = ("happened", "decisions", "preferences", "open_threads", "facts", "sessions", "text")
UPDATED += ("method", "embedding", "updated_at", "visibility")
# The entry's key: one per audience (memories/diary/models.py).
UNIQUE = ["project", "person", "character", "day", "owner"]


@dataclass
class Draft:
    team_id: int
    project_id: int
    person: str
    character: str
    owner_id: int | None  # None: the team's entry; else its owner's private one
    sessions: list[Session] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time.min, tzinfo=UTC)
    return start, start + timedelta(days=1)


def distill_day(day: date, *, team_id: int | None = None) -> int:
    """Write the diary entries of ``day`` (of one team, or all); returns how many."""
    start, end = day_bounds(day)
    sessions = (
        Session.objects.alive()
        .exclude(user_name="")
        .filter(started_at__lt=end)
        .filter(Q(started_at__gte=start) | Q(ended_at__gte=start))
        .order_by("started_at", "id")
    )
    if team_id is not None:
        sessions = sessions.filter(team_id=team_id)
    drafts: dict[tuple, Draft] = {}
    for session in sessions.defer("embedding"):
        audience = _audience(session)
        if audience is NOBODY:
            continue
        key = (session.project_id, session.user_name, session.agent_name, audience)
        draft = drafts.setdefault(key, Draft(session.team_id, *key))
        draft.sessions.append(session)
    _add_memories(drafts, start, end, team_id)
    entries = [_entry(day, draft) for draft in drafts.values()]
    with transaction.atomic():
        if entries:
            DiaryEntry.objects.bulk_create(
                entries,
                update_conflicts=True,
                unique_fields=UNIQUE,
                update_fields=list(UPDATED),
            )
        _remove_stale(day, team_id, set(drafts))
    return len(entries)


NOBODY = object()  # the audience of a private row with no owner: no entry reads it


def _audience(row):
    """Whose entry a session or memory goes to: its owner's, when it is private; else the
    team's (None). Every row goes to exactly one entry: the team's reads what a reader
    with no rows of their own reads (``teams.access.Access.readable``)."""
    if row.visibility != Visibility.PRIVATE:
        return None
    return row.owner_id if row.owner_id is not None else NOBODY


def _add_memories(drafts: dict[tuple, Draft], start, end, team_id: int | None) -> None:
    """The active memories of the day's sessions, and those said that day of no session;
    shared ones go to the person's ``_shared`` draft instead of their character's."""
    session_ids = [s.pk for d in drafts.values() for s in d.sessions]
    memories = (
        Memory.objects.active()
        .exclude(person="")
        .filter(
            Q(session_id__in=session_ids)
            | Q(session__isnull=True, occurred_at__gte=start, occurred_at__lt=end)
        )
    )
    if team_id is not None:
        memories = memories.filter(team_id=team_id)
    rows = memories.select_related("session").defer("embedding", "session__embedding")
    for memory in rows.order_by("occurred_at", "id"):
        character = memory.agent or (memory.session.agent_name if memory.session_id else "")
        if memory.shared:
            character = SHARED
        audience = _audience(memory)
        if not character or audience is NOBODY:
            continue  # no character's: not a diary's
        key = (memory.project_id, memory.person, character, audience)
        draft = drafts.setdefault(key, Draft(memory.team_id, *key))
        draft.memories.append(memory)


def _entry(day: date, draft: Draft) -> DiaryEntry:
    parts = _parts(draft)
    method = "offline"
    happened = _llm_happened(draft) if draft.sessions else None
    if happened:
        parts["happened"], method = happened, "llm"
    text = render.markdown(draft.person, draft.character, day, parts)
    return DiaryEntry(
        team_id=draft.team_id,
        project_id=draft.project_id,
        person=draft.person,
        character=draft.character,
        owner_id=draft.owner_id,
        visibility=Visibility.TEAM if draft.owner_id is None else Visibility.PRIVATE,
        day=day,
        sessions=[s.public_id for s in draft.sessions],
        text=text,
        method=method,
        embedding=embed_text(text),
        **parts,
    )


def _parts(draft: Draft) -> dict:
    by_type = defaultdict(list)
    for memory in draft.memories:
        by_type[memory.type].append(memory.content)
    open_threads = [
        m.content
        for m in draft.memories
        if m.type == MemoryType.FINDING and m.resolution == Resolution.OPEN
    ]
    open_threads += [
        f"{s.public_id} was left {s.status}"
        for s in draft.sessions
        if s.status != SessionStatus.COMPLETED
    ]
    return {
        "happened": "\n".join(f"- {_session_line(s)}" for s in draft.sessions),
        "decisions": by_type[MemoryType.DECISION],
        "preferences": by_type[MemoryType.PREFERENCE],
        "open_threads": open_threads,
        "facts": [*by_type[MemoryType.FACT], *by_type[MemoryType.LEARNING]],
    }


def _session_line(session: Session) -> str:
    summary = session.summary
    # Not enriched yet: summarised here, the same way (for a 'summary' session, the summary
    # the team would read once it is enriched, not its messages).
    if not summary:
        summary = summarize(Message.objects.of_session(session), max_chars=SESSION_SUMMARY_CHARS)
    label = f"{session.public_id} ({session.title})" if session.title else session.public_id
    return " ".join(f"{label}: {summary or 'no messages'}".split())


def _llm_happened(draft: Draft) -> str | None:
    """The optional model's summary of the day's messages; None when none is configured or
    it fails (the offline lines stay)."""
    if not settings.SUMMARY_LLM_URL:
        return None
    # Only the messages the entry's audience reads: a 'summary' session's stay unread.
    reader = Access(team_ids=(draft.team_id,), person_id=draft.owner_id)
    readable = reader.scope(
        Message.objects.filter(session__in=draft.sessions, removed_at__isnull=True),
        "session__project_id",
    )
    messages = list(
        readable.order_by("session__started_at", "session_id", "seq")[:MAX_LLM_MESSAGES]
    )
    if not messages:
        return None
    try:
        return llm_summary(
            messages,
            url=settings.SUMMARY_LLM_URL,
            model=settings.SUMMARY_LLM_MODEL,
            api_key=settings.SUMMARY_LLM_API_KEY,
        )
    except SummaryError as exc:
        logger.warning("diary of %s: %s; using the offline summary", draft.person, exc)
        return None


def embed_text(text: str):
    from sessions.embedding.query import embed_query

    return embed_query(text)


def _remove_stale(day: date, team_id: int | None, written: set[tuple]) -> None:
    """Entries of ``day`` whose sessions and memories are gone."""
    stale = DiaryEntry.objects.filter(day=day)
    if team_id is not None:
        stale = stale.filter(team_id=team_id)
    for pk, *key in stale.values_list("pk", "project_id", "person", "character", "owner_id"):
        if tuple(key) not in written:
            DiaryEntry.objects.filter(pk=pk).delete()
