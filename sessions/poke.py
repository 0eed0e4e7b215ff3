"""The signal that there is enrichment work: a task message saying only "look for pending
rows" (the work itself is pulled from the database, ``pipeline.py``).

Sent after a capture commits, or after an archived session's messages are put back to
pending, at most once a second. It must never make the request wait for the broker: it
goes through ``QuickBroker`` (short timeouts, a pause after a failure). Nothing is lost when
it fails: the beat sweeper pokes every minute. The task is named, not imported, so this
module stays below ``sessions.tasks``.

No poke is lost to the throttle: a poke first marks that work arrived (``DIRTY_KEY``), then
sends a task only if none was sent in the last second (``POKE_KEY``). An embedding task that
finds nothing left calls ``more_work_arrived`` before it stops: it drops the throttle (so the
next poke sends a task) and takes the mark (so work whose poke was throttled while the task
ran is claimed by it now). A capture that commits after the task's last claim either marked
before that call — the task looks again — or pokes after it, past the dropped throttle.
"""

from __future__ import annotations

from contextlib import suppress

from core.quick_broker import BrokerUnavailable, QuickBroker

POKE_KEY = "memoryapp:enrichment-poke"
DIRTY_KEY = "memoryapp:enrichment-arrived"
POKE_EVERY_MS = 1000
EMBED_TASK = "sessions.tasks.embed_pending"
POKES = QuickBroker("enrichment pokes")


class Poke:
    """Pokes for one kind of work: ``task`` is sent at most once per ``POKE_EVERY_MS``, and
    none is lost to that throttle (see above). The embedding work has one; apps standing on
    sessions make their own (memories' extraction)."""

    def __init__(self, task: str, poke_key: str, dirty_key: str, broker: QuickBroker):
        self.task, self.poke_key, self.dirty_key, self.broker = task, poke_key, dirty_key, broker

    def poke(self) -> None:
        """Ask a worker to look for pending work. Never raises and never waits on the broker:
        if it is down, what was stored still stands and the sweeper pokes later."""
        from celery import current_app as app

        def poke(conn) -> None:
            pipe = conn.default_channel.client.pipeline(transaction=False)
            pipe.set(self.dirty_key, 1)
            pipe.set(self.poke_key, 1, nx=True, px=POKE_EVERY_MS)
            if pipe.execute()[1]:
                app.send_task(self.task, connection=conn, retry=False)

        with suppress(BrokerUnavailable):  # the data is safe in PostgreSQL
            self.broker.run(poke)

    def more_work_arrived(self) -> bool:
        """For a task that found nothing to do, before it stops: True when a poke came since
        it last looked (it should claim again). Drops the throttle first, so a poke after
        this call sends a new task. With the broker down, False: the sweeper covers it."""

        def look(conn) -> bool:
            pipe = conn.default_channel.client.pipeline(transaction=True)
            pipe.delete(self.poke_key)
            pipe.get(self.dirty_key)
            pipe.delete(self.dirty_key)
            return pipe.execute()[1] is not None

        try:
            return self.broker.run(look)
        except BrokerUnavailable:
            return False


ENRICHMENT = Poke(EMBED_TASK, POKE_KEY, DIRTY_KEY, POKES)


def poke_enrichment() -> None:
    ENRICHMENT.poke()


def more_work_arrived() -> bool:
    return ENRICHMENT.more_work_arrived()
