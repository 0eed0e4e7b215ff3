"""Learnings: what a session found out that is worth knowing next time ("turns out …",
"lesson learned: …", "note: …", "TIL …", "the fix was …", "the trick is …")."""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clean

_CUES = re.compile(
    r"\bturns? out\b|\blessons? learned\b|^(note|nb|tip|gotcha|til)\s*:\s*\S|^til\b"
    r"|\bthe (fix|solution|trick|workaround) (is|was)\b"
    r"|\b(i|we) (learned|learnt) (that|to)\b"
    r"|\bfixed (it|this|that) by\b|\bworks? around (it|this) by\b"
    r"|\bneeds? to be (run|set|called|installed|enabled) (before|after|with|first)\b",
    re.I,
)


def match(statement) -> Match | None:
    if not statement.tools or not _CUES.search(statement.sentence):
        return None
    content = clean(statement.sentence)
    return Match("learning", content, {"learning": content, "learned_by": statement.speaker})
