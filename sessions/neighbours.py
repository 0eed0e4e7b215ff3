"""The keyword context of a message: the text just before it, and its date.

People ask about an answer in the words of the question it answered ("Where did Caroline
move from?" is answered by "Sweden, four years ago", after "Where are you from?"). So next to
each message's own ``search_vector`` we keep a ``context_vector``: the first characters of the
two messages before it in its session and the message's date. Keyword search matches and ranks
on both (the message's own words weigh the same as its context's; see ``search/keyword.py``),
snippets and highlights use the message's own text only. On LoCoMo this lifts BM25's turn
recall@10 from about 0.51 to 0.73 (bench/locomo.py).

Computed in SQL in the capture transaction, for the new messages only (an append looks back
at the stored ones), so a message is keyword-searchable with its context the moment it commits.
"""

from __future__ import annotations

from django.db import connection

from sessions.models import SEARCH_CONFIG

NEIGHBOURS = 2
NEIGHBOUR_CHARS = 1000  # of each neighbour: questions are short; tool output is not context

CONTEXT_SQL = f"""
WITH window_rows AS (
    SELECT m.id, m.seq,
           concat_ws(' ',
               to_char(coalesce(m.timestamp, s.started_at), 'DD FMMonth YYYY'),
               lag(left(m.content, {NEIGHBOUR_CHARS}), 2) OVER w,
               lag(left(m.content, {NEIGHBOUR_CHARS}), 1) OVER w) AS context
    FROM agent_sessions_message m
    JOIN agent_sessions_session s ON s.id = m.session_id
    WHERE m.session_id = %(session)s AND m.seq >= %(first)s - {NEIGHBOURS}
    WINDOW w AS (ORDER BY m.seq)
)
UPDATE agent_sessions_message m
SET context_vector = to_tsvector('{SEARCH_CONFIG}', w.context)
FROM window_rows w
WHERE m.id = w.id AND w.seq >= %(first)s
"""


def index_context(session_id: int, first_seq: int) -> None:
    """Set the context vector of the session's messages from ``first_seq`` on."""
    with connection.cursor() as cursor:
        cursor.execute(CONTEXT_SQL, {"session": session_id, "first": first_seq})
