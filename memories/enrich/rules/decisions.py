"""Decisions: "we decided to …", "let's go with X", "I'll use X instead of Y", "Decision: …",
and the user's "we will only support X", "ensure that all …". "Let's go with that" names no
choice and is left out.

A decision is a choice stated as made; the reason after "because"/"since"/"so that" is its
rationale, and the option after "instead of"/"rather than"/"over" is an alternative it
rejected."""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clause, clean, key, option
from memories.enrich.sentences import Statement

_CUES = re.compile(
    r"^decision:\s*\S"
    r"|\b(we|i|the team)(\s+(have|had|just|finally))?\s+(decided|chose|agreed|settled|opted)\b"
    r"|\blet'?s\s+(go with|use|stick with|switch to|keep|adopt|move to)\b"
    r"|\b(we|i)('ll| will|'re going to| are going to|'m going to| am going to)\s+"
    r"(go with|use|switch to|stick with)\b[^.]*\b(instead of|rather than)\b"
    r"|\b(we|i)('re| are|'m| am)\s+(going with|switching to)\b"
    r"|\bdecided (to|on|that|against)\b",
    re.I,
)
# The user settling how the project is to be: "We will only support SQLite for now",
# "Ensure that all tests run against the fixture database".
_USER_CUES = re.compile(
    r"^(we|i)('ll| will| are going to| am going to)\s+only\s+(use|support|test|target|ship)\b"
    r"|^(ensure|make sure)\s+(that\s+)?(all|every|each)\b",
    re.I,
)
# "Let's go with that.", "let's use these for now": the choice is in an earlier turn, and
# the memory would not say what was decided.
_EMPTY = re.compile(
    r"\b(go with|use|stick with|keep|adopt|switch to|move to)\s+(that|this|it|these|those|them|"
    r"your (suggestion|idea|plan|approach|version)|(option|number) \w+)"
    r"(\s+(one|then|instead|for now|approach|version))*\s*[.!]?$",
    re.I,
)
_UNDECIDED = re.compile(r"\b(haven'?t|hasn'?t|didn'?t|not|yet to|undecided|you) decide", re.I)
_LETS_CHECK = re.compile(
    r"\blet'?s (see|check|look|try|run|test|start|verify|make sure|find)\b"
    r"|\blet'?s (now )?move (on )?to (the )?(next|\w+ (side|part|step|section))\b",
    re.I,
)
_RATIONALE = re.compile(r"\b(?:because|since|so that|as it|given that|due to)\b\s+(.+)", re.I)
_ALTERNATIVE = re.compile(r"\b(?:instead of|rather than|over)\s+(.+)", re.I)
_CHOICE = re.compile(
    r"\b(?:go with|use|stick with|switch to|keep|adopt|move to|decided (?:to|on)|chose|"
    r"opted for|settled on|going with|switching to|decision:)\s+(.+)",
    re.I,
)
_VERB = re.compile(r"^(use|go with|stick with|switch to|keep|adopt|move to)\s+", re.I)


def match(statement: Statement) -> Match | None:
    sentence = statement.sentence
    by_user = statement.role == "user" and _USER_CUES.search(sentence)
    if (
        statement.chat
        or not (_CUES.search(sentence) or by_user)
        or _UNDECIDED.search(sentence)
        or _LETS_CHECK.search(sentence)
        or _EMPTY.search(sentence)
    ):
        return None
    details: dict = {"decision": clean(sentence), "made_by": statement.speaker}
    rationale = _RATIONALE.search(sentence)
    if rationale:
        details["rationale"] = clause(rationale.group(1))
    alternative = _ALTERNATIVE.search(sentence)
    if alternative:
        details["alternatives_considered"] = [{"option": clause(alternative.group(1))}]
    topic, chosen = _choice(sentence)
    if chosen:
        details["stance"] = chosen
    return Match("decision", clean(sentence), details, topic=topic, confidence="medium")


def _choice(sentence: str) -> tuple[str, str]:
    """``(topic, chosen)`` of "use X instead of Y": the topic is the choice between X and Y
    whichever is chosen, so a later "use Y instead of X" supersedes it, and a later "use X
    instead of Y" (the same stance) restates it."""
    choice, alternative = _CHOICE.search(sentence), _ALTERNATIVE.search(sentence)
    if not (choice and alternative):
        return "", ""
    chosen = _VERB.sub("", _ALTERNATIVE.split(choice.group(1))[0].strip())  # "decided to use X"
    chosen, rejected = key(option(chosen), 3), key(option(alternative.group(1)), 3)
    if not (chosen and rejected):
        return "", ""
    options = sorted([chosen, rejected])
    return f"choice:{options[0]}|{options[1]}"[:100], chosen
