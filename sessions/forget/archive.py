"""Sessions nobody uses fade: active → idle → decaying → archived, and come back when used.

The lifecycle clock is ``coalesce(last_active_at, created_at)``: the last read (written by
the read-count flush, ``read_counts.py``) or new message (the capture service). The daily
``archive_check`` compares it with the project's thresholds (``idle_after_hours``,
``decaying_after_days``, ``archive_after_days``) and moves each live session to the state
its age says, several steps at once if it is old enough. Every move is a conditional update
(the state it moves from and a clock still that old), so overlapping runs never move a
session twice, and a read flushed meanwhile wins. Trashed sessions are left alone.

**What archiving frees**: the session's message vectors (its ``MessageChunk`` rows, the
bulk of a session's indexes: each one a 384-float vector in the HNSW index plus its sign
bits in a covering index). Those are what keep the hot indexes big and slow to scan; a
session unread for a month rarely needs search by meaning of each message. Everything else
stays: metadata, summary, entities and the session vector (``Session.embedding``, so "similar
sessions" still finds it), and its messages with their keyword index (search finds them by
keyword with ``include_archived``). Restoring puts its messages back to pending embedding and
pokes the pipeline, which embeds them again like new ones.

People set a lifecycle through ``set_lifecycle`` only (the API's PATCH, the admin's
actions): 'archived' archives now whatever the session's age (``archive_now``), 'active'
restores an archived session (``unarchive``); 'idle' and 'decaying' are this module's to set,
so a label never says archived while the vectors are there, or active while they are gone.

Archiving and the embedding worker: archiving locks the session ``FOR UPDATE`` (it waits for
a worker writing its chunks, which holds the session ``KEY SHARE``, and keeps the next one
out), then marks its messages done, deleting its chunks. A worker that claimed some of its
messages before finds them no longer pending under its claim when it writes, and writes
nothing for them (``pipeline._write_batch``).
"""

from __future__ import annotations

import logging

from django.db import connection, transaction
from django.utils import timezone

from sessions.decay import id_ranges
from sessions.models import EnrichmentStatus, Lifecycle, Message, MessageChunk, Session
from sessions.poke import poke_enrichment

logger = logging.getLogger(__name__)

CHECK_BATCH_IDS = 5000  # session ids per statement of the check: short transactions
ARCHIVE_BATCH = 100  # sessions archived per transaction (their chunks are deleted with them)
CLOCK = "coalesce(s.last_active_at, s.created_at)"


def _older(threshold: str) -> str:
    """The clock is at least ``threshold`` (a SQL interval over the project ``p``) old."""
    return f"{CLOCK} <= %(now)s::timestamptz - {threshold}"


IDLE_AGE = "p.idle_after_hours * interval '1 hour'"
DECAYING_AGE = "p.decaying_after_days * interval '1 day'"
ARCHIVE_AGE = "p.archive_after_days * interval '1 day'"

# active → idle or decaying, idle → decaying; what is old enough to archive is left to
# archive_sessions (it has chunks to delete). PostgreSQL re-checks the whole WHERE on a row
# that changed while it waited for it, so a read flushed meanwhile stops the move.
FADE_SQL = f"""
UPDATE agent_sessions_session s
SET lifecycle = CASE WHEN {_older(DECAYING_AGE)} THEN 'decaying' ELSE 'idle' END
FROM teams_project p
WHERE p.id = s.project_id AND s.id >= %(low)s AND s.id < %(high)s AND s.deleted_at IS NULL
  AND NOT {_older(ARCHIVE_AGE)}
  AND ((s.lifecycle = 'active' AND {_older(IDLE_AGE)})
       OR (s.lifecycle = 'idle' AND {_older(DECAYING_AGE)}))
"""
ARCHIVABLE = f"""
s.deleted_at IS NULL AND s.lifecycle <> 'archived' AND {_older(ARCHIVE_AGE)}
"""
ARCHIVABLE_IN_RANGE_SQL = f"""
SELECT s.id FROM agent_sessions_session s JOIN teams_project p ON p.id = s.project_id
WHERE s.id >= %(low)s AND s.id < %(high)s AND {ARCHIVABLE}
ORDER BY s.id
"""
LOCK_ARCHIVABLE_SQL = f"""
SELECT s.id FROM agent_sessions_session s JOIN teams_project p ON p.id = s.project_id
WHERE s.id = ANY(%(ids)s) AND {ARCHIVABLE}
ORDER BY s.id FOR UPDATE OF s
"""
LOCK_LIVE_SQL = """
SELECT s.id FROM agent_sessions_session s
WHERE s.id = ANY(%(ids)s) AND s.deleted_at IS NULL AND s.lifecycle <> 'archived'
ORDER BY s.id FOR UPDATE OF s
"""
# A session with no summary vector yet keeps the mean of its chunk vectors as its vector
# (what "similar sessions" would have used), before the chunks go.
KEEP_SESSION_VECTOR_SQL = """
UPDATE agent_sessions_session s
SET embedding = (SELECT avg(c.embedding) FROM agent_sessions_messagechunk c
                 WHERE c.session_id = s.id)
WHERE s.id = ANY(%(ids)s) AND s.embedding IS NULL
"""


def archive_check(now=None) -> dict[str, int]:
    """Move every live session to the lifecycle state its clock says; returns how many
    sessions faded (to idle or decaying) and how many were archived."""
    now = now or timezone.now()
    faded = archived = 0
    for low, high in id_ranges(CHECK_BATCH_IDS):
        params = {"now": now, "low": low, "high": high}
        with connection.cursor() as cursor:
            cursor.execute(FADE_SQL, params)
            faded += cursor.rowcount
            cursor.execute(ARCHIVABLE_IN_RANGE_SQL, params)
            due = [row[0] for row in cursor.fetchall()]
        for start in range(0, len(due), ARCHIVE_BATCH):
            archived += archive_sessions(due[start : start + ARCHIVE_BATCH], now)
    if faded or archived:
        logger.info("archive check: %d session(s) faded, %d archived", faded, archived)
    return {"faded": faded, "archived": archived}


def archive_sessions(ids: list[int], now=None) -> int:
    """Archive those of these sessions that are still due (live, not archived, old enough
    by their project's threshold); returns how many."""
    now = now or timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(LOCK_ARCHIVABLE_SQL, {"ids": ids, "now": now})
        return _archive_locked(cursor, [row[0] for row in cursor.fetchall()], now)


def archive_now(session: Session, now=None) -> bool:
    """Archive a live session whatever its age (someone asked for it); False, changing
    nothing, when it is already archived or in the trash."""
    now = now or timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(LOCK_LIVE_SQL, {"ids": [session.pk]})
        archived = _archive_locked(cursor, [row[0] for row in cursor.fetchall()], now)
    if archived:
        session.refresh_from_db(fields=["lifecycle", "archived_at", "embedding"])
        logger.info("session %s archived on request", session.public_id)
    return bool(archived)


def _archive_locked(cursor, locked: list[int], now) -> int:
    """Archive these sessions, whose rows the caller's transaction holds."""
    if not locked:
        return 0
    cursor.execute(KEEP_SESSION_VECTOR_SQL, {"ids": locked})
    # Out of the embedding queue: nothing re-embeds an archived session's messages until it
    # is restored (restoring puts every message without chunks back).
    Message.objects.filter(session_id__in=locked).exclude(
        enrichment_status=EnrichmentStatus.DONE, claimed_by__isnull=True
    ).update(enrichment_status=EnrichmentStatus.DONE, claimed_by=None)
    MessageChunk.objects.filter(session_id__in=locked).delete()
    Session.objects.filter(pk__in=locked).update(lifecycle=Lifecycle.ARCHIVED, archived_at=now)
    return len(locked)


def unarchive(session: Session, now=None) -> bool:
    """Bring an archived live session back in full: active again, and its messages without
    vectors back to pending embedding (the pipeline is poked after commit). Returns False,
    changing nothing, when it is not archived (or is in the trash)."""
    now = now or timezone.now()
    with transaction.atomic():
        changed = Session.objects.filter(
            pk=session.pk, lifecycle=Lifecycle.ARCHIVED, deleted_at__isnull=True
        ).update(lifecycle=Lifecycle.ACTIVE, archived_at=None, last_active_at=now)
        if not changed:
            return False
        Message.objects.requeue_unembedded(session.pk)
        transaction.on_commit(poke_enrichment)
    session.refresh_from_db(fields=["lifecycle", "archived_at", "last_active_at"])
    logger.info("session %s restored from the archive", session.public_id)
    return True


# What a person (the API, the admin) may set; idle and decaying are the decay's to set.
SETTABLE = (Lifecycle.ACTIVE, Lifecycle.ARCHIVED)
NOT_SETTABLE = (
    "only 'active' (bring an archived session back) or 'archived' (archive it now) can be "
    "set; 'idle' and 'decaying' follow from how long a session is unused"
)


class LifecycleNotSettable(ValueError):
    """A lifecycle state that is not set by hand (``NOT_SETTABLE`` says which are)."""


def set_lifecycle(session: Session, value: str, by=None) -> bool:
    """Move ``session`` to ``value`` the way the lifecycle does: 'archived' drops its message
    vectors (``archive_now``), 'active' on an archived session embeds them again
    (``unarchive``) and on an idle or decaying one restarts its clock. A session in the
    trash is refused (``LifecycleConflict``). Returns whether anything changed."""
    from sessions.forget.lifecycle import LifecycleConflict, in_trash_state

    if value not in SETTABLE:
        raise LifecycleNotSettable(NOT_SETTABLE)
    if session.deleted_at is not None:
        raise LifecycleConflict(
            f"session {session.public_id} is in the trash; restore it before changing its "
            "lifecycle",
            in_trash_state(session),
        )
    who = f" by {by}" if getattr(by, "pk", None) else ""
    if value == Lifecycle.ARCHIVED:
        changed = archive_now(session)
    else:
        # Each a conditional update on the state it moves from, so the daily check archiving
        # the session meanwhile cannot leave it active without its vectors.
        changed = unarchive(session) or bool(
            Session.objects.filter(
                pk=session.pk,
                deleted_at__isnull=True,
                lifecycle__in=[Lifecycle.IDLE, Lifecycle.DECAYING],
            ).update(lifecycle=Lifecycle.ACTIVE, last_active_at=timezone.now())
        )
        session.refresh_from_db(fields=["lifecycle", "archived_at", "last_active_at"])
    if changed:
        logger.info("session %s set %s%s", session.public_id, value, who)
    return changed
