"""The dashboard and the people list under per-session visibility (docs/visibility.md): a
teammate's private session is neither counted, listed nor mined for entities or people;
the team's admins count and list it (title, size) but never see what it holds; its owner
sees all of it."""

from __future__ import annotations

import pytest

from teams.models import Role, Visibility
from tests.factories import EntityFactory, MembershipFactory, SessionFactory
from tests.web.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def private(project, member):
    """``member``'s private session, with an entity and a person of its own."""
    session = SessionFactory(
        project=project,
        owner=member,
        visibility=Visibility.PRIVATE,
        title="Salary talk notes",
        user_name="secret.person",
        message_count=7,
        size_bytes=4096,
    )
    EntityFactory(session=session, value="src/payroll_secret.py")
    return session


@pytest.fixture
def teammate_client(team):
    return client_for(MembershipFactory(team=team, role=Role.MEMBER).user)


@pytest.fixture
def shared(project):
    session = SessionFactory(
        project=project, title="Fix the login redirect", user_name="kate", message_count=3
    )
    EntityFactory(session=session, value="src/auth.py")
    return session


def dashboard(client) -> dict:
    response = client.get("/")
    assert response.status_code == 200
    return response.context


def entity_values(context) -> set[str]:
    return {e["normalized"] for e in context["entities"]}


def test_a_teammate_neither_counts_nor_lists_nor_mines_a_private_session(
    teammate_client, private, shared
):
    context = dashboard(teammate_client)
    assert context["totals"]["sessions"] == 1
    assert context["totals"]["messages"] == 3
    assert [s.pk for s in context["recent"]] == [shared.pk]
    assert entity_values(context) == {"src/auth.py"}
    assert context["activity"]["sessions"]["total"] == 1
    assert sum(row["count"] for row in context["lifecycle"]) == 1
    assert b"Salary talk" not in teammate_client.get("/").content


def test_an_admin_counts_and_lists_it_but_never_sees_its_entities(admin_client, private, shared):
    context = dashboard(admin_client)
    assert context["totals"]["sessions"] == 2
    assert context["totals"]["messages"] == 10
    assert {s.pk for s in context["recent"]} == {shared.pk, private.pk}
    assert entity_values(context) == {"src/auth.py"}
    assert sum(row["count"] for row in context["lifecycle"]) == 2


def test_its_owner_sees_all_of_it(member_client, private, shared):
    context = dashboard(member_client)
    assert context["totals"]["sessions"] == 2
    assert entity_values(context) == {"src/auth.py", "src/payroll_secret.py"}


def test_the_people_list_shows_no_one_known_only_from_a_private_session(
    teammate_client, admin_client, member_client, private, shared
):
    def people(client) -> set[str]:
        response = client.get("/people")
        assert response.status_code == 200
        return {p["user_name"] for p in response.context["people"]}

    assert people(teammate_client) == people(admin_client) == {"kate"}
    assert people(member_client) == {"kate", "secret.person"}
