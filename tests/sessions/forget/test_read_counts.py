"""Reads are counted in Redis and written by the minute's flush: exactly, under concurrent
reads from several processes and overlapping flushes, and without making a read wait
when Redis is down."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions import decay
from sessions.forget import read_counts
from sessions.models import Lifecycle, Session
from tests.conftest import REPO_ROOT, child_env
from tests.factories import SessionFactory
from tests.reads import flush_reads, forget_reads
from tests.search.test_api import client_for


@pytest.fixture(autouse=True)
def clean_buffer():
    read_counts.READS.reset()
    forget_reads()
    yield
    read_counts.READS.reset()
    forget_reads()


@pytest.mark.django_db
def test_a_flush_adds_reads_moves_the_clocks_and_wakes_idle_sessions():
    now = timezone.now()
    created = now - timedelta(days=20)
    idle, decaying, archived, untouched = (SessionFactory() for _ in range(4))
    for session, state in (
        (idle, Lifecycle.IDLE),
        (decaying, Lifecycle.DECAYING),
        (archived, Lifecycle.ARCHIVED),
        (untouched, Lifecycle.IDLE),
    ):
        Session.objects.filter(pk=session.pk).update(
            lifecycle=state, created_at=created, access_count=2, decay_priority=0.1
        )
    read_counts.record_access([idle.pk, decaying.pk, archived.pk], now=now - timedelta(seconds=30))
    read_counts.record_access([idle.pk], now=now - timedelta(seconds=10))
    assert flush_reads(now) == 3
    idle.refresh_from_db()
    assert idle.access_count == 4
    assert idle.last_accessed_at == idle.last_active_at == now - timedelta(seconds=10)
    assert idle.lifecycle == Lifecycle.ACTIVE
    assert idle.decay_priority == pytest.approx(decay.priority(10 / 86400, 20, 4))
    decaying.refresh_from_db()
    assert (decaying.access_count, decaying.lifecycle) == (3, Lifecycle.ACTIVE)
    # An archived session is brought back by opening it, not by a count.
    archived.refresh_from_db()
    assert (archived.access_count, archived.lifecycle) == (3, Lifecycle.ARCHIVED)
    untouched.refresh_from_db()
    assert (untouched.access_count, untouched.lifecycle) == (2, Lifecycle.IDLE)
    assert flush_reads(now) == 0  # taken: nothing is counted twice


@pytest.mark.django_db
def test_reads_through_the_api_are_counted_only_at_the_flush(project):
    session = SessionFactory(project=project)
    client = client_for(project)
    url = f"/api/v1/sessions/{session.public_id}"
    for path in ("", "/messages", "/export", "/resume"):
        assert client.get(url + path).status_code == 200
    session.refresh_from_db()
    assert session.access_count == 0  # no write on the request path
    flush_reads()
    session.refresh_from_db()
    assert session.access_count == 4


READER = """
import sys, django
django.setup()
from sessions.forget.read_counts import record_access
ids = [int(x) for x in sys.argv[2].split(",")]
for _ in range(int(sys.argv[1])):
    record_access(ids)
"""


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_concurrent_reads_from_processes_with_overlapping_flushes_count_exactly():
    sessions = [SessionFactory() for _ in range(5)]
    ids = ",".join(str(s.pk) for s in sessions)
    processes, reads = 4, 300
    env = child_env()
    readers = [
        subprocess.Popen([sys.executable, "-c", READER, str(reads), ids], cwd=REPO_ROOT, env=env)
        for _ in range(processes)
    ]
    done = threading.Event()
    errors = []

    def flusher():
        from django.db import connection as own

        try:
            while not done.is_set():
                flush_reads()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            own.close()

    flushers = [threading.Thread(target=flusher) for _ in range(2)]
    for thread in flushers:
        thread.start()
    for reader in readers:
        assert reader.wait(120) == 0
    done.set()
    for thread in flushers:
        thread.join()
    flush_reads()
    assert not errors
    counts = set(
        Session.objects.filter(pk__in=[s.pk for s in sessions]).values_list(
            "access_count", flat=True
        )
    )
    assert counts == {processes * reads}


@pytest.mark.django_db
def test_reads_answer_at_once_while_redis_is_down_and_are_counted_after(
    project, unresponsive_broker, monkeypatch
):
    session, other = SessionFactory(project=project), SessionFactory(project=project)
    client = client_for(project)
    started = time.monotonic()
    assert client.get(f"/api/v1/sessions/{session.public_id}").status_code == 200
    assert time.monotonic() - started < 1.0  # the Redis timeout is 0.5 s, once
    started = time.monotonic()
    for _ in range(10):
        assert client.get(f"/api/v1/sessions/{session.public_id}/messages").status_code == 200
    assert time.monotonic() - started < 1.0  # paused after the failure: no wait at all
    assert read_counts._held_counts[session.pk] == 11

    monkeypatch.undo()  # Redis is back
    read_counts.READS.reset()
    read_counts.record_access([other.pk])
    assert not read_counts._held_counts
    flush_reads()
    session.refresh_from_db()
    other.refresh_from_db()
    assert (session.access_count, other.access_count) == (11, 1)
