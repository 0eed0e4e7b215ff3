"""Which memories a caller sees and how a list of them is narrowed (docs/memories.md).

``visible(access)`` is what a caller sees: the memories ``Access.scope`` (the one scoping
path, team-shared memories included) lets through, deleted ones and those of trashed
sessions left out. ``MemoryFilters`` is what a caller asked for; ``apply``
narrows a queryset by it. The API, the UI, search and context all read memories this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from memories.models import Memory, MemoryStatus
from teams.access import Access

# Below this priority a memory counts as decayed: left out unless ``include_decayed``.
DECAYED_BELOW = 0.3


@dataclass(frozen=True)
class MemoryFilters:
    types: tuple[str, ...] = ()
    tag: str = ""
    topic: str = ""
    agent: str = ""
    person: str = ""  # the memories of this person
    # What a conversation with this person may read: theirs and those of no person.
    for_person: str = ""
    # docs/people.md: a character reads its own memories, the shared ones and those of no agent.
    character: str = ""
    session_id: int | None = None
    after: datetime | None = None
    before: datetime | None = None
    confidence: tuple[str, ...] = ()
    status: str = MemoryStatus.ACTIVE  # "" for every status but deleted
    resolution: str = ""  # open | resolved (findings)
    min_priority: float | None = None
    include_decayed: bool = False
    pinned: bool | None = None
    # Narrows what the caller reads to one visibility (its own private memories, say); who
    # reads what is ``visible``'s, never a filter's.
    visibility: str = ""


def visible(access: Access, *, include_deleted: bool = False):
    """The memories ``access`` may see, not deleted, not of a trashed session: those of its
    projects, and the team-scoped memories of its teams (shared with every agent of the
    team, whatever its project). ``include_deleted`` keeps deleted ones (to show, delete or
    restore one by its id)."""
    memories = Memory.objects.live() if not include_deleted else Memory.objects.of_live_sessions()
    return access.scope(memories)


def apply(queryset, filters: MemoryFilters):
    f = filters
    if f.types:
        queryset = queryset.filter(type__in=f.types)
    if f.tag:
        queryset = queryset.filter(tags__contains=[f.tag.lower()])
    if f.topic:
        queryset = queryset.filter(topic=f.topic)
    if f.agent:
        queryset = queryset.filter(agent=f.agent)
    if f.person:
        queryset = queryset.filter(person=f.person)
    if f.for_person:
        queryset = queryset.filter(person__in=(f.for_person, ""))
    if f.character:
        queryset = queryset.filter(Q(agent__in=(f.character, "")) | Q(shared=True))
    if f.session_id is not None:
        queryset = queryset.filter(session_id=f.session_id)
    if f.after:
        queryset = queryset.filter(occurred_at__gte=f.after)
    if f.before:
        queryset = queryset.filter(occurred_at__lt=f.before)
    if f.confidence:
        queryset = queryset.filter(confidence__in=f.confidence)
    if f.status:
        queryset = queryset.filter(status=f.status)
    if f.resolution:
        queryset = queryset.filter(resolution=f.resolution)
    if f.min_priority is not None:
        queryset = queryset.filter(priority__gte=f.min_priority)
    elif not f.include_decayed:
        queryset = queryset.filter(priority__gte=DECAYED_BELOW)
    if f.pinned is not None:
        queryset = queryset.filter(pinned=f.pinned)
    if f.visibility:
        queryset = queryset.filter(visibility=f.visibility)
    return queryset
