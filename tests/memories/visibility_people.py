"""The people of the visibility tests of memories, diaries, exports and MCP: in one team,
alice and bob (members), vera (a viewer) and adam (an admin); a token acting for alice,
and a team token acting for nobody. ``reader(user)`` is the ``Access`` a signed-in user
has, as a view builds it."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from teams.access import Access
from teams.models import ApiToken, Role, TokenPermission
from tests.clients import client_for
from tests.factories import MembershipFactory, SessionFactory

ALL = [TokenPermission.READ, TokenPermission.WRITE, TokenPermission.DELETE]


@dataclass
class People:
    alice: object
    bob: object
    vera: object
    adam: object
    alice_token: str
    team_token: str

    def client(self, name: str):
        """An API client of ``name`` (a person, or a token) that sends JSON."""
        if name.endswith("_token"):
            client = client_for(token=getattr(self, name))
        else:
            client = client_for(getattr(self, name))
        client.default_format = "json"
        return client


def reader(user) -> Access:
    return Access.for_request(SimpleNamespace(user=user))


@pytest.fixture
def people(team, project) -> People:
    def member(name, role):
        return MembershipFactory(team=team, role=role, user__username=name).user

    alice = member("alice", Role.MEMBER)
    return People(
        alice=alice,
        bob=member("bob", Role.MEMBER),
        vera=member("vera", Role.VIEWER),
        adam=member("adam", Role.ADMIN),
        alice_token=ApiToken.issue(project, name="a", permissions=ALL, person=alice)[1],
        team_token=ApiToken.issue(project, name="t", permissions=ALL)[1],
    )


def owned_session(project, owner, visibility, **fields):
    """A session of ``project`` owned by ``owner`` (None: the team's) at ``visibility``."""
    return SessionFactory(project=project, owner=owner, visibility=visibility, **fields)
