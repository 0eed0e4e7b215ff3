"""Decisions: "we decided to …", "let's go with X", "I'll use X instead of Y", "Decision: …".

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
_NOT_A_DECISION = re.compile(
    r"\b(haven'?t|have not|hasn'?t|didn'?t|did not|yet to|undecided|not decided|"
    r"you decide|let'?s (see|check|look|try|run|test|start|verify|make sure|find))\b",
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
    if statement.chat or not _CUES.search(sentence) or _NOT_A_DECISION.search(sentence):
        return None
    details: dict = {"decision": clean(sentence), "made_by": statement.speaker}
    rationale = _RATIONALE.search(sentence)
    if rationale:
        details["rationale"] = clause(rationale.group(1))
    alternative = _ALTERNATIVE.search(sentence)
    if alternative:
        details["alternatives_considered"] = [{"option": clause(alternative.group(1))}]
    return Match("decision", clean(sentence), details, topic=_topic(sentence), confidence="medium")


def _topic(sentence: str) -> str:
    """ "use X instead of Y": the choice between X and Y, whichever is chosen, so a later
    "use Y instead of X" supersedes it."""
    choice, alternative = _CHOICE.search(sentence), _ALTERNATIVE.search(sentence)
    if not (choice and alternative):
        return ""
    chosen = _VERB.sub("", _ALTERNATIVE.split(choice.group(1))[0].strip())  # "decided to use X"
    options = sorted(key(option(text), 3) for text in (chosen, alternative.group(1)))
    return "" if not all(options) else f"choice:{options[0]}|{options[1]}"[:100]
