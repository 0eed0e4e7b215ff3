"""The read-count buffer in tests: write what reads were counted, or forget them."""

from __future__ import annotations

from memoryapp.celery import app
from sessions.forget import read_counts


def flush_reads(now=None) -> int:
    """What the beat's ``flush_access`` does each minute; returns how many sessions."""
    with app.connection_for_write() as conn:
        return read_counts.flush_access(conn.default_channel.client, now)


def forget_reads() -> None:
    """Drop reads counted (in Redis and held in this process) by earlier tests."""
    with app.connection_for_write() as conn:
        conn.default_channel.client.delete(*read_counts.buffer_keys())
    read_counts._held_counts.clear()
    read_counts._held_last.clear()
