"""Big teams' own indexes (search/speed/team_indexes.py): which teams get them, that building is
idempotent, that a broken or orphaned index goes, and the command that runs it."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from search.speed import team_indexes
from tests.factories import ProjectFactory
from tests.search.corpus import build_team_indexes, capture, embed_all


@pytest.fixture(autouse=True)
def fresh_cache():
    team_indexes.forget()
    yield
    team_indexes.forget()


def index_names() -> set[str]:
    return set(team_indexes.existing())


@pytest.mark.django_db
def test_teams_over_the_threshold_get_all_three_indexes_once(settings):
    settings.TEAM_INDEX_MIN_MESSAGES = 5
    big, small = ProjectFactory(), ProjectFactory()
    capture(big, [("user", f"message {i} about the deploy") for i in range(6)])
    capture(small, [("user", "one message")])
    embed_all()

    built = build_team_indexes()

    team = big.team_id
    expected = {
        f"chunk_hnsw_team_{team}",
        f"message_search_gin_team_{team}",
        f"message_context_gin_team_{team}",
    }
    assert {c.index for c in built} == expected
    assert {c.action for c in built} == {"built"}
    assert index_names() == expected
    assert set(team_indexes.indexed_teams()) == {team}
    assert team_indexes.indexed_teams()[team] >= 1
    assert build_team_indexes() == []  # nothing left to do


@pytest.mark.django_db
def test_an_orphaned_index_is_dropped_and_an_incomplete_team_is_not_used(settings):
    settings.TEAM_INDEX_MIN_MESSAGES = 10**9  # no team is big: only the cleanup runs
    team = ProjectFactory().team_id
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE INDEX message_search_gin_team_987654 ON agent_sessions_message"
            " USING gin (search_vector) WHERE team_id = 987654"
        )
        cursor.execute(
            f"CREATE INDEX message_search_gin_team_{team} ON agent_sessions_message"
            f" USING gin (search_vector) WHERE team_id = {team}"
        )
    assert team_indexes.indexed_teams() == {}  # one of three: not used

    changes = build_team_indexes()

    assert [(c.index, c.action) for c in changes] == [("message_search_gin_team_987654", "dropped")]
    assert index_names() == {f"message_search_gin_team_{team}"}


@pytest.mark.django_db(transaction=True)
def test_the_command_builds_them_concurrently_and_lists_them(settings, capsys):
    settings.TEAM_INDEX_MIN_MESSAGES = 3
    project = ProjectFactory()
    capture(project, [("user", f"note {i}") for i in range(3)])
    embed_all()
    try:
        call_command("team_indexes")
        out = capsys.readouterr().out
        assert "teams of >= 3 messages: 1" in out
        assert f"built chunk_hnsw_team_{project.team_id}" in out
        call_command("team_indexes", "--list")
        listed = capsys.readouterr().out
        assert f"message_context_gin_team_{project.team_id}: valid" in listed
        call_command("team_indexes")
        assert "nothing to do" in capsys.readouterr().out
    finally:
        with connection.cursor() as cursor:
            for name in team_indexes.existing():
                cursor.execute(f'DROP INDEX "{name}"')
