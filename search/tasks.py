"""Search's background work: the big teams' own indexes, and warm buffers after a restart."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from search.speed import team_indexes, warm


@shared_task(name="search.tasks.build_team_indexes", ignore_result=True)
def build_team_indexes() -> list[str]:
    """Hourly (Celery beat): big teams get their own indexes (search/speed/team_indexes.py), and
    what searches read is read into PostgreSQL's buffers again (a new graph never was; what
    no search asked for in an hour may have been evicted)."""
    changes = [f"{c.action} {c.index}" for c in team_indexes.ensure()]
    warm.warm()
    return changes


@shared_task(name="search.tasks.warm_buffers", ignore_result=True)
def warm_buffers() -> None:
    """When a worker starts: read what searches read into PostgreSQL's buffers
    (search/speed/warm.py)."""
    warm.warm()


@worker_ready.connect
def _warm_when_a_worker_starts(sender, **kwargs) -> None:
    # Each worker that starts queues one; after the first, the pages are in the buffers and
    # the others take a fraction of the time.
    warm_buffers.delay()
