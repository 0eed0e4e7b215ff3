"""The keyword context (``sessions/capture/keyword_context.py``): each message's context is
its date, its session's working folder, the two messages before it and the one after it in
its session (whatever seqs were removed in between) and its own speaker; and the statement
that stores it keeps one plan whatever the table's statistics say, so a capture never parses
a session's contexts once per message."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sessions.capture.keyword_context import (
    BEFORE,
    CONTEXT_SQL,
    LINE,
    WINDOW_CONTEXT,
    index_context,
)
from sessions.capture.service import append_messages, capture_session
from sessions.models import SEARCH_CONFIG, Message, Session
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

# The definition, written the other way: a window over the whole session.
DEFINITION = f"""concat_ws(E'\\n',
    to_char(coalesce(m.timestamp, s.started_at), 'DD FMMonth YYYY'),
    (regexp_match(s.metadata->>'cwd', '([^/\\\\]+)[/\\\\]*$'))[1],
    lag({LINE}, 2) OVER w, lag({LINE}, 1) OVER w,
    coalesce(nullif(m.author, ''), m.role),
    lead({LINE}, 1) OVER w)"""
EXPECTED_SQL = f"""
SELECT m.seq, m.context_vector = to_tsvector('{SEARCH_CONFIG}', {{context}})
FROM agent_sessions_message m JOIN agent_sessions_session s ON s.id = m.session_id
WHERE m.session_id = %s WINDOW w AS (ORDER BY m.seq) ORDER BY m.seq
"""


def parsed(texts: list[tuple[str, str]], *, timestamps: bool = True) -> list[ParsedMessage]:
    start = timezone.now() - timedelta(days=3)
    return [
        ParsedMessage(
            role,
            text,
            author="Caroline" if role == "user" else "",
            timestamp=start + timedelta(minutes=i) if timestamps and i % 3 else None,
        )
        for i, (role, text) in enumerate(texts)
    ]


def mismatches(session: Session) -> list[int]:
    """The seqs whose stored context differs from the definition, or from the window form
    bulk loads use (``WINDOW_CONTEXT``)."""
    out = []
    for context in (DEFINITION, WINDOW_CONTEXT):
        with connection.cursor() as cursor:
            cursor.execute(EXPECTED_SQL.format(context=context), [session.pk])
            out += [seq for seq, equal in cursor.fetchall() if not equal]
    return out


def test_each_context_is_its_date_neighbours_and_speaker_after_captures_appends_and_removals(
    project,
):
    turns = [
        ("user", "Where are you from, originally?"),
        ("assistant", "Sweden, four years ago we moved."),
        ("user", "Do you still go hiking every weekend?"),
        ("assistant", "Yes, mostly in the mountains near Oslo."),
        ("user", "What about the kubernetes migration at work?"),
    ]
    result = capture_session(
        project, ParsedSession(source_format="api", agent_name="dev", messages=parsed(turns))
    )
    session = result.session
    assert mismatches(session) == []
    in_repo = capture_session(
        project,
        ParsedSession(
            source_format="claude_code",
            agent_name="claude",
            messages=parsed(turns[:3]),
            metadata={"cwd": "C:\\Users\\ann\\agentic-wallet\\"},
        ),
    ).session
    assert mismatches(in_repo) == []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT session_id, bool_and(context_vector @@ to_tsquery('english', 'wallet'))"
            " FROM agent_sessions_message WHERE session_id IN (%s, %s) GROUP BY session_id",
            [session.pk, in_repo.pk],
        )
        # Every message of the session in a folder holds the folder's words; no other does.
        assert dict(cursor.fetchall()) == {session.pk: False, in_repo.pk: True}
    append_messages(session, parsed([("assistant", "Done: the ingress moved on Friday.")]))
    append_messages(
        session,
        parsed([("user", "Great, thanks!"), ("assistant", "Any time.")], timestamps=False),
    )
    assert mismatches(session) == []
    # A message deleted outright (as compaction folds some) leaves a gap in the seqs: its
    # neighbours now see past it once the context is indexed again from there.
    Message.objects.filter(session=session, seq=3).delete()
    index_context(session.pk, 3)
    assert mismatches(session) == []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT context_vector @@ to_tsquery('english', 'kubernetes & hiking')"
            " FROM agent_sessions_message WHERE session_id = %s AND seq = 5",
            [session.pk],
        )
        # seq 5's two before are now 4 (kubernetes) and 2 (hiking), 3 being gone.
        assert cursor.fetchone() == (True,)
    assert BEFORE == 2


def plan_nodes(node: dict) -> list[str]:
    """Each node of a JSON plan as "<type> <relation>"."""
    here = f"{node['Node Type']} {node.get('Relation Name', '')}".strip()
    return [here] + [kind for child in node.get("Plans", []) for kind in plan_nodes(child)]


def test_a_table_analysed_while_empty_keeps_the_statement_free_of_joins(project):
    # The state a test database or a freshly emptied table is in: pages, but statistics
    # saying zero rows, so every estimate is one row. A join between the rows to update and
    # their contexts could then be planned as a nested loop that parses every context again
    # for each message (150 s for 1,000 messages, measured).
    session = Session.objects.create(team=project.team, project=project, agent_name="dev")
    Message.objects.bulk_create(
        Message(team=project.team, session=session, seq=i, role="user", content=f"turn {i}")
        for i in range(500)
    )
    Message.objects.filter(session=session).delete()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_sessions_message")
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'agent_sessions_message'")
        assert cursor.fetchone() == (0.0,)
    Message.objects.bulk_create(
        Message(team=project.team, session=session, seq=i, role="user", content=f"turn {i}")
        for i in range(1000)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (FORMAT JSON) " + CONTEXT_SQL,
            {"session": session.pk, "first": 0, "through": None},
        )
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes = plan_nodes(plan[0]["Plan"])
    assert not {"Nested Loop", "Hash Join", "Merge Join"} & set(nodes), nodes
    assert "Seq Scan agent_sessions_message" not in nodes, nodes
