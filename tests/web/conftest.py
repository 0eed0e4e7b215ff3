"""Fixtures of the browser UI's tests: a team with a project and a few sessions, people of
each role, and a second team that must never see any of it."""

from __future__ import annotations

import pytest
from django.test import Client

from teams.models import Role
from tests.factories import (
    MembershipFactory,
    MessageFactory,
    ProjectFactory,
    SessionFactory,
    TeamFactory,
)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def team_session(project):
    session = SessionFactory(project=project, title="Fix the login redirect", topics=["auth"])
    MessageFactory(session=session, seq=0, role="user", content="Why does login redirect?")
    MessageFactory(
        session=session,
        seq=1,
        role="assistant",
        content="Because of `LOGIN_URL`.\n\n```python\nLOGIN_URL = 'login'\n```",
    )
    MessageFactory(
        session=session,
        seq=2,
        role="assistant",
        content='{"command": "pytest -q"}',
        tool_name="Bash",
        tool_call_id="call-1",
    )
    MessageFactory(session=session, seq=3, role="tool", content="3 passed", tool_call_id="call-1")
    session.message_count = 4
    session.save(update_fields=["message_count"])
    return session


@pytest.fixture
def member(team):
    return MembershipFactory(team=team, role=Role.MEMBER).user


@pytest.fixture
def viewer(team):
    return MembershipFactory(team=team, role=Role.VIEWER).user


@pytest.fixture
def admin(team):
    return MembershipFactory(team=team, role=Role.ADMIN).user


@pytest.fixture
def member_client(member) -> Client:
    return client_for(member)


@pytest.fixture
def viewer_client(viewer) -> Client:
    return client_for(viewer)


@pytest.fixture
def admin_client(admin) -> Client:
    return client_for(admin)


@pytest.fixture
def other_team_session(db):
    """A session of another team, with an admin of that team."""
    other = TeamFactory()
    session = SessionFactory(project=ProjectFactory(team=other), title="Secret plans")
    MessageFactory(session=session, seq=0, content="the launch code is 0000")
    return session


@pytest.fixture
def outsider_client(outsider) -> Client:
    return client_for(outsider)
