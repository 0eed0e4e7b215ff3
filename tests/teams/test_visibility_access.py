"""The visibility rule (docs/visibility.md) as ``Access`` writes it: in the ORM (``scope``,
``readable``), in SQL for search (``visibility_sql``) and for one row (``reading``). The
three must agree for any caller and any session, or search would show what a list hides."""

from types import SimpleNamespace

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.models import Session
from teams.access import Access, Reading, TokenPrincipal
from teams.models import ApiToken, Role, Visibility
from tests.factories import MembershipFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


def access_of(user) -> Access:
    return Access.for_request(SimpleNamespace(user=user))


@pytest.fixture
def people(team):
    return {
        role: MembershipFactory(team=team, role=role).user
        for role in (Role.VIEWER, Role.MEMBER, Role.ADMIN)
    }


def sessions_of(owner, project):
    return {v: SessionFactory(project=project, owner=owner, visibility=v) for v in Visibility}


def test_the_owner_reads_all_of_their_sessions(project, people):
    mine = sessions_of(people[Role.MEMBER], project)
    access = access_of(people[Role.MEMBER])
    for reading in Reading:
        assert set(access.scope(Session.objects.all(), reading=reading)) == set(mine.values())
    assert {access.reading(s) for s in mine.values()} == {Reading.CONTENT}


def test_a_teammate_reads_team_sessions_and_the_summary_of_summary_ones(project, people):
    theirs = sessions_of(people[Role.MEMBER], project)
    for role in (Role.VIEWER, Role.ADMIN):
        access = access_of(people[role])
        content = set(access.scope(Session.objects.all()))
        summary = set(access.scope(Session.objects.all(), reading=Reading.SUMMARY))
        assert content == {theirs[Visibility.TEAM]}
        assert summary == {theirs[Visibility.TEAM], theirs[Visibility.SUMMARY]}
        assert access.reading(theirs[Visibility.SUMMARY]) == Reading.SUMMARY
        assert access.reading(theirs[Visibility.PRIVATE]) == Reading.LISTED


def test_only_admins_list_a_teammates_private_session(project, people):
    private = SessionFactory(project=project, owner=people[Role.MEMBER], visibility="private")
    listed = {
        role: private in access_of(user).scope(Session.objects.all(), reading=Reading.LISTED)
        for role, user in people.items()
        if user != private.owner
    }
    assert listed == {Role.VIEWER: False, Role.ADMIN: True}


def test_a_token_reads_as_the_person_it_acts_for_and_a_team_token_as_nobody(project, people):
    member = people[Role.MEMBER]
    private = SessionFactory(project=project, owner=member, visibility="private")
    theirs, _ = ApiToken.issue(project, person=member)
    team_token, _ = ApiToken.issue(project)
    assert private in access_of(TokenPrincipal(theirs)).scope(Session.objects.all())
    assert private not in access_of(TokenPrincipal(team_token)).scope(Session.objects.all())
    # A token with the delete permission stands for an admin: it lists, it does not read.
    deleting, _ = ApiToken.issue(project, permissions=["read", "write", "delete"])
    admin_like = access_of(TokenPrincipal(deleting))
    assert private in admin_like.scope(Session.objects.all(), reading=Reading.LISTED)
    assert private not in admin_like.scope(Session.objects.all())


def test_another_teams_admin_sees_nothing(project, people, outsider):
    sessions_of(people[Role.MEMBER], project)
    access = access_of(outsider)
    assert not access.scope(Session.objects.all(), reading=Reading.LISTED).exists()


def sql_ids(access: Access, reading: Reading) -> set[int]:
    condition, params = access.visibility_sql("s", reading)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT s.id FROM agent_sessions_session s WHERE s.team_id = ANY(%s) AND {condition}",
            [list(access.team_ids), *params],
        )
        return {row[0] for row in cursor.fetchall()}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(list(Visibility)), st.integers(min_value=0, max_value=3)),
        min_size=1,
        max_size=12,
    ),
    caller=st.integers(min_value=0, max_value=4),
)
def test_search_sql_reads_exactly_what_the_orm_scope_reads(team, people, rows, caller):
    """For random sessions (visibility, owner: one of three people or the team) and a random
    caller (one of the people, a token for one, or a team token), the SQL rule search uses
    selects the same sessions as the ORM scope, and ``reading`` of each row agrees."""
    project = ProjectFactory(team=team)
    owners = [*people.values(), None]
    Session.objects.filter(team=team).delete()
    for visibility, owner in rows:
        if owners[owner] is None and visibility == Visibility.PRIVATE:
            visibility = Visibility.SUMMARY  # a team session is never private
        SessionFactory(project=project, owner=owners[owner], visibility=visibility)
    if caller < 3:
        access = access_of(list(people.values())[caller])
    else:
        person = people[Role.MEMBER] if caller == 3 else None
        token, _ = ApiToken.issue(project, person=person)
        access = access_of(TokenPrincipal(token))
    for reading in (Reading.CONTENT, Reading.SUMMARY):
        orm = set(access.scope(Session.objects.all(), reading=reading).values_list("id", flat=True))
        assert sql_ids(access, reading) == orm
        for session in Session.objects.filter(team=team):
            readable = access.reading(session) in (
                (Reading.CONTENT,) if reading == Reading.CONTENT else (Reading.CONTENT, reading)
            )
            assert readable == (session.id in orm), (session.visibility, session.owner_id)
