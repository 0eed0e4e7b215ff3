"""Similar sessions (docs/api.md): the sessions nearest to one session.

A session's vector is its summary's embedding (set by the enrichment pipeline); until it has
one, the mean of its chunk vectors stands in, so a session is comparable from the moment its
messages are embedded. Candidates are the caller's other live sessions with a vector.

A suggestion shows a session's title, summary and topics, never its messages, so candidates
are the sessions the caller reads at ``Reading.SUMMARY`` (docs/visibility.md), compared by
their summary's vector only; the stand-in mean of a session's message vectors is used only
for a session whose messages the caller reads.
"""

from __future__ import annotations

from django.db import connection

from search.filters import session_where
from sessions.filters import Filters
from sessions.models import Session
from teams.access import Access, Reading


def session_vector(session: Session, *, from_messages: bool = True) -> str | None:
    """The session's summary vector, else (``from_messages``) the mean of its chunks'."""
    mean = (
        "(SELECT avg(c.embedding) FROM agent_sessions_messagechunk c WHERE c.session_id = s.id)"
        if from_messages
        else "NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT coalesce(s.embedding, {mean}) FROM agent_sessions_session s WHERE s.id = %s",
            [session.pk],
        )
        row = cursor.fetchone()
    return None if row is None or row[0] is None else str(row[0])


def similar_sessions(session: Session, access: Access, limit: int) -> list[tuple[Session, float]]:
    """(session, cosine similarity) pairs, nearest first, among the sessions ``access``
    reads the summary of; [] when it has no vector yet."""
    vector = session_vector(session, from_messages=access.reading(session) == Reading.CONTENT)
    if vector is None:
        return []
    where = session_where(
        access, Filters(exclude_session_ids=(session.pk,)), reading=Reading.SUMMARY
    )
    where.add("s.embedding IS NOT NULL")
    with connection.cursor() as cursor:
        # Exact distances (``+ 0`` keeps the planner off the HNSW index): a team's sessions
        # are few enough, and a filtered HNSW scan could come back short.
        cursor.execute(
            "SELECT s.id, 1 - (s.embedding <=> %s::vector) AS similarity"
            f" FROM agent_sessions_session s WHERE {where.sql}"
            " ORDER BY (s.embedding <=> %s::vector) + 0 LIMIT %s",
            [vector, *where.params, vector, limit],
        )
        rows = cursor.fetchall()
    by_id = Session.objects.select_related("project", "project__team").in_bulk(
        [pk for pk, _ in rows]
    )
    return [(by_id[pk], similarity) for pk, similarity in rows if pk in by_id]
