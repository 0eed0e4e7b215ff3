"""Findings that a later session shows fixed are resolved on their own.

A session shows a fix of an error when, in order: a tool's output shows the error, then a
file is edited (``memories/capture/files.py``), then a tool's output passes (tests passed,
no failure, no traceback). An open finding of the project, of another session and said before
that passing run, that names the same error (an error line, a Rust/TypeScript code, a
traceback's exception class: ``signatures``) is resolved by ``auto-resolution``, with the
session's passing message added to its evidence, what was edited as the action taken and
the passing line as the verification. It can be reopened (``review.reopen``). Run by the
extraction worker over the messages it reads (``run.py``), beside the staleness check.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from django.db.models import Q

from memories.capture.files import edited_files
from memories.capture.record import Evidence, MemoryConflict, add_evidence, resolve
from memories.models import Memory, MemoryStatus, MemoryType, Resolution
from sessions.enrich.entities.kinds import CLASS, ERROR
from sessions.enrich.entities.messages import extract_from_message, extract_from_text

logger = logging.getLogger(__name__)

RESOLVER = "auto-resolution"
_ERROR_CLASS = re.compile(r"^[A-Z]\w*(?:Error|Exception)$")
_PASSED = re.compile(
    r"\b\d+ passed\b|\ball tests passed\b|^OK\b|\b0 failed\b|\bbuild succeeded\b"
    r"|\btests? pass(?:ed)?\b",
    re.I | re.M,
)
_FAILED = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b|Traceback|\bFAILED\b|\bERROR\b|\bpanic:")
MAX_SIGNATURES = 50


def signatures(found) -> set[str]:
    """The errors among entities: error lines and codes, and exception class names."""
    return {
        value
        for kind, value, _start, _end in found
        if kind == ERROR or (kind == CLASS and _ERROR_CLASS.match(value))
    }


def passes(text: str) -> str:
    """The passing line of a run's output, or "" when it does not pass."""
    if not text or _FAILED.search(text):
        return ""
    match = _PASSED.search(text)
    if not match:
        return ""
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end >= 0 else len(text)].strip()[:200]


@dataclass
class Fix:
    errors: set[str]
    edited: list[str]
    passed: object  # the passing message
    line: str
    seen: dict = field(default_factory=dict)


def fixes_in(messages) -> list[Fix]:
    """The fixes the messages show, in order (see the module's docstring)."""
    failing: dict[str, bool] = {}  # error → a file was edited since it was seen
    edited: dict[str, None] = {}
    fixes = []
    for message in messages:
        if message.role == "tool":
            line = passes(message.content or "")
            if line:
                fixed = {error for error, edit_since in failing.items() if edit_since}
                if fixed:
                    fixes.append(Fix(fixed, list(edited), message, line))
                    for error in fixed:
                        failing.pop(error)
                continue
            for error in list(signatures(extract_from_message("tool", message.content or "")))[
                :MAX_SIGNATURES
            ]:
                failing[error] = False
            continue
        paths = edited_files(message.role, message.content, message.tool_name, message.metadata)
        if paths:
            edited.update(dict.fromkeys(paths))
            for error in failing:
                failing[error] = True
    return fixes


def resolve_fixed(session, messages) -> int:
    """Resolve the open findings that ``messages`` (of ``session``) show fixed; returns how
    many."""
    resolved = 0
    for fix in fixes_in(messages):
        names = Q()
        for error in fix.errors:
            names |= Q(content__contains=error) | Q(evidence__quote__contains=error)
        candidates = (
            Memory.objects.filter(
                project_id=session.project_id,
                type=MemoryType.FINDING,
                status=MemoryStatus.ACTIVE,
                resolution=Resolution.OPEN,
            )
            .exclude(session_id=session.pk)
            .filter(names)
            .distinct()
        )
        if fix.passed.timestamp is not None:
            candidates = candidates.filter(occurred_at__lte=fix.passed.timestamp)
        for finding in candidates:
            if not _names_one_of(finding, fix.errors):
                continue
            files = ", ".join(fix.edited[:5]) or "files"
            try:
                resolve(
                    finding,
                    by=RESOLVER,
                    action_taken=f"session {session.public_id} edited {files}, then the run passed",
                    verification=fix.line,
                )
            except MemoryConflict:
                continue  # resolved meanwhile
            add_evidence(finding, [Evidence(fix.passed, fix.line)])
            resolved += 1
    return resolved


def _names_one_of(finding: Memory, errors: set[str]) -> bool:
    """The finding's own errors (its statement and quotes) hold one of ``errors``: a
    substring match of a short class name is not enough on its own."""
    texts = [finding.content, *finding.evidence.values_list("quote", flat=True)]
    return any(signatures(extract_from_text(text)) & errors for text in texts)
