"""Background work of the search app."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from search import team_indexes


@shared_task(ignore_result=True)
def build_team_indexes() -> list[str]:
    """Hourly (Celery beat): big teams get their own indexes (search/team_indexes.py), and
    their graphs are read into PostgreSQL's buffers again (those not searched for an hour
    may have been evicted; new ones were never read)."""
    changes = [f"{c.action} {c.index}" for c in team_indexes.ensure()]
    team_indexes.warm()
    return changes


@shared_task(ignore_result=True)
def warm_team_indexes() -> None:
    """When a worker starts: read the big teams' graphs into PostgreSQL's buffers."""
    team_indexes.warm()


@worker_ready.connect
def _warm_when_a_worker_starts(sender, **kwargs) -> None:
    # Each worker that starts queues one; after the first, the pages are in the buffers and
    # the others take a fraction of the time.
    warm_team_indexes.delay()
