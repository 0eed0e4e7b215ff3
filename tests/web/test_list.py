"""The session list: the shared filters, sorts, keyset pagination and bad input."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.models import Entity
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db


def titles(response) -> list[str]:
    return [s.title for s in response.context["page"].rows]


def test_filters(member_client, project):
    now = timezone.now()
    a = SessionFactory(project=project, title="A", agent_name="coder", topics=["auth"])
    SessionFactory(project=project, title="B", agent_name="architect", workflow="review")
    SessionFactory(project=project, title="C", started_at=now - timedelta(days=40), status="error")
    Entity.objects.create(
        team=a.team, session=a, type="FILE", value="src/auth.py", normalized="src/auth.py"
    )
    assert titles(member_client.get("/sessions?agent=Coder")) == ["A"]
    assert titles(member_client.get("/sessions?workflow=review")) == ["B"]
    assert titles(member_client.get("/sessions?status=error")) == ["C"]
    assert titles(member_client.get("/sessions?topic=auth")) == ["A"]
    assert titles(member_client.get("/sessions?entity=src/auth.py&entity_type=FILE")) == ["A"]
    day = (now - timedelta(days=40)).date().isoformat()
    assert titles(member_client.get(f"/sessions?started_after={day}&started_before={day}")) == ["C"]
    assert set(titles(member_client.get(f"/sessions?project={project.pk}"))) == {"A", "B", "C"}


def test_keyset_pages_cover_everything_once(member_client, project):
    now = timezone.now()
    for i in range(120):
        SessionFactory(project=project, title=f"s{i:03}", started_at=now - timedelta(minutes=i))
    seen, url = [], "/sessions"
    for _ in range(5):
        response = member_client.get(url)
        seen += titles(response)
        cursor = response.context["page"].next_cursor
        if not cursor:
            break
        url = f"/sessions?cursor={cursor}"
    assert seen == [f"s{i:03}" for i in range(120)]
    # And back: the previous page of the last page is the one before it.
    last = member_client.get(url)
    back = member_client.get(f"/sessions?cursor={last.context['page'].prev_cursor}")
    assert titles(back) == [f"s{i:03}" for i in range(50, 100)]


@pytest.mark.parametrize("sort", ["oldest", "messages", "size"])
def test_other_sorts_paginate(member_client, project, sort):
    for i in range(60):
        SessionFactory(project=project, title=f"s{i}", message_count=i % 7, size_bytes=i)
    first = member_client.get(f"/sessions?sort={sort}")
    second = member_client.get(f"/sessions?sort={sort}&cursor={first.context['page'].next_cursor}")
    assert len(titles(first)) == 50 and len(titles(second)) == 10
    assert not set(titles(first)) & set(titles(second))


def test_list_uses_no_offset_or_count(member_client, project, django_assert_max_num_queries):
    SessionFactory.create_batch(3, project=project)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        member_client.get("/sessions?cursor=&sort=newest")
    sql = " ".join(q["sql"] for q in queries.captured_queries).upper()
    assert "OFFSET" not in sql
    assert "COUNT(" not in sql
    assert len(queries.captured_queries) <= 8


@pytest.mark.parametrize(
    "query",
    [
        "cursor=garbage!!",
        "cursor=WzEsMiwieCJd",
        "started_after=2025-13-45",
        "started_after=2025-05-01&started_before=2025-01-01",
        "started_after=0001-01-01",
        "status=exploded",
        "project=999999999",
        "project=abc",
        "sort=sideways",
        "agent=" + "x" * 500,
    ],
)
def test_bad_input_is_a_message_not_an_error(member_client, project, query):
    SessionFactory(project=project)
    response = member_client.get(f"/sessions?{query}")
    assert response.status_code == 200
    body = response.content.decode()
    assert "notice" in body or "error" in body
