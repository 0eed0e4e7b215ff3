"""Warming PostgreSQL's buffers after a restart (search/speed/warm.py): what it reads, through
which indexes, within its budget, and that a starting worker runs it."""

from __future__ import annotations

import time

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from search.speed import team_indexes, warm
from tests.conftest import WorkerProcess, purge_test_queue
from tests.factories import ProjectFactory
from tests.search.corpus import build_team_indexes, capture, embed_all


@pytest.fixture
def big_and_small(settings):
    """A team big enough for its own indexes, and a small one."""
    settings.TEAM_INDEX_MIN_MESSAGES = 5
    big, small = ProjectFactory(), ProjectFactory()
    capture(big, [("user", f"message {i} about the deploy") for i in range(30)])
    capture(small, [("user", "one message"), ("assistant", "and its answer")])
    embed_all()
    build_team_indexes()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the graph's size and the tables', for the plans
    team_indexes.forget()
    yield big.team_id, small.team_id
    team_indexes.forget()


def plan_of(sql: str, *settings: str) -> str:
    with connection.cursor() as cursor:
        for setting in settings:
            cursor.execute(f"SET {setting} = off")
        cursor.execute("EXPLAIN " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        for setting in settings:
            cursor.execute(f"RESET {setting}")
    return plan


@pytest.mark.django_db
def test_it_reads_the_big_teams_graph_then_every_teams_rows(big_and_small):
    big, small = big_and_small

    with CaptureQueriesContext(connection) as queries:
        warmed = warm.warm()

    assert [(w.team_id, w.what) for w in warmed] == [
        (big, "graph"),
        (big, "rows"),
        (small, "rows"),
    ]
    assert all(w.megabytes > 0 for w in warmed)
    sql = [q["sql"] for q in queries]
    # The walk goes through the team's own graph, not a sort of its chunks.
    walk = next(q for q in sql if "ORDER BY c.embedding <=>" in q)
    assert f"chunk_hnsw_team_{big}" in plan_of(walk, "enable_sort")
    # The sign bits from the covering index the quantized path reads (index-only once the
    # table is vacuumed; these rows are not yet); the messages through a team index, to their rows.
    bits = next(q for q in sql if "count(embedding_bits)" in q and f"= {small}" in q)
    assert "Scan using chunk_team_bits_idx" in plan_of(bits, "enable_seqscan", "enable_bitmapscan")
    rows = next(q for q in sql if "FROM agent_sessions_message WHERE" in q and f"= {small}" in q)
    plan = plan_of(rows, "enable_seqscan", "enable_bitmapscan", "enable_indexonlyscan")
    assert "Index Scan using message_team" in plan  # one of the team's indexes, to the rows
    assert "Index Only" not in plan


@pytest.mark.django_db
def test_it_reads_only_the_teams_asked_for(big_and_small):
    big, small = big_and_small
    assert [(w.team_id, w.what) for w in warm.warm([small])] == [(small, "rows")]
    assert [(w.team_id, w.what) for w in warm.warm([big])] == [(big, "graph"), (big, "rows")]


@pytest.mark.django_db
def test_it_stops_at_its_share_of_shared_buffers(big_and_small, monkeypatch, caplog):
    big, _ = big_and_small
    monkeypatch.setattr(warm, "WARM_BUFFER_SHARE", 0.0)
    with caplog.at_level("INFO", logger="search.speed.warm"):
        assert warm.warm() == []
    assert f"team {big}: its graph left out" in caplog.text


@pytest.mark.django_db
def test_before_the_migrations_it_reads_nothing_and_says_so(caplog):
    # A worker may start before the web container has migrated the database.
    with connection.cursor() as cursor:
        cursor.execute("ALTER INDEX message_team_idx RENAME TO message_team_idx_away")
    with caplog.at_level("INFO", logger="search.speed.warm"):
        assert warm.warm() == []
    assert "not migrated?" in caplog.text


@pytest.mark.django_db
def test_the_command_warms_when_asked(big_and_small, capsys):
    big, small = big_and_small
    call_command("team_indexes", "--warm")
    out = capsys.readouterr().out
    assert f"warmed team {big}'s graph" in out
    assert f"warmed team {small}'s rows" in out


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_starting_worker_warms_the_buffers(tmp_path):
    # worker_ready queues search.tasks.warm_buffers and the worker runs it, so the first
    # searches after a restart find their pages in PostgreSQL's buffers. Its own worker, alone
    # on the queue, so that no other takes the task.
    purge_test_queue()
    worker = WorkerProcess(tmp_path / "worker.log")
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not warmed(worker.log_path):
            time.sleep(0.1)
        assert warmed(worker.log_path)
    finally:
        worker.stop()


def warmed(log_path) -> bool:
    return any(
        "search.tasks.warm_buffers[" in line and "succeeded" in line
        for line in log_path.read_text(errors="replace").splitlines()
    )
