"""Background work runs on a real Celery worker process through real Redis."""

import pytest
from django.db import transaction

from sessions.models import EnrichmentStatus, Message
from sessions.tasks import embed_pending, sweep
from tests.factories import MessageFactory, SessionFactory
from tests.waiting import wait_for


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_task_runs_on_a_real_worker_through_redis(celery_worker_process):
    message = MessageFactory(session=SessionFactory(), seq=0, content="the deploy step passed")
    assert message.enrichment_status == EnrichmentStatus.PENDING

    # Enqueued after commit, as the product does; the worker (another process, another
    # database connection) can only see committed rows.
    with transaction.atomic():
        transaction.on_commit(embed_pending.delay)

    done = Message.objects.filter(pk=message.pk, enrichment_status=EnrichmentStatus.DONE)
    assert wait_for(done.exists, timeout=120)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_result_comes_back_through_the_result_backend(celery_worker_process):
    result = sweep.apply_async(ignore_result=False)
    assert result.get(timeout=30) == {"requeued": 0, "messages": False, "sessions": False}
