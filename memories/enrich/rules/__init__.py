"""Rules of the offline extractor, one module per memory type. Each ``match(statement)``
returns a ``Match`` (the type's content and fields) or None; ``offline.py`` adds what every
extracted memory carries (session, evidence, agent, tags, time)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sessions.enrich.text import capitalize, fit_words, strip_end

MAX_CONTENT = 500
MAX_CLAUSE = 200


@dataclass
class Match:
    type: str
    content: str
    details: dict = field(default_factory=dict)
    topic: str = ""
    confidence: str = ""
    severity: str = ""


def clean(sentence: str) -> str:
    """The sentence as a memory's content: spaced, capitalised, ending with a full stop."""
    text = re.sub(r"\s+", " ", sentence).strip().lstrip("-*•> ").strip()
    return fit_words(capitalize(strip_end(text)) + ".", MAX_CONTENT)


def clause(text: str) -> str:
    """A clause cut at the next clause boundary, as a field value (a rationale, an option)."""
    text = re.split(
        r"[;:]|,\s*(?:and|but|so|which)\b|\.\s|\s[-–—]\s|\s(?:because|since|so that|as it|"
        r"given that|due to)\b",
        text,
        maxsplit=1,
    )[0]
    return fit_words(strip_end(text), MAX_CLAUSE)


def option(text: str) -> str:
    """The option a choice names, without what it is for ("Redis for the cache": Redis)."""
    return re.split(r"\s(?:for|in|on|to|with|when|at|as|from|because)\b", clause(text), maxsplit=1)[
        0
    ]


def key(text: str, words: int = 4) -> str:
    """A topic key from a phrase: lowercase words joined by underscores."""
    found = re.findall(r"[a-z0-9][a-z0-9+#.-]*", text.lower())
    return "_".join(w.strip(".-") for w in found[:words] if w.strip(".-"))[:100]
