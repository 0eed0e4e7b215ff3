"""E-mail addresses and phone numbers redacted at capture, each behind its project switch."""

from __future__ import annotations

import pytest

from sessions.capture.personal_data import find_emails, find_ips, find_phones
from sessions.capture.redaction import RedactionPolicy
from sessions.capture.service import capture_session
from tests.factories import ProjectFactory
from transcripts.base import ParsedMessage, ParsedSession

TEXT = "Reach me at ana.lima@example.com or +1 202 456 1111. Key sk-ant-abcdefghijklmnopqrstuvwxyz"


@pytest.mark.parametrize(
    ("emails", "phones", "expected"),
    [
        (False, False, "Reach me at ana.lima@example.com or +1 202 456 1111."),
        (True, False, "Reach me at [REDACTED:email] or +1 202 456 1111."),
        (False, True, "Reach me at ana.lima@example.com or [REDACTED:phone]."),
        (True, True, "Reach me at [REDACTED:email] or [REDACTED:phone]."),
    ],
)
@pytest.mark.django_db
def test_each_switch_of_the_project(emails, phones, expected):
    project = ProjectFactory(redact_emails=emails, redact_phones=phones)
    parsed = ParsedSession(
        source_format="api",
        messages=[ParsedMessage(role="user", content=TEXT, metadata={"contact": TEXT})],
    )
    message = capture_session(project, parsed).session.messages.get()
    assert message.content == expected + " Key [REDACTED:anthropic_key]"
    assert message.metadata["contact"] == message.content
    assert message.metadata["redactions"] == 2 * (1 + emails + phones)


def test_switches_work_without_secret_redaction():
    policy = RedactionPolicy(secrets=False, emails=True, phones=True)
    text, count = policy.text(TEXT)
    assert text.endswith("Key sk-ant-abcdefghijklmnopqrstuvwxyz") and count == 2
    assert not RedactionPolicy(secrets=False)


@pytest.mark.parametrize(
    "text",
    [
        "released 2024-01-15 12:30:45 as v1.2.3.4",
        "build 1772743184.9849733250 took 12.5s",
        "commit 3f9a1c2d4b5e6f7a8b9c0d1e2f3a4b5c6d7e8f90",
        "id 550e8400-e29b-41d4-a716-446655440000 and order #2024011512",
        "/home/ana/.cache/2026/03/05/2024561111.json",
        "pip install pkg@1.2.3 and git@github.com:org/repo.git",
        "ports 8000-8080, pid 4561111, 3.14159265358979",
    ],
)
def test_versions_dates_ids_hashes_and_paths_are_not_contact_data(text):
    assert find_phones(text) == [] and find_emails(text) == []


def test_ips_are_checked_and_loopback_stays():
    found = find_ips("from 203.0.113.9 via 2001:db8::1, not 127.0.0.1, ::1, 999.1.1.1 or 12:30:45")
    assert [f.value for f in found] == ["203.0.113.9", "2001:db8::1"]


def test_real_transcripts_hold_almost_no_phone_numbers(shared_dir):
    """The samples are real agent sessions: code, logs, timestamps, ids, hashes. None of what
    they hold is a phone number, so every number found there is a false positive."""
    samples = [p for p in (shared_dir / "samples").rglob("*") if p.is_file()]
    assert len(samples) >= 5
    found = [
        (path.name, text[f.start : f.end])
        for path in samples
        for text in [path.read_text(errors="replace")]
        for f in find_phones(text)
    ]
    assert found == []
    # The e-mail addresses there are the airline benchmark's customers, all at example.com.
    emails = {
        text[f.start : f.end]
        for path in samples
        for text in [path.read_text(errors="replace")]
        for f in find_emails(text)
    }
    assert emails and all(e.endswith("@example.com") for e in emails)
