"""Format drift: what an importer meets but does not know, counted instead of refused.

Agent tools change their session formats without notice (a new record type, a new block,
a new role). A whole file refused for one unknown record loses days of sessions, so the
importers skip what they do not know and say so: ``skip("record type", "hook_event")``
counts the record under the reason ``"unknown record type 'hook_event'"``. ``parse``
collects the counts of one file with ``collecting()`` and hands them back on the list it
returns (``ParsedFile.skipped``), which the import API and the CLIs report.

One counter per file, kept in a context variable, so the helpers deep inside an importer
(a content block renderer, an event reader) can count without every function passing a
counter along. Outside ``collecting()`` a skip is simply not counted (an importer called
directly, in tests).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .base import ParsedSession

_counts: ContextVar[Counter[str] | None] = ContextVar("import_skips", default=None)


def skip(what: str, value: object = None, *, count: int = 1) -> None:
    """Count ``count`` skipped item(s) of an unknown ``what`` (``value``: its name)."""
    counts = _counts.get()
    if counts is None or count <= 0:
        return
    reason = f"unknown {what}" if value is None else f"unknown {what} {str(value)[:80]!r}"
    counts[reason] += count


@contextmanager
def collecting() -> Iterator[Counter[str]]:
    """Count the skips made inside the block (nested blocks count on their own)."""
    counts: Counter[str] = Counter()
    token = _counts.set(counts)
    try:
        yield counts
    finally:
        _counts.reset(token)


class ParsedFile(list[ParsedSession]):
    """The sessions read from one file, and what was skipped in it: ``{reason: count}``."""

    def __init__(self, sessions=(), skipped: dict[str, int] | None = None):
        super().__init__(sessions)
        self.skipped: dict[str, int] = dict(sorted((skipped or {}).items()))

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


__all__ = ["ParsedFile", "collecting", "skip"]
