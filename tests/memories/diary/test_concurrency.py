"""Two distillations of the same day at once (two workers, or beat and a manual re-run)
leave one entry per person, character and day: the upsert is one statement that
PostgreSQL serialises on the unique key."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from memories.diary.distill import distill_day
from memories.diary.models import DiaryEntry
from tests.memories.diary.conftest import DAY, sam  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_runs_of_a_day_never_duplicate(sam):  # noqa: F811
    start, errors = threading.Barrier(3), []

    def run():
        try:
            start.wait()
            distill_day(DAY)
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    keys = list(DiaryEntry.objects.values_list("person", "character", "day"))
    assert len(keys) == len(set(keys)) == 3
