"""Fixtures for the memories API: agents' tokens of ``project`` and people of its team."""

from __future__ import annotations

import pytest

from teams.models import ApiToken, TokenPermission
from tests.clients import client_for
from tests.factories import MessageFactory, SessionFactory

ALL = [TokenPermission.READ, TokenPermission.WRITE, TokenPermission.DELETE]


def token_client(project, *permissions):
    return client_for(token=ApiToken.issue(project, name="t", permissions=permissions)[1])


@pytest.fixture
def agent(project):
    """An agent with a read/write/delete token of ``project``."""
    return token_client(project, *ALL)


@pytest.fixture
def session(project):
    """A session of ``project`` with three messages (seq 0..2)."""
    session = SessionFactory(project=project, public_id="2026-01-11-architect-abc123")
    for seq, text in enumerate(
        [
            "How should we authenticate the API?",
            "Let's use OAuth 2.0 with JWT tokens: industry standard, good library support.",
            "Agreed.",
        ]
    ):
        MessageFactory(session=session, seq=seq, content=text)
    return session


def decision(**fields) -> dict:
    return {
        "type": "decision",
        "content": "Use OAuth 2.0 with JWT tokens for authentication",
        "rationale": "Industry standard, good library support, supports SSO future",
        "alternatives_considered": [
            {"option": "Session cookies", "rejected_because": "Not suitable for API auth"}
        ],
        "agreed_by": ["bmad-master", "veritas"],
        "confidence": "high",
        "reversible": False,
        "implementation_impact": "high",
        "tags": ["architecture", "security", "authentication"],
        "agent": "architect",
        **fields,
    }


def finding(**fields) -> dict:
    return {
        "type": "finding",
        "content": "No MFA requirement specified in authentication section",
        "severity": "critical",
        "category": "missing_requirement",
        "location": {
            "artifact": "/docs/requirements.md",
            "section": "3.2",
            "line_numbers": [45, 60],
        },
        "impact": "Admin accounts could be compromised with a single factor",
        "root_cause": "Requirements template had no MFA item",
        "tags": ["security", "mfa"],
        "agent": "veritas",
        **fields,
    }


def preference(**fields) -> dict:
    return {
        "type": "preference",
        "content": "MFA required for admin users, optional for customers",
        "category": "policy",
        "topic": "mfa_requirements",
        "confidence": "explicit",
        "source": "user_statement",
        "applies_to": {"projects": ["e-commerce-platform"], "domains": ["authentication"]},
        **fields,
    }
