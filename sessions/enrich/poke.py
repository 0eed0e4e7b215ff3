"""The signal that there is enrichment work: a task message saying only "look for pending
rows" (the work itself is pulled from the database, ``pipeline.py``).

Sent after a capture commits, or after an archived session's messages are put back to
pending, at most once a second. It must never make the request wait for the broker: it
goes through ``QuickBroker`` (short timeouts, a pause after a failure). Nothing is lost when
it fails: the beat sweeper pokes every minute. The task is named, not imported, so this
module stays below ``sessions.tasks``.
"""

from __future__ import annotations

from contextlib import suppress

from memoryapp.quick_broker import BrokerUnavailable, QuickBroker

POKE_KEY = "memoryapp:enrichment-poke"
POKE_EVERY_MS = 1000
EMBED_TASK = "sessions.tasks.embed_pending"
POKES = QuickBroker("enrichment pokes")


def poke_enrichment() -> None:
    """Ask a worker to look for pending work. Never raises and never waits on the broker:
    if it is down, what was stored still stands and the sweeper pokes later."""
    from memoryapp.celery import app

    def poke(conn) -> None:
        if conn.default_channel.client.set(POKE_KEY, 1, nx=True, px=POKE_EVERY_MS):
            app.send_task(EMBED_TASK, connection=conn, retry=False)

    with suppress(BrokerUnavailable):  # the data is safe in PostgreSQL
        POKES.run(poke)
