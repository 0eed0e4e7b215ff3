"""Counting reads of sessions, cheaply: a read never writes to the database.

A read (the API's session, messages, export and resume, context, the UI's session page,
messages and export) calls ``record_access``, which adds to two Redis keys in one round trip:
a hash of session id → reads, and a sorted set of session id → time of the last read. Every
minute the beat task ``flush_access`` takes both keys atomically (read and delete in one
MULTI, so reads arriving meanwhile land in fresh keys and no read is counted twice) and
writes them with one ``UPDATE … FROM (VALUES …)`` per batch, in session id order: reads
added to ``access_count``, ``last_accessed_at`` and ``last_active_at`` moved forward, the
decay priority recomputed, and idle or decaying sessions made active again (not in the
trash: the lifecycle leaves trashed sessions alone). (An archived
session is restored when it is opened, not by a count: ``archive.unarchive``.)

A write per read would contend for the session row with captures and the embedding worker;
the flush touches each session read in the last minute once.

Without Redis, a read still answers at once (``core.quick_broker``: short timeouts, a
pause after a failure). Its count is kept in the process's memory and handed to Redis with
the next read that reaches it, up to ``MAX_HELD`` sessions; past that, or if the process
ends first, those reads are dropped with a warning. Reads are a soft signal (decay, the
lifecycle clock), and a database write per read during an outage is what this avoids.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime

from django.db import connection, transaction
from django.utils import timezone

from core.quick_broker import BrokerUnavailable, QuickBroker
from sessions.decay import priority_sql
from sessions.forget.archive import unarchive
from sessions.models import Lifecycle, Session

logger = logging.getLogger(__name__)

FLUSH_BATCH = 1000
MAX_HELD = 10_000  # sessions whose reads a process keeps while Redis is down
READS = QuickBroker("access counting")

_held_counts: Counter[int] = Counter()
_held_last: dict[int, float] = {}
_held_lock = threading.Lock()


def opened(session: Session, now: datetime | None = None) -> bool:
    """The session was opened (its page, its messages, resumed): count the read, and bring
    it back in full if it was archived. Returns True when it was restored."""
    restored = session.lifecycle == Lifecycle.ARCHIVED and unarchive(session, now)
    record_access([session.pk], now)
    return restored


def buffer_keys() -> tuple[str, str]:
    """(reads hash, last-read sorted set), per database: the tests' database and a running
    server's share one Redis but never each other's counts."""
    name = connection.settings_dict["NAME"]
    return f"memoryapp:access:{name}:reads", f"memoryapp:access:{name}:last"


def record_access(session_ids: Iterable[int], now: datetime | None = None) -> None:
    """Count one read of each of these sessions (at ``now``, by default the present). Never
    raises, never waits on Redis."""
    ids = set(session_ids)
    if not ids:
        return
    at = (now or timezone.now()).timestamp()
    with _held_lock:
        counts = Counter(_held_counts)
        last = dict(_held_last)
        _held_counts.clear()
        _held_last.clear()
    counts.update(ids)
    for session_id in ids:
        last[session_id] = max(last.get(session_id, at), at)
    try:
        READS.run(lambda conn: _add(conn.default_channel.client, counts, last))
    except BrokerUnavailable:
        _hold(counts, last)


def _add(client, counts: Counter[int], last: dict[int, float]) -> None:
    reads_key, last_key = buffer_keys()
    pipe = client.pipeline(transaction=False)
    for session_id, n in counts.items():
        pipe.hincrby(reads_key, session_id, n)
    pipe.zadd(last_key, last, gt=True)  # keeps the latest time of each session
    pipe.execute()


def _hold(counts: Counter[int], last: dict[int, float]) -> None:
    with _held_lock:
        for session_id, n in counts.items():
            if session_id in _held_counts or len(_held_counts) < MAX_HELD:
                _held_counts[session_id] += n
                _held_last[session_id] = max(_held_last.get(session_id, 0.0), last[session_id])
            else:
                logger.warning("Redis down and %d sessions' reads held: read dropped", MAX_HELD)


def flush_access(client, now=None) -> int:
    """Write the buffered reads to the sessions (``client``: a Redis client); returns how
    many sessions were updated. If the database fails, the reads go back to the buffer."""
    reads_key, last_key = buffer_keys()
    pipe = client.pipeline(transaction=True)
    pipe.hgetall(reads_key)
    pipe.zrange(last_key, 0, -1, withscores=True)
    pipe.delete(reads_key, last_key)
    raw_counts, raw_last, _ = pipe.execute()
    counts = {int(k): int(v) for k, v in raw_counts.items()}
    last = {int(k): v for k, v in raw_last}
    if not counts:
        return 0
    now = now or timezone.now()
    rows = [
        (session_id, counts[session_id], _at(last.get(session_id), now))
        for session_id in sorted(counts)
    ]
    for start in range(0, len(rows), FLUSH_BATCH):
        try:
            _write(rows[start : start + FLUSH_BATCH], now)
        except Exception:
            # This batch and the next ones were not written: back to the buffer, for the
            # next flush (the batches before are committed).
            left = rows[start:]
            _add(
                client, Counter({r[0]: r[1] for r in left}), {r[0]: r[2].timestamp() for r in left}
            )
            raise
    return len(rows)


def _at(epoch: float | None, now: datetime) -> datetime:
    if epoch is None:
        return now
    return min(now, datetime.fromtimestamp(epoch, tz=UTC))


READ_AT = "greatest(coalesce(s.last_accessed_at, v.at), v.at)"
FLUSH_SQL = f"""
UPDATE agent_sessions_session s SET
    access_count = s.access_count + v.n,
    last_accessed_at = {READ_AT},
    last_active_at = greatest(coalesce(s.last_active_at, v.at), v.at),
    lifecycle = CASE WHEN s.lifecycle IN ('idle', 'decaying') AND s.deleted_at IS NULL
        THEN 'active' ELSE s.lifecycle END,
    decay_priority = {
    priority_sql(
        accessed=READ_AT,
        created="s.created_at",
        count="s.access_count + v.n",
        now="%s::timestamptz",
    )
}
FROM (VALUES {{values}}) AS v(id, n, at)
WHERE s.id = v.id
"""


def _write(rows: list[tuple[int, int, datetime]], now) -> None:
    values = ", ".join(["(%s::bigint, %s::integer, %s::timestamptz)"] * len(rows))
    params = [value for row in rows for value in row]
    with transaction.atomic(), connection.cursor() as cursor:
        # Rows locked in id order first, as every writer of several sessions does (the
        # UPDATE's own order follows its plan).
        cursor.execute(
            "SELECT id FROM agent_sessions_session WHERE id = ANY(%s) ORDER BY id"
            " FOR NO KEY UPDATE",
            [[row[0] for row in rows]],
        )
        # priority_sql names ``now`` twice: its two placeholders come first in the statement.
        cursor.execute(FLUSH_SQL.format(values=values), [now, now, *params])
