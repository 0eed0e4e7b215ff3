"""The enrichment poke is throttled to one task a second, and still never loses work: a poke
throttled while an embedding task runs is seen by that task before it stops."""

from __future__ import annotations

import pytest

from memoryapp.celery import app as celery_app
from sessions import poke
from tests.conftest import purge_test_queue


@pytest.fixture
def redis():
    poke.POKES.reset()
    purge_test_queue()  # tasks an earlier test's captures left queued would be counted
    with celery_app.connection_for_write() as conn:
        client = conn.default_channel.client
        client.delete(poke.POKE_KEY, poke.DIRTY_KEY)
        yield client
        client.delete(poke.POKE_KEY, poke.DIRTY_KEY)
    purge_test_queue()


def queued() -> int:
    with celery_app.connection_for_write() as conn:
        return conn.default_channel.client.llen(celery_app.conf.task_default_queue)


def test_a_poke_throttled_while_a_task_runs_is_seen_before_it_stops(redis):
    poke.poke_enrichment()  # a capture: a task is sent, the throttle set
    assert queued() == 1 and redis.get(poke.POKE_KEY)
    # The task claims what was there; another capture commits and pokes: throttled …
    poke.poke_enrichment()
    assert queued() == 1
    # … but the task, finding nothing left, looks again before it stops.
    assert poke.more_work_arrived() is True
    assert poke.more_work_arrived() is False
    # And once it stopped, the next capture's poke sends a task at once.
    poke.poke_enrichment()
    assert queued() == 2
