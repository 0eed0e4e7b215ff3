"""Who reads a memory: its owner and visibility (docs/visibility.md). Reading is decided in
one place, ``teams.access.Access.scope``; this module decides what a new memory gets, who may
change it, and how the memories of a session follow it when its visibility changes.

- Extracted from a session (a draft with a session and no choice of its own): the session's
  owner and visibility. A 'summary' session's memories are 'summary': the team reads them
  once accepted; its proposals are its owner's to review.
- Recorded on purpose (the API, MCP, the UI, an import): what the request asks for, else the
  session's when it names one, else its token's default, else its project's; the owner is
  the person the caller reads as (``Access.person_id``; a team token's memory of a session
  is the session owner's). A memory with no owner (a team
  token's) belongs to the team and cannot be private: asked for, that is a 400; by default
  it is 'summary', as a team token's session is (``sessions.visibility.for_capture``).
- Later: the owner gives it any visibility its project allows (shares it with the team, or
  takes it back); an admin of the team, only a lower one; nobody else.
- A session's owner or visibility changes (``follow_sessions``): the memories of that
  session take the session's again, those its owner had shared included. The rule is the
  simplest one to explain: a memory of a session is read as its session is read.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC

from django.db import transaction
from django.utils import timezone

from memories.models import Memory
from sessions import visibility as session_visibility
from sessions.models import Session
from sessions.visibility import Ownership, VisibilityError, may_change
from teams.access import Access
from teams.models import Project, Visibility

NO_OWNER_PRIVATE = (
    "a memory recorded by a token that acts for no person belongs to the team and cannot be "
    "private; use a token made for a person (create_api_token --for USER, or the tokens page) "
    "or ask for 'summary'"
)


def of_session(session: Session) -> Ownership:
    """A memory read from ``session``: its owner, its visibility."""
    return Ownership(session.owner_id, session.visibility)


def for_record(
    access: Access | None,
    project: Project,
    asked: str | None = None,
    session: Session | None = None,
) -> Ownership:
    """What a memory recorded on purpose by ``access`` (None: the server itself) gets."""
    owner_id = access.person_id if access is not None else None
    if asked:
        visibility = allowed(project, session_visibility.checked(asked))
        if visibility == Visibility.PRIVATE and owner_id is None:
            raise VisibilityError(NO_OWNER_PRIVATE)
        return Ownership(owner_id, visibility)
    if session is not None:
        # About a session: as visible as it (only its readers may name it); the recorder's,
        # else (a team token's) the session owner's.
        return Ownership(owner_id or session.owner_id, session.visibility)
    return session_visibility.for_capture(access, project)


def allowed(project: Project, visibility: str) -> str:
    """``visibility``, or a 400 when ``project`` does not allow it."""
    if visibility not in project.allowed_visibilities:
        raise VisibilityError(
            f"project {project} does not allow {visibility!r} memories; it allows "
            f"{', '.join(project.allowed_visibilities)}"
        )
    return visibility


def refusal(access: Access, memory: Memory, visibility: str) -> str | None:
    """Why ``access`` may not give ``memory`` this visibility (None: it may): the sessions'
    rule (``sessions.visibility.may_change``)."""
    return may_change(access, memory, visibility, noun="memory")


def change(access: Access, memory: Memory, visibility: str) -> bool:
    """Give ``memory`` (one ``access`` reads) ``visibility``, or a ``VisibilityError`` (400:
    unknown, not allowed, private without an owner; 403: not the caller's to give) and
    nothing changed. Returns whether it changed; the days of its diaries are marked due."""
    from memories.diary import due

    visibility = allowed(memory.project, session_visibility.checked(visibility))
    if visibility == Visibility.PRIVATE and memory.owner_id is None:
        raise VisibilityError(f"{memory.public_id} belongs to the team (no owner): not private")
    why = refusal(access, memory, visibility)
    if why:
        raise VisibilityError(why, status=403)
    if memory.visibility == visibility:
        return False
    with transaction.atomic():
        Memory.objects.filter(pk=memory.pk).update(visibility=visibility, updated_at=timezone.now())
        _forget_entries_of(memory)
        due.mark_memories([memory])
    memory.visibility = visibility
    return True


def _forget_entries_of(memory: Memory) -> None:
    """The diary entries that may hold ``memory``, written for its old audience, go now
    (its day is distilled again): those of its person on its day, and those listing its
    session."""
    from memories.diary import due

    _forget_entries_holding(Memory.objects.filter(pk=memory.pk))
    if memory.session_id:
        due.forget_entries(session_public_ids=[memory.session.public_id])


def follow_sessions(session_ids: list[int]) -> Counter:
    """The memories of these sessions take their session's owner and visibility again, and
    the diary entries that may hold them (their person's, on their day) go now, their days
    marked due (``memories.derived`` does the same for the entries listing the sessions)."""
    _forget_entries_holding(Memory.objects.filter(session_id__in=session_ids))
    changed = 0
    for owner_id, visibility, ids in _sessions_by_ownership(session_ids):
        changed += (
            Memory.objects.filter(session_id__in=ids)
            .exclude(owner_id=owner_id, visibility=visibility)
            .update(owner_id=owner_id, visibility=visibility, updated_at=timezone.now())
        )
    return Counter(memories=changed)


def _forget_entries_holding(memories) -> None:
    """The diary entries of these memories' people on the days that hold them (the day each
    was said, and its session's days: an entry lists the memories of the day's sessions)
    go now; those days are marked due."""
    from memories.diary import due
    from memories.diary.models import DiaryEntry

    held = set()
    rows = memories.values_list(
        "team_id", "project_id", "person", "occurred_at", "session__started_at", "session__ended_at"
    )
    for team_id, project_id, person, occurred, started, ended in rows:
        days = {occurred.astimezone(UTC).date()}
        if started is not None:
            days |= set(due.days_between(started, ended))
        held |= {(team_id, project_id, person, day) for day in days}
    for _team, project_id, person, day in held:
        DiaryEntry.objects.filter(project_id=project_id, person=person, day=day).delete()
    due.mark((team_id, day) for team_id, _project, _person, day in held)


def _sessions_by_ownership(session_ids: list[int]):
    groups: dict[tuple, list[int]] = {}
    rows = Session.objects.filter(pk__in=session_ids).values_list("pk", "owner_id", "visibility")
    for pk, owner_id, visibility in rows:
        groups.setdefault((owner_id, visibility), []).append(pk)
    return [(owner, visibility, ids) for (owner, visibility), ids in groups.items()]
