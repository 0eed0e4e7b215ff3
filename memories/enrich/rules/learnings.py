"""Learnings: what a session found out that is worth knowing next time ("turns out …", "lesson
learned: …", "note: …", "TIL …", "the fix was …", "the trick is …", "in Python, X is not
allowed")."""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clean

# A rule of a language or tool as stated: "In Python, backslashes inside f-string braces are
# not allowed", "In Go, a nil map cannot be written to".
_LANGUAGE_RULE = (
    r"^in (python|go|golang|rust|java|javascript|typescript|node|ruby|php|c#|c\+\+|kotlin|"
    r"swift|bash|sql|sqlite|postgres(ql)?|mysql|git|docker|django|react)( \d[\d.]*)?,[^.]*\b("
    r"not allowed|cannot|can'?t|must|requires?|only|never|always)\b"
)
_CUES = re.compile(
    r"\bturns? out\b|\blessons? learned\b|^(note|nb|tip|gotcha|til)\s*:\s*\S|^til\b"
    r"|\bthe (fix|solution|trick|workaround) (is|was)\b"
    r"|\b(i|we) (learned|learnt) (that|to)\b"
    r"|\bfixed (it|this|that) by\b|\bworks? around (it|this) by\b"
    r"|\bneeds? to be (run|set|called|installed|enabled) (before|after|with|first)\b"
    r"|" + _LANGUAGE_RULE,
    re.I,
)


def match(statement) -> Match | None:
    if not statement.tools or not _CUES.search(statement.sentence):
        return None
    content = clean(statement.sentence)
    return Match("learning", content, {"learning": content, "learned_by": statement.speaker})
