"""Which diary entries a caller sees (``visible``: the one scoping path, through
``teams.access.Access``) and how they are narrowed (``narrowed``)."""

from __future__ import annotations

from datetime import date

from memories.diary.models import SHARED, DiaryEntry
from teams.access import Access


def visible(access: Access):
    return access.scope(DiaryEntry.objects.all())


def narrowed(
    entries,
    *,
    person: str = "",
    character: str = "",
    after: date | None = None,
    before: date | None = None,
):
    """``character``: what that character may read, its own entries and the ``_shared``
    ones (docs/people.md); ``after`` inclusive, ``before`` exclusive."""
    if person:
        entries = entries.filter(person=person)
    if character:
        entries = entries.filter(character__in=(character.strip().lower(), SHARED))
    if after:
        entries = entries.filter(day__gte=after)
    if before:
        entries = entries.filter(day__lt=before)
    return entries
