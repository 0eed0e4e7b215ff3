"""Findings: bugs and their causes as stated ("the problem was …", "found that …", "root cause:
…", "CRITICAL: …", "X isn't the cause", "unfortunately, X has no Y"), and an agent's account of
a state of the code and its effect ("the app has no X, so Y"); a hedged guess ("likely",
"seems") is not one. The marker sets the severity; the words say the category; a file named in
the sentence is its location. "That didn't work" is a finding only when the sentence also says
why (a dead end without a reason is left out)."""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clause, clean
from sessions.enrich.entities import extract_from_text

_CUES = re.compile(
    r"\b(the|a|one|this|that)\s+(real\s+|actual\s+|main\s+)?(problem|issue|bug|culprit)\s+"
    r"(is|was)\b"
    r"|\broot cause\b"
    r"|\b(i|we)\s+(found|discovered|noticed|realized|realised)\s+(that\b|(a|an|the)\s+"
    r"(\w+\s+)?(bug|issue|problem|race|leak|typo|regression|mismatch|conflict)s?\b)"
    r"|\bturns? out (that )?(the|a|an|there|it)\b[^.]*\b(bug|broken|missing|wrong|fail|"
    r"error|crash|leak|race|not)\w*"
    r"|^(the\s+)?(critical|important|bug|finding|issue|problem|security|warning|root cause|"
    r"cause)\s*:\s*\S"
    r"|\b(is|was|isn'?t|wasn'?t|is not|was not) (the|a) (root )?cause\b"
    r"|\b(caused by|is causing|was causing|causes the|is broken|was broken|fails because|"
    r"failed because|failing because|doesn'?t work because|didn'?t work because)\b",
    re.I,
)
# A state the code is in, and what it leads to: "the app has no CORS middleware, so the
# server answers 405". The subject is the code, not a person ("I can't …, so …").
_CONSEQUENCE = re.compile(
    r"^(?!(i|we|you|let'?s|it|this|that)\b)[^,;:]{8,}\b(doesn'?t|does not|don'?t|do not|isn'?t|"
    r"is not|aren'?t|are not|has no|have no|never|not)\b[^,;:]*,\s*so\s+(that\s+)?\S",
    re.I,
)
# "Unfortunately, git has no hook for reset": a limitation of the code or a tool, found out. A
# rule of a business the agent recites ("the passengers cannot be changed") is not one.
_LIMITATION = re.compile(
    r"^unfortunately,?\s+(?!(i|we|you|let'?s)\b)[^,;]*\b(doesn'?t|does not|don'?t|do not|"
    r"can'?t|cannot|isn'?t|is not|aren'?t|are not|has no|have no|never|no)\b",
    re.I,
)
_TECHNICAL = re.compile(
    r"\b(hooks?|api|library|module|function|method|config\w*|flag|option|command|endpoint|"
    r"schema|index|branch|commit|driver|parser|build|compiler|runtime|sdk|plugin|column|"
    r"table|type|interface|package|version|protocol|header|query|cache|queue|server|client)\b",
    re.I,
)
_HEDGED = re.compile(r"\b(likely|probably|seems?|appears?|guess)\b", re.I)
_NOT_A_FINDING = re.compile(
    r"\b(no (problem|issue|bug)s?|without (any )?(problem|issue)s?|not (a|the) (problem|"
    r"issue)|(problem|issue) (is|was) (solved|fixed|resolved)|found (the|a|an) (file|"
    r"function|test|way|place)s?\b|let me|i'?ll)\b",
    re.I,
)
_SEVERITY = [
    (
        "critical",
        re.compile(
            r"^critical\b|\b(critical|security (hole|issue|bug)|data loss|"
            r"vulnerab\w+|crash(es|ed)?)\b",
            re.I,
        ),
    ),
    (
        "important",
        re.compile(
            r"^important\b|\b(important|broken|fails?|failed|failing|"
            r"wrong|incorrect)\b",
            re.I,
        ),
    ),
]
_CATEGORIES = [
    (
        "security",
        re.compile(
            r"\b(security|vulnerab\w+|injection|xss|csrf|secret|token "
            r"leak|auth\w*)\b",
            re.I,
        ),
    ),
    ("performance", re.compile(r"\b(slow|performance|latency|timeout|memory leak|n\+1)\b", re.I)),
    (
        "configuration",
        re.compile(
            r"\b(config\w*|environment|env var\w*|setting|version|"
            r"dependency|path)\b",
            re.I,
        ),
    ),
    ("test", re.compile(r"\b(tests?|assert\w*|fixture)\b", re.I)),
]
_ROOT_CAUSE = re.compile(
    r"\b(?:root cause (?:is|was)?:?|caused by|because(?: of)?|the (?:problem|issue|bug) "
    r"(?:is|was)(?: that)?)\s+(.+)",
    re.I,
)


def match(statement) -> Match | None:
    sentence = statement.sentence
    if not statement.tools or _NOT_A_FINDING.search(sentence) or _HEDGED.search(sentence):
        return None
    consequence = statement.role == "assistant" and _CONSEQUENCE.search(sentence)
    limitation = _LIMITATION.search(sentence) and _TECHNICAL.search(sentence)
    if not (_CUES.search(sentence) or consequence or limitation):
        return None
    details: dict = {"finding": clean(sentence), "discovered_by": statement.speaker}
    severity = next((name for name, cue in _SEVERITY if cue.search(sentence)), "minor")
    category = next((name for name, cue in _CATEGORIES if cue.search(sentence)), "bug")
    details["category"] = category
    cause = _ROOT_CAUSE.search(sentence)
    if cause:
        details["root_cause"] = clause(cause.group(1))
    files = [value for kind, value, _s, _e in extract_from_text(sentence) if kind == "FILE"]
    if files:
        details["location"] = {"artifact": files[0]}
    return Match("finding", clean(sentence), details, severity=severity)
