"""The memory trash through the API: GET /memories/trash, POST /memories/{id}/restore and
POST /memories/delete (bulk, with a dry run), and their bad input: a restore after the
recovery deadline, an empty or inverted date range, a filter that matches everything
without "all", and another team's memories."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.forget import trash
from memories.models import Memory, MemoryStatus
from sessions.models import DeletionRecord
from tests.clients import client_for
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory
from tests.memories.conftest import ALL, decision, finding, token_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"


@pytest.fixture
def person(owner):
    return client_for(owner)


@pytest.fixture
def ids(agent):
    """A decision (topic auth, said in January) and a finding (topic mfa, in March)."""
    d = agent.post(
        URL, decision(topic="auth", occurred_at="2026-01-11T15:30:00Z"), format="json"
    ).json()["id"]
    f = agent.post(
        URL, finding(topic="mfa", occurred_at="2026-03-02T09:00:00Z"), format="json"
    ).json()["id"]
    return {"decision": d, "finding": f}


def status_of(project, public_id) -> str:
    return Memory.objects.get(project=project, public_id=public_id).status


def test_a_deleted_memory_is_listed_in_the_trash_with_its_deadline(person, ids, project, owner):
    assert person.delete(f"{URL}/{ids['decision']}?reason=outdated").status_code == 204
    body = person.get(f"{URL}/trash").json()
    [row] = body["results"]
    assert row["id"] == ids["decision"]
    assert (row["reason"], row["deleted_by"]) == ("outdated", owner.username)
    memory = Memory.objects.get(project=project, public_id=ids["decision"])
    deadline = memory.deleted_at + timedelta(days=project.trash_days)
    assert row["recovery_deadline"].replace("Z", "+00:00") == deadline.isoformat()
    assert "next" in body  # paginated like the other lists


def test_a_token_deletion_names_the_token(agent, ids):
    agent.delete(f"{URL}/{ids['finding']}?reason=dupe")
    [row] = agent.get(f"{URL}/trash").json()["results"]
    assert row["deleted_by"].startswith("token ")


def test_restore_brings_it_back_until_the_deadline(person, ids, project):
    person.delete(f"{URL}/{ids['decision']}?reason=outdated")
    assert person.post(f"{URL}/{ids['decision']}/restore").status_code == 200
    assert status_of(project, ids["decision"]) == MemoryStatus.ACTIVE
    assert person.get(f"{URL}/trash").json()["results"] == []


def test_restore_after_the_recovery_deadline_is_a_409_naming_it(person, ids, project):
    person.delete(f"{URL}/{ids['decision']}?reason=outdated")
    Memory.objects.filter(project=project, public_id=ids["decision"]).update(
        deleted_at=timezone.now() - timedelta(days=project.trash_days + 1)
    )
    response = person.post(f"{URL}/{ids['decision']}/restore")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "MEM_E007" and body["recovery_deadline"]
    assert "recovery deadline" in body["detail"]
    assert status_of(project, ids["decision"]) == MemoryStatus.DELETED


def test_another_teams_memory_is_a_404_and_never_in_the_trash(ids, outsider, project):
    stranger = client_for(outsider)
    Memory.objects.filter(project=project).update(
        status=MemoryStatus.DELETED, deleted_at=timezone.now(), delete_reason="x"
    )
    assert stranger.post(f"{URL}/{ids['decision']}/restore").status_code == 404
    assert stranger.get(f"{URL}/trash").json()["results"] == []
    body = stranger.post(f"{URL}/delete", {"all": True}, format="json").json()
    assert (body["memories"], body["already_in_trash"]) == (0, 0)


def test_a_dry_run_counts_shows_a_sample_and_changes_nothing(person, ids, project):
    response = person.post(f"{URL}/delete", {"topic": "auth"}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["dry_run"] is True and body["memories"] == 1
    assert [row["id"] for row in body["sample"]] == [ids["decision"]]
    assert body["limit"] == trash.MAX_BULK and body["records"] == []
    assert status_of(project, ids["decision"]) == MemoryStatus.ACTIVE
    assert not DeletionRecord.objects.exists()


def test_a_bulk_delete_by_date_range_moves_its_matches_and_leaves_a_record(person, ids, project):
    body = person.post(
        f"{URL}/delete",
        {
            "since": "2026-03-01T00:00:00Z",
            "until": "2026-04-01T00:00:00Z",
            "dry_run": False,
            "reason": "March was a test",
        },
        format="json",
    ).json()
    assert body["memories"] == 1 and len(body["records"]) == 1
    assert status_of(project, ids["finding"]) == MemoryStatus.DELETED
    assert status_of(project, ids["decision"]) == MemoryStatus.ACTIVE
    record = DeletionRecord.objects.get(pk=body["records"][0])
    assert record.memory_ids == [ids["finding"]] and record.reason == "March was a test"
    assert record.criteria["since"].startswith("2026-03-01")
    assert record.criteria["types"] == {"finding": 1}
    listed = person.get("/api/v1/deletions").json()["results"]
    assert listed[0]["scope"] == "memory" and listed[0]["memories"] == 1
    assert listed[0]["state"] == "in_trash"


@pytest.mark.parametrize(
    ("since", "until"),
    [
        ("2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"),  # empty
        ("2026-04-01T00:00:00Z", "2026-03-01T00:00:00Z"),  # inverted
    ],
)
def test_an_empty_or_inverted_range_is_a_400_naming_until(person, ids, since, until):
    response = person.post(f"{URL}/delete", {"since": since, "until": until}, format="json")
    assert response.status_code == 400
    assert "since" in response.json()["until"][0]


def test_a_filter_set_that_matches_everything_needs_all(person, ids, project):
    response = person.post(
        f"{URL}/delete", {"dry_run": False, "reason": "clean slate"}, format="json"
    )
    assert response.status_code == 400 and "all" in response.json()
    assert status_of(project, ids["decision"]) == MemoryStatus.ACTIVE
    also = person.post(f"{URL}/delete", {"project": str(project.pk)}, format="json")
    assert also.status_code == 400 and "all" in also.json()
    everything = person.post(f"{URL}/delete", {"all": True}, format="json").json()
    assert everything["memories"] == 2


def test_a_real_delete_needs_a_reason_and_unknown_fields_are_named(person, ids):
    response = person.post(f"{URL}/delete", {"topic": "auth", "dry_run": False}, format="json")
    assert response.status_code == 400 and "reason" in response.json()
    response = person.post(f"{URL}/delete", {"topics": "auth"}, format="json")
    assert response.status_code == 400 and "topics" in response.json()
    response = person.post(f"{URL}/delete", {"type": ["memo"]}, format="json")
    assert response.status_code == 400 and "type" in response.json()


def test_more_than_the_cap_is_refused_with_the_counts(person, ids, monkeypatch, project):
    monkeypatch.setattr(trash, "MAX_BULK", 1)
    response = person.post(
        f"{URL}/delete", {"all": True, "dry_run": False, "reason": "x"}, format="json"
    )
    assert response.status_code == 400 and response.json()["memories"] == 2
    assert not Memory.objects.filter(status=MemoryStatus.DELETED).exists()


def test_a_member_or_a_token_without_delete_may_not_bulk_delete(ids, teammate, project):
    refused = client_for(teammate).post(f"{URL}/delete", {"all": True}, format="json")
    assert refused.status_code == 403
    reader = token_client(project, "read", "write")
    assert reader.post(f"{URL}/delete", {"all": True}, format="json").status_code == 403
    assert (
        token_client(project, *ALL).post(f"{URL}/delete", {"all": True}, format="json").status_code
        == 200
    )


def test_a_named_project_limits_the_delete_to_it(person, ids, project, owner):
    other = ProjectFactory(team=project.team)
    agent = token_client(other, *ALL)
    theirs = agent.post(URL, decision(topic="auth"), format="json").json()["id"]
    body = person.post(
        f"{URL}/delete",
        {"project": str(other.pk), "topic": "auth", "dry_run": False, "reason": "x"},
        format="json",
    ).json()
    assert body["memories"] == 1
    assert status_of(other, theirs) == MemoryStatus.DELETED
    assert status_of(project, ids["decision"]) == MemoryStatus.ACTIVE


def test_another_teams_project_cannot_be_named(person, ids):
    foreign = ProjectFactory(team=TeamFactory())
    MembershipFactory(team=foreign.team)
    response = person.post(
        f"{URL}/delete", {"project": str(foreign.pk), "all": True}, format="json"
    )
    assert response.status_code in (400, 404)
