"""search/speed/one_trip.py: settings sent with their statement hold for it alone."""

from __future__ import annotations

import pytest
from django.db import connection
from psycopg.pq import TransactionStatus

from search.speed import one_trip

SQL = "SELECT current_setting('enable_sort'), current_setting('cpu_operator_cost'), %s"


def settings_now() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('enable_sort'), current_setting('cpu_operator_cost')"
        )
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_settings_end_with_the_statement():
    before = settings_now()
    rows = one_trip.fetch_all(SQL, [7], {"enable_sort": "off", "cpu_operator_cost": 0.75})
    assert rows == [("off", "0.75", 7)]
    assert settings_now() == before
    # No transaction was left open on the connection.
    assert connection.connection.info.transaction_status == TransactionStatus.IDLE


@pytest.mark.django_db
def test_inside_a_transaction_they_are_reset_after_the_statement():
    assert connection.in_atomic_block
    before = settings_now()
    assert one_trip.fetch_all(SQL, [7], {"enable_sort": "off", "cpu_operator_cost": 0.75}) == [
        ("off", "0.75", 7)
    ]
    assert settings_now() == before


@pytest.mark.django_db
def test_without_settings_it_is_the_statement_alone():
    assert one_trip.fetch_all("SELECT %s, %s", [1, "a"], {}) == [(1, "a")]
