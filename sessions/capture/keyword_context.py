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
dense side has its own, narrower context: a short user or assistant turn is embedded after
the one before it (``sessions/enrich/chunking.py``).

A coding agent's session also gives its working folder's name (``FOLDER``: the last part of
its ``cwd`` metadata, "agentic-wallet"), because people place what they ask by the repository
("what was the agent asked to do in the agentic wallet repo?"). Every message of the session
holds it, so its words are common there and lift that session's matches above another
repository's without reordering the session's own; a session without a ``cwd`` adds nothing.

Computed in SQL in the capture transaction, for the new messages only (an append looks back
at the stored ones), so a message is keyword-searchable with its context the moment it commits.

With the context, the same statement stores the message's ranking document
(``ranking_vector``, ``RANKING_DOCUMENT``): its own words weighted A, merged with its context's.
Keyword search ranks each pooled message on it; built per query instead, it cost each query
hundreds of long tsvectors read, re-weighted and merged (docs/benchmark-log.md, "Search on real
transcripts"). Every writer of a message's content or context calls ``index_context`` (or
``forget_context``), so the stored document is always the one the definition gives.
"""

from __future__ import annotations

from django.db import connection

from sessions.models import SEARCH_CONFIG

BEFORE = 2  # messages before; and the one after, once it arrives
NEIGHBOUR_CHARS = 1000  # of each neighbour: questions are short; tool output is not context
# A neighbour as "<author or role>: <text>" (who said it is part of what people ask).
LINE = f"coalesce(nullif(m.author, ''), m.role) || ': ' || left(m.content, {NEIGHBOUR_CHARS})"

# The working folder (the last part of its ``cwd``) of the session row ``{s}``; and of the
# captured messages' session, as written in their context.
FOLDER_OF = "regexp_replace(rtrim({s}.metadata->>'cwd', '/\\'), '^.*[/\\\\]', '')"
FOLDER = (
    f"(SELECT {FOLDER_OF.format(s='s')} FROM agent_sessions_session s WHERE s.id = %(session)s)"
)

# What a message is ranked on (search/keyword.py): its own words weighted A, then its
# context's (weight D), over the message row ``{m}``. Search falls back to it for a row whose
# document is not stored yet (migration 0017 fills the rows captured before).
RANKING_DOCUMENT = (
    "(setweight({m}.search_vector, 'A') || coalesce({m}.context_vector, ''::tsvector))"
)

# Each message's neighbours are found by their own index probes (session, seq) rather than by
# a window over the session joined back to the rows: with a join, the plan rests on row
# estimates, and a table last analysed while empty (reltuples 0) estimates one row on each
# side, so the planner may put the window on the inner side of a nested loop, parsing the
# whole session's contexts again for every message (a 1,000-message capture took 150 s
# instead of 0.2 s). Here there is no join: the rows to update are one index range, and each
# one's context is parsed once (OFFSET 0 keeps the subquery from being merged, which would
# parse it once per column).


def _neighbour(side: str, nth: int) -> str:
    """The ``nth`` (0: nearest) message before or after ``t`` in its session, as a line."""
    before = side == "before"
    return f"""(SELECT {LINE} FROM agent_sessions_message m
                WHERE m.session_id = %(session)s AND m.seq {"<" if before else ">"} t.seq
                ORDER BY m.seq {"DESC" if before else "ASC"} OFFSET {nth} LIMIT 1)"""


CONTEXT_SQL = f"""
UPDATE agent_sessions_message m
SET (context_vector, ranking_vector) = (
    SELECT c.vector, setweight(m.search_vector, 'A') || c.vector
    FROM (
        SELECT to_tsvector('{SEARCH_CONFIG}', concat_ws(E'\\n',
            to_char(coalesce(t.timestamp, (
                SELECT s.started_at FROM agent_sessions_session s WHERE s.id = %(session)s
            )), 'DD FMMonth YYYY'),
            {FOLDER},
            {", ".join(_neighbour("before", nth) for nth in reversed(range(BEFORE)))},
            coalesce(nullif(t.author, ''), t.role),
            {_neighbour("after", 0)}
        )) AS vector
        FROM (SELECT m.seq, m.timestamp, m.author, m.role) t
        OFFSET 0
    ) c
)
WHERE m.session_id = %(session)s AND m.seq >= %(first)s - 1
  AND (%(through)s::integer IS NULL OR m.seq <= %(through)s::integer)
"""


# The same context written as a window over a session's messages ``m`` joined to their
# session ``s`` (``WINDOW w AS (PARTITION BY m.session_id ORDER BY m.seq)``): how a bulk load
# computes it for many sessions in one statement (bench/search_speed.py loads 1M messages
# with it). Capture must not use it (see above); tests check that both give the same vectors.
WINDOW_CONTEXT = f"""concat_ws(E'\\n',
    to_char(coalesce(m.timestamp, s.started_at), 'DD FMMonth YYYY'),
    {FOLDER_OF.format(s="s")},
    lag({LINE}, 2) OVER w, lag({LINE}, 1) OVER w,
    coalesce(nullif(m.author, ''), m.role),
    lead({LINE}, 1) OVER w)"""


def index_context(session_id: int, first_seq: int, through: int | None = None) -> None:
    """Set the context vector of the session's messages from ``first_seq`` on (up to
    ``through``, when given), and of the one before (its next message has just arrived, or
    changed)."""
    with connection.cursor() as cursor:
        cursor.execute(CONTEXT_SQL, {"session": session_id, "first": first_seq, "through": through})


def forget_context(message_id: int) -> None:
    """Drop a removed message's context (its words are gone; its neighbours' must not find
    it): its ranking document is then its own words' (``RANKING_DOCUMENT`` with no context)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE agent_sessions_message SET context_vector = NULL,"
            " ranking_vector = setweight(search_vector, 'A') WHERE id = %s",
            [message_id],
        )
