"""``insert_rows`` (the capture path's one INSERT, ``sessions/capture/bulk_insert.py``)
stores exactly what Django's ``bulk_create`` stores, and gives the rows their ids in order."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.forms.models import model_to_dict

from sessions.capture.bulk_insert import insert_rows
from sessions.models import Message, Session

pytestmark = pytest.mark.django_db

SKIP = {"id", "session", "search_vector", "created_at"}


def messages(session: Session, first_seq: int) -> list[Message]:
    return [
        Message(
            team_id=session.team_id,
            session=session,
            seq=first_seq + i,
            role=role,
            content=content,
            author=author,
            timestamp=timestamp,
            metadata=metadata,
            kind="prose",
            pinned=i == 1,
            token_count=7 * i,
        )
        for i, (role, content, author, timestamp, metadata) in enumerate(
            [
                ("user", "Where is the 'config' — ünïcødé, \\n and %s?", "Ann", None, {}),
                ("assistant", "", "", datetime(2026, 1, 2, 3, 4, tzinfo=UTC), {"a": [1, None]}),
                ("tool", "x" * 5000, "", None, {"redactions": 2, "nested": {"k": "v"}}),
            ]
        )
    ]


def stored(rows: list[Message]) -> list[dict]:
    by_id = Message.objects.in_bulk([row.pk for row in rows])
    return [
        {k: v for k, v in model_to_dict(by_id[row.pk]).items() if k not in SKIP} for row in rows
    ]


def test_insert_rows_stores_what_bulk_create_stores(project):
    session = Session.objects.create(team=project.team, project=project, agent_name="dev")
    ours = insert_rows(messages(session, 0))
    theirs = Message.objects.bulk_create(messages(session, 3))
    assert [row.seq for row in ours] == [0, 1, 2]
    assert all(row.pk and not row._state.adding for row in ours)
    assert ours[0].pk < ours[1].pk < ours[2].pk  # ids in the rows' order
    mine = stored(ours)
    django = stored(theirs)
    for row in django:
        row["seq"] -= 3
    assert mine == django
    assert insert_rows([]) == []


def test_insert_rows_goes_in_batches_and_keeps_the_order(project, monkeypatch):
    from sessions.capture import bulk_insert

    monkeypatch.setattr(bulk_insert, "BATCH", 2)
    session = Session.objects.create(team=project.team, project=project, agent_name="dev")
    rows = insert_rows(messages(session, 0) + messages(session, 3)[:2])
    assert [row.seq for row in rows] == [0, 1, 2, 3, 4]
    ids = [row.pk for row in rows]
    assert ids == sorted(ids) and len(set(ids)) == 5
    stored = dict(Message.objects.filter(session=session).values_list("id", "seq"))
    assert [stored[pk] for pk in ids] == [0, 1, 2, 3, 4]
