"""Preferences: what the user of an agent says they want done a certain way ("I prefer …",
"always …", "never …", "please don't …", "do NOT … ever", "I only want …", "as few … as
possible"). Only the user's own words count (an agent's "I prefer" is not the user's
preference), and only explicit ones: inferring a preference from behaviour is left to the LLM
extractor.

The topic is the sentence's meaningful words without its polarity ("always"/"never",
"do"/"don't"), so "never squash commits" and later "always squash commits" share a topic and
the newer supersedes the older; "X over Y" is keyed by the pair, whichever is preferred.
"""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clean, key, option
from sessions.enrich.text import content_words, word_set

_CUES = re.compile(
    r"^(please\s+)?(always|never)\b"
    r"|^please\s+(don'?t|do not|avoid|stop)\b"
    r"|^(please\s+)?(don'?t|do not|never) (ever )?(use|add|include|install|introduce)\b"
    r"|^(please\s+)?only use\b"
    r"|\bi('d|\s+really|\s+strongly|\s+generally|\s+usually)?\s+(prefer|dislike|hate)\b"
    r"|\bi\s+(really\s+)?(like|love)\s+(to\s+\w+|it when|when|\w+ing\b)"
    r"|\bmy preference is\b|\bi'?m a (big )?fan of\b"
    r"|\bi (always|never)\s+(use|want|write|run|commit|prefer|like)\b"
    r"|\b(do not|don'?t|never)\b[^.]*\bever\b|\bi only want\b"
    r"|\bas (few|little|simple|small) [\w -]{0,40}as possible\b"
    r"|^keep (it|things|this|everything) (to (the|a) )?(minimum|minimal|simple|small|lean)\b",
    re.I,
)
_NOT_A_PREFERENCE = re.compile(
    r"\b(yet|for now|right now|this time|you prefer|i like (it|that|this|the idea)|"
    r"i love (it|that|this))\b",
    re.I,
)
_AGAINST = re.compile(r"\b(never|don'?t|do not|avoid|stop|dislike|hate|no more|not)\b", re.I)
_PAIR = re.compile(r"\bprefer\s+(.+?)\s+(?:over|to|rather than|instead of)\s+(.+)", re.I)
_POLARITY = word_set(
    "prefer preference always never don't not please avoid stop hate dislike like love fan "
    "really strongly generally usually ever only"
)
_CATEGORIES = [
    (
        "communication",
        re.compile(
            r"\b(explain|answer|repl(y|ies)|summar\w+|concise|verbose|"
            r"emoji\w*|tone|language|brief|detail\w*)\b",
            re.I,
        ),
    ),
    (
        "workflow",
        re.compile(
            r"\b(commit\w*|push\w*|branch\w*|pr|pull request|review\w*|"
            r"deploy\w*|tests?|testing|merge|rebase|squash)\b",
            re.I,
        ),
    ),
    (
        "code_style",
        re.compile(
            r"\b(format\w*|indent\w*|naming|comments?|style|type hints?|"
            r"tabs|spaces|lint\w*|docstrings?)\b",
            re.I,
        ),
    ),
    (
        "tooling",
        re.compile(
            r"\b(library|libraries|package|tool|framework|editor|pip|npm|"
            r"uv|poetry|docker)\b",
            re.I,
        ),
    ),
]


def match(statement) -> Match | None:
    sentence = statement.sentence
    if statement.chat or statement.role != "user":
        return None
    if not _CUES.search(sentence) or _NOT_A_PREFERENCE.search(sentence):
        return None
    category = next((name for name, cue in _CATEGORIES if cue.search(sentence)), "general")
    details = {
        "preference": clean(sentence),
        "category": category,
        "source": "user_statement",
    }
    topic, stance = _topic(sentence)
    if topic:
        details["stance"] = stance
    return Match("preference", clean(sentence), details, topic=topic, confidence="explicit")


def _topic(sentence: str) -> tuple[str, str]:
    """``(topic, stance)``: what the preference is about, and which side it takes (the
    preferred option of a pair; else for or against)."""
    pair = _PAIR.search(sentence)
    if pair:
        preferred, other = (key(option(text), 3) for text in pair.groups())
        if preferred and other:
            options = sorted([preferred, other])
            return f"pref:{options[0]}|{options[1]}"[:100], preferred
    words = sorted(
        w for w in content_words(sentence) if w not in _POLARITY and not w.endswith("n't")
    )
    if not words:
        return "", ""
    return f"pref:{'_'.join(words[:8])}"[:100], "against" if _AGAINST.search(sentence) else "for"
