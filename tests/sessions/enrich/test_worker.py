"""Background work runs on a real Celery worker process through real Redis."""

import time

import pytest
from django.db import transaction

from sessions.models import Session
from sessions.tasks import refresh_session_stats
from tests.factories import MessageFactory, SessionFactory


def wait_for(predicate, timeout=30.0, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_task_runs_on_a_real_worker_through_redis(celery_worker_process):
    session = SessionFactory()
    MessageFactory(session=session, seq=0, content="héllo")  # 6 bytes in UTF-8
    MessageFactory(session=session, seq=1, content="world")
    assert Session.objects.get(pk=session.pk).message_count == 0

    # Enqueued after commit, as the product does; the worker (another process, another
    # database connection) can only see committed rows.
    with transaction.atomic():
        transaction.on_commit(lambda: refresh_session_stats.delay(session.pk))

    assert wait_for(lambda: Session.objects.get(pk=session.pk).message_count == 2)
    assert Session.objects.get(pk=session.pk).size_bytes == 11


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_result_comes_back_through_the_result_backend(celery_worker_process):
    session = SessionFactory()
    MessageFactory(session=session, seq=0, content="abc")
    result = refresh_session_stats.apply_async((session.pk,), ignore_result=False)
    assert result.get(timeout=30) == {"session_id": session.pk, "message_count": 1, "size_bytes": 3}
    # A session that no longer exists is not an error: the task returns quietly.
    gone = refresh_session_stats.apply_async((10**9,), ignore_result=False)
    assert gone.get(timeout=30) is None
