"""A capture never waits on the broker (issue 14, #11): during a Redis outage it answers at
once, and the sweeper embeds what it stored once Redis is back."""

import os
import time

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from memoryapp.celery import app as celery_app
from memoryapp.local import embedded
from sessions import poke, tasks
from sessions.models import Message
from teams.models import ApiToken
from tests.conftest import TEST_OUTPUT, WorkerProcess, purge_test_queue
from tests.factories import ProjectFactory
from tests.waiting import wait_for


@pytest.fixture(autouse=True)
def pokes_not_paused():
    """Each test starts, and leaves, with no pause from an earlier broker failure."""
    poke.POKES.reset()
    yield
    poke.POKES.reset()


def test_a_poke_gives_up_at_once_on_a_broker_that_does_not_answer(unresponsive_broker):
    started = time.monotonic()
    poke.poke_enrichment()
    first = time.monotonic() - started
    # kombu's own retries waited its whole connect timeout (4 s here, ~6 s in the issue).
    assert first < 1.0

    started = time.monotonic()
    for _ in range(20):
        poke.poke_enrichment()
    # A burst right after a failure does not try the broker again, so pays nothing.
    assert time.monotonic() - started < 0.1


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("REDIS_URL")), reason="stops the embedded Redis")
@pytest.mark.django_db(transaction=True)
def test_capture_during_a_redis_outage_answers_at_once_and_is_embedded_after(django_db_setup):
    project = ProjectFactory()
    _, raw = ApiToken.issue(project, name="outage")
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    purge_test_queue()

    embedded.stop_redis()
    try:
        timings = []
        for i in range(5):
            started = time.monotonic()
            response = agent.post(
                "/api/v1/sessions",
                {
                    "agent_name": "architect",
                    "external_id": f"outage-{i}",
                    "messages": [{"role": "user", "content": f"while Redis was down, step {i}"}],
                },
                format="json",
            )
            timings.append(time.monotonic() - started)
            assert response.status_code == 201, response.content
    finally:
        embedded.start_redis()
    # The poke used to wait ~6 s on the broker, in every capture.
    assert max(timings) < 1.0, timings
    assert Message.objects.filter(enrichment_status="pending").count() == 5

    worker = WorkerProcess(TEST_OUTPUT / "redis-outage-worker.log")
    worker.start()
    try:
        # What beat does each minute (on a fresh connection: the pooled ones died with Redis).
        with celery_app.connection_for_write() as conn:
            tasks.sweep.apply_async(queue=settings.CELERY_TASK_DEFAULT_QUEUE, connection=conn)
        assert wait_for(
            lambda: not Message.objects.exclude(enrichment_status="done").exists(), timeout=120
        ), list(Message.objects.values_list("enrichment_status", "enrichment_error"))
    finally:
        worker.stop()
