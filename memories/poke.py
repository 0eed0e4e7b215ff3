"""Ask a worker to extract memories: a task message saying only "look for pending
extractions" (the work is pulled from ``MemoryExtraction`` rows). The same pokes as the
embedding work's (``sessions/poke.py``): at most one a second, never waiting on a
broker that is down (the beat sweep pokes every minute), and none lost to the throttle: the
extraction task asks ``more_work_arrived`` before it stops."""

from __future__ import annotations

from core.quick_broker import QuickBroker
from sessions.poke import Poke

EXTRACTION = Poke(
    "memories.tasks.extract_pending",
    poke_key="memoryapp:memory-extraction-poke",
    dirty_key="memoryapp:memory-extraction-arrived",
    broker=QuickBroker("memory extraction pokes"),
)


def poke_extraction() -> None:
    EXTRACTION.poke()
