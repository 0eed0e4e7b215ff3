"""Background work of the search app."""

from __future__ import annotations

from celery import shared_task

from search import team_indexes


@shared_task(ignore_result=True)
def build_team_indexes() -> list[str]:
    """Hourly (Celery beat): big teams get their own indexes (search/team_indexes.py)."""
    return [f"{c.action} {c.index}" for c in team_indexes.ensure()]
