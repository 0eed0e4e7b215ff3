"""Ask a worker to extract memories: a task message saying only "look for pending
extractions" (the work is pulled from ``MemoryExtraction`` rows). At most one a second;
never waits on a broker that is down (the beat sweep pokes every minute)."""

from __future__ import annotations

from contextlib import suppress

from memoryapp.quick_broker import BrokerUnavailable, QuickBroker

POKE_KEY = "memoryapp:memory-extraction-poke"
POKE_EVERY_MS = 1000
EXTRACT_TASK = "memories.tasks.extract_pending"
POKES = QuickBroker("memory extraction pokes")


def poke_extraction() -> None:
    from memoryapp.celery import app

    def poke(conn) -> None:
        if conn.default_channel.client.set(POKE_KEY, 1, nx=True, px=POKE_EVERY_MS):
            app.send_task(EXTRACT_TASK, connection=conn, retry=False)

    with suppress(BrokerUnavailable):
        POKES.run(poke)
