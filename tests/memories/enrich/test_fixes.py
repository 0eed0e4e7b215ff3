"""Findings resolved on their own when a later session shows the fix: the same error, then
edits, then a passing run; the session's passing message becomes evidence; reopening works;
and what is not a fix (no edit between, another error, a run that still fails, the
finding's own session) resolves nothing."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memories.capture import review
from memories.capture.record import MemoryDraft, record
from memories.enrich.fixes import fixes_in, passes, resolve_fixed
from memories.models import MemoryEvidence
from sessions.models import Message
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

FAILING = "FAILED tests/test_login.py::test_login - TimeoutError: read timed out\n1 failed in 0.3s"
EDIT = "Edit src/auth/login.py\n-timeout=1\n+timeout=10"
PASSING = "===== 4 passed in 0.41s ====="


def session_of(project, *steps):
    """A session of tool calls: ("run", output) or ("edit", content)."""
    session = SessionFactory(project=project)
    now = timezone.now()
    for seq, (kind, text) in enumerate(steps):
        if kind == "run":
            MessageFactory(
                session=session, seq=seq, role="tool", tool_name="Bash", content=text, timestamp=now
            )
        else:
            MessageFactory(
                session=session,
                seq=seq,
                role="assistant",
                tool_name="Edit",
                content=text,
                timestamp=now,
            )
    return session, list(Message.objects.filter(session=session).order_by("seq"))


def finding(project, content="Login times out with TimeoutError for some users"):
    return record(
        project, MemoryDraft(type="finding", content=content, severity="important")
    ).memory


def test_a_run_passes_only_without_failures():
    assert passes(PASSING) == PASSING
    assert passes("Ran 12 tests in 0.1s\n\nOK") == "OK"
    assert passes("3 passed, 1 failed") == ""
    assert passes("Traceback (most recent call last):\n...\n2 passed") == ""
    assert passes("") == ""


def test_the_same_error_then_an_edit_then_a_pass_resolves_the_open_finding(project):
    open_finding = finding(project)
    other = finding(project, "Uploads fail with PermissionError on Windows")
    later, messages = session_of(project, ("run", FAILING), ("edit", EDIT), ("run", PASSING))
    [fix] = fixes_in(messages)
    assert fix.errors == {"TimeoutError"} and fix.edited == ["src/auth/login.py"]
    assert resolve_fixed(later, messages) == 1
    open_finding.refresh_from_db()
    other.refresh_from_db()
    assert (open_finding.resolution, other.resolution) == ("resolved", "open")
    resolution = open_finding.details["resolution"]
    assert resolution["resolved_by"] == "auto-resolution"
    assert (
        later.public_id in resolution["action_taken"]
        and "src/auth/login.py" in resolution["action_taken"]
    )
    assert resolution["verification"] == PASSING
    evidence = MemoryEvidence.objects.get(memory=open_finding, session=later)
    assert evidence.message.seq == 2
    event = open_finding.history.last()
    assert (event.from_status, event.to_status, event.actor) == (
        "open",
        "resolved",
        "auto-resolution",
    )
    assert resolve_fixed(later, messages) == 0  # resolved once
    reopened = review.reopen(open_finding, reason="it came back")
    assert reopened.resolution == "open"


@pytest.mark.parametrize(
    "steps",
    [
        (("run", FAILING), ("run", PASSING)),  # no edit between
        (("edit", EDIT), ("run", FAILING), ("run", PASSING)),  # the edit came before the error
        (("run", FAILING), ("edit", EDIT), ("run", "2 passed, 1 failed")),  # still failing
        (("run", "KeyError: 'x'"), ("edit", EDIT), ("run", PASSING)),  # another error
    ],
)
def test_what_is_not_a_fix_resolves_nothing(project, steps):
    open_finding = finding(project)
    later, messages = session_of(project, *steps)
    assert resolve_fixed(later, messages) == 0
    open_finding.refresh_from_db()
    assert open_finding.resolution == "open"


def test_the_findings_own_session_does_not_resolve_it(project):
    session, messages = session_of(project, ("run", FAILING), ("edit", EDIT), ("run", PASSING))
    own = record(
        project,
        MemoryDraft(type="finding", content="Login times out with TimeoutError", session=session),
    ).memory
    assert resolve_fixed(session, messages) == 0
    own.refresh_from_db()
    assert own.resolution == "open"
