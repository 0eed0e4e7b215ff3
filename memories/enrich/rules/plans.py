"""Decisions a plan states: the choices in an agent's proposed plan ("Use X as Y", "Keep
the existing X", "Describe X as Y", "Set the X to Y"), and what an agent labels as its plan
("Plan: …", "Change summary: …").

A plan's other steps ("Add a test", "Refresh the description") are work to do, not choices,
and are left out: only verbs that settle how something is to be, and only in a message
that is a plan (Codex's ``<proposed_plan>``, a heading or a line that says "plan")."""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clean
from memories.enrich.sentences import Statement
from sessions.enrich.transcript import attr

PLAN_HEAD_CHARS = 300  # a plan says so at its start
_PLAN_MESSAGE = re.compile(
    r"<proposed_plan>|^\s*#{1,3} [^\n]*\bplan\b|^\s*(\*\*)?(implementation |proposed )?plan"
    r"(\*\*)?\s*:",
    re.I | re.M,
)
_LABELLED = re.compile(r"^(plan|change summary|approach|chosen approach)\s*:\s*\S", re.I)
_CHOICE = re.compile(
    r"^(use|reuse|keep|adopt|target|standardi[sz]e on)\s+\S"
    r"|^(set|switch|change|move|pin|default)\s+.+\bto\b"
    r"|^(describe|treat|present|frame|position)\s+.+\bas\b"
    r"|^replace\s+.+\bwith\b",
    re.I,
)


def is_plan(message) -> bool:
    return bool(_PLAN_MESSAGE.search(str(attr(message, "content") or "")[:PLAN_HEAD_CHARS]))


def match(statement: Statement) -> Match | None:
    if statement.chat or statement.role != "assistant":
        return None
    sentence = statement.sentence
    if not (
        _LABELLED.search(sentence) or (_CHOICE.search(sentence) and is_plan(statement.message))
    ):
        return None
    content = clean(_LABELLED.sub(lambda m: m.group(0)[-1], sentence))
    details = {"decision": content, "made_by": statement.speaker, "source": "plan"}
    return Match("decision", content, details, confidence="medium")
