"""Staleness from the code: a decision or finding whose files a later session edits is
flagged **may be stale**, with that session linked.

Run by the extraction worker over the messages it reads (``run.py``): their edits
(``memories/capture/files.py``: Edit, Write, MultiEdit, apply_patch…, aider's
SEARCH/REPLACE) are turned into file keys, and the project's active decisions and findings
said before the edit, of other sessions, that are about one of those files and not flagged
yet, are flagged in one UPDATE (the GIN index of ``files`` finds them). The flag shows in the
API (``stale``), the UI and context (the line is marked, not hidden); it clears when someone
confirms the memory (``review.confirm``) or it is superseded.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q
from django.utils import timezone

from memories.capture.files import TRACKED_TYPES, edit_keys, edited_files
from memories.capture.status import note_many
from memories.models import Memory, MemoryStatus

STALE = "stale"  # the history's word for "may be stale"


def edits_in(messages: Iterable) -> tuple[list[str], object]:
    """The file keys the messages edit, and the time of the last edit (or None)."""
    paths: dict[str, None] = {}
    last = None
    for message in messages:
        found = edited_files(message.role, message.content, message.tool_name, message.metadata)
        if found:
            paths.update(dict.fromkeys(found))
            last = max(filter(None, (last, message.timestamp)), default=None)
    return edit_keys(paths), last


def flag_stale(session, messages) -> int:
    """Flag the memories ``messages`` (of ``session``) may have made stale; returns how
    many were flagged."""
    keys, last = edits_in(messages)
    if not keys:
        return 0
    said_before = Q(occurred_at__lte=last) if last is not None else Q()
    candidates = (
        Memory.objects.filter(
            project_id=session.project_id,
            type__in=TRACKED_TYPES,
            status=MemoryStatus.ACTIVE,
            stale_since__isnull=True,
            files__overlap=keys,
        )
        .filter(said_before)
        .exclude(session_id=session.pk)
    )
    flagged = list(candidates.only("pk", "team_id", "status", "public_id"))
    if not flagged:
        return 0
    Memory.objects.filter(pk__in=[m.pk for m in flagged], stale_since__isnull=True).update(
        stale_since=timezone.now(), stale_session=session
    )
    note_many(
        flagged,
        None,
        STALE,
        by="staleness check",
        reason=f"session {session.public_id} edited its files",
    )
    return len(flagged)
