"""What one message yields, and the budget that bounds the work on it."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from typing import Any

from sessions.enrich.entities.kinds import MAX_VALUE, Found

MAX_CANDIDATES = 50_000  # matches examined per message; bounds the work on huge messages
LINES = re.compile(r"[^\n]+")


class Scan:
    """What one message yields. FILE candidates inside a URL, an e-mail address or a path a
    specific pattern already took are skipped (``block``/``blocked``); every match examined
    spends one unit of ``budget``."""

    def __init__(self) -> None:
        self.found: list[Found] = []
        self.budget = MAX_CANDIDATES
        self._blocked: list[tuple[int, int]] = []

    def add(self, type: str, value: str, start: int, end: int) -> None:
        value = value.strip()
        if value and len(value) <= MAX_VALUE:
            self.found.append((type, value, start, end))

    def each(self, matches: Iterable[Any], cost: int = 1) -> Iterator[Any]:
        for match in matches:
            if self.budget <= 0:
                return
            self.budget -= cost
            yield match

    def block(self, start: int, end: int) -> None:
        bisect.insort(self._blocked, (start, end))

    def blocked(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._blocked, (start, float("inf")))
        return any(s < end and start < e for s, e in self._blocked[max(i - 3, 0) : i + 1])

    def result(self) -> list[Found]:
        seen: set[tuple[str, str, int]] = set()
        out = []
        for item in sorted(self.found, key=lambda f: (f[2], f[3], f[0])):
            key = (item[0], item[1], item[2])
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out


def word_starts(
    scan: Scan, text: str, patterns: list[re.Pattern[str]], joiners: str
) -> Iterator[tuple[re.Pattern[str], re.Match[str]]]:
    """``(pattern, match)`` for the matches of ``patterns`` that start a word: not right
    after a letter, a digit or one of ``joiners`` (``_.$``: part of a longer name)."""
    for pattern in patterns:
        for match in scan.each(pattern.finditer(text)):
            before = char(text, match.start() - 1)
            if not (before.isalnum() or before in joiners):
                yield pattern, match


def char(text: str, i: int) -> str:
    return text[i] if 0 <= i < len(text) else " "


def has(text: str, *needles: str) -> bool:
    return any(needle in text for needle in needles)


def run_before(text: str, i: int, pattern: re.Pattern[str], limit: int) -> int:
    """Length of the run of ``pattern`` characters that ends at ``i``."""
    match = pattern.match(text[max(0, i - limit) : i][::-1])
    return len(match.group()) if match else 0
