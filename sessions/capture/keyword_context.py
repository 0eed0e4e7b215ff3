"""The keyword context of a message: the messages around it, and its date.

People ask about an answer in the words of the question it answered ("Where did Caroline
move from?" is answered by "Sweden, four years ago", after "Where are you from?"). So next to
each message's own ``search_vector`` we keep a ``context_vector``: the first characters of the
two messages before it and the one after it in its session (each with its speaker), the
message's own speaker, and its date. Keyword search matches and ranks
on both (the message's own words weigh the same as its context's; see ``search/keyword.py``),
snippets and highlights use the message's own text only. Measured offline on LoCoMo (BM25,
turn recall@10 on conversations 0-4): the turn alone 0.62, with the previous turn 0.70, with
two 0.72, with two and the date 0.74, and the next turn adds about 0.01; more hurts. The
vectors stay those of the message alone: neighbours make them worse.

Computed in SQL in the capture transaction, for the new messages only (an append looks back
at the stored ones), so a message is keyword-searchable with its context the moment it commits.
"""

from __future__ import annotations

from django.db import connection

from sessions.models import SEARCH_CONFIG

BEFORE = 2  # messages before; and the one after, once it arrives
NEIGHBOUR_CHARS = 1000  # of each neighbour: questions are short; tool output is not context
# A neighbour as "<author or role>: <text>" (who said it is part of what people ask).
LINE = f"coalesce(nullif(m.author, ''), m.role) || ': ' || left(m.content, {NEIGHBOUR_CHARS})"

CONTEXT_SQL = f"""
WITH window_rows AS (
    SELECT m.id, m.seq,
           concat_ws(E'\\n',
               to_char(coalesce(m.timestamp, s.started_at), 'DD FMMonth YYYY'),
               lag({LINE}, 2) OVER w,
               lag({LINE}, 1) OVER w,
               coalesce(nullif(m.author, ''), m.role),
               lead({LINE}, 1) OVER w) AS context
    FROM agent_sessions_message m
    JOIN agent_sessions_session s ON s.id = m.session_id
    WHERE m.session_id = %(session)s AND m.seq >= %(first)s - {BEFORE}
      AND (%(through)s::integer IS NULL OR m.seq <= %(through)s::integer + 1)
    WINDOW w AS (ORDER BY m.seq)
)
UPDATE agent_sessions_message m
SET context_vector = to_tsvector('{SEARCH_CONFIG}', w.context)
FROM window_rows w
WHERE m.id = w.id AND w.seq >= %(first)s - 1
  AND (%(through)s::integer IS NULL OR w.seq <= %(through)s::integer)
"""


def index_context(session_id: int, first_seq: int, through: int | None = None) -> None:
    """Set the context vector of the session's messages from ``first_seq`` on (up to
    ``through``, when given), and of the one before (its next message has just arrived, or
    changed)."""
    with connection.cursor() as cursor:
        cursor.execute(CONTEXT_SQL, {"session": session_id, "first": first_seq, "through": through})
