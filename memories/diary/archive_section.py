"""A project's diary entries as a section of a project archive (``sessions/portable/sections.py``).

The nightly distillation writes only yesterday's and today's entries, so a project moved to
another instance would lose its older diary days unless they travel with it. Each entry is
one record; on the way in it is written as distillation writes it (one row per project,
person, character and day, updated when it is there already, so importing twice changes
nothing), its text redacted and embedded again here, and the public ids of its sessions
follow the sessions (the import's ``session_ids``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

from django.db.models import F

from memories.diary.distill import UNIQUE, UPDATED, embed_text
from memories.diary.models import DiaryEntry
from sessions.capture.redaction import redact_for
from sessions.portable.ownership import member_id
from sessions.portable.sections import ProjectSection
from teams.access import Access
from teams.models import Project, Visibility
from transcripts.base import ImportFormatError

NAME = "diary"
TEXT_FIELDS = ("person", "character", "happened", "text", "method")
LIST_FIELDS = ("decisions", "preferences", "open_threads", "facts", "sessions")
REDACTED_TEXT = ("person", "happened", "text")
REDACTED_LISTS = ("decisions", "preferences", "open_threads", "facts")
BATCH = 200


def export_diary(project: Project, access: Access | None = None) -> Iterator[dict[str, Any]]:
    """The project's entries that ``access`` reads (None: all), each with its audience: the
    username of its owner (None: the team's) and its visibility."""
    entries = DiaryEntry.objects.filter(project=project)
    if access is not None:
        entries = access.scope(entries)
    rows = entries.order_by("day", "person", "character", "owner_id", "pk").values(
        "day", *TEXT_FIELDS, *LIST_FIELDS, "visibility", owner_name=F("owner__username")
    )
    for row in rows.iterator(chunk_size=BATCH):
        owner = row.pop("owner_name")
        yield {**row, "day": row["day"].isoformat(), "owner": owner}


def load_diary(
    project: Project, records: Iterable[dict[str, Any]], context: dict[str, Any]
) -> dict[str, Any]:
    session_ids: dict[str, str] = context.get("session_ids") or {}
    written, batch = 0, []
    for number, record in enumerate(records, 1):
        entry = _entry(project, record, number)
        if not _give_audience(entry, project, record):
            continue  # a private entry of nobody here: left out, never made the team's
        batch.append(entry)
        if len(batch) == BATCH:
            written += _write(batch, session_ids)
            batch = []
    return {"entries": written + _write(batch, session_ids)}


def _entry(project: Project, record: dict[str, Any], number: int) -> DiaryEntry:
    where = f"sections/{NAME}.jsonl"
    try:
        day = date.fromisoformat(str(record["day"]))
        texts = {name: str(record.get(name) or "") for name in TEXT_FIELDS}
        lists = {name: [str(item) for item in record.get(name) or []] for name in LIST_FIELDS}
    except (KeyError, TypeError, ValueError) as exc:
        raise ImportFormatError(
            f"{where}: a diary entry needs a 'day' (YYYY-MM-DD): {exc}", line=number
        ) from None
    if not texts["person"] or not texts["character"]:
        raise ImportFormatError(
            f"{where}: a diary entry needs 'person' and 'character'", line=number
        )
    # Written by another instance, perhaps under other switches: redacted as this project
    # redacts what it distils from (the character is a name entries are found by).
    for name in (*REDACTED_TEXT, *REDACTED_LISTS):
        source = texts if name in texts else lists
        source[name] = redact_for(project, source[name])[0]
    return DiaryEntry(team_id=project.team_id, project=project, day=day, **texts, **lists)


def _give_audience(entry: DiaryEntry, project: Project, record: dict[str, Any]) -> bool:
    """The entry's owner (a member of the project's team with the archived username) and
    visibility (an archive from before visibility: the team's). False for a private entry
    whose owner is not a member here."""
    visibility = record.get("visibility") or Visibility.TEAM
    if visibility != Visibility.PRIVATE:
        entry.owner_id, entry.visibility = None, Visibility.TEAM
        return True
    owner_id = member_id(project, record.get("owner"))
    entry.owner_id, entry.visibility = owner_id, Visibility.PRIVATE
    return owner_id is not None


def _write(entries: list[DiaryEntry], session_ids: dict[str, str]) -> int:
    if not entries:
        return 0
    for entry in entries:
        entry.sessions = [session_ids.get(public_id, public_id) for public_id in entry.sessions]
        entry.embedding = embed_text(entry.text)
    DiaryEntry.objects.bulk_create(
        entries,
        update_conflicts=True,
        unique_fields=UNIQUE,
        update_fields=list(UPDATED),
    )
    return len(entries)


SECTION = ProjectSection(NAME, export_diary, load_diary)
