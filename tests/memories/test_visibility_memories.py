"""Memories follow visibility (issue 38, docs/visibility.md): a memory of a private session
is its owner's; a 'summary' one is the team's once accepted; a memory recorded on purpose
takes the request's visibility, else its session's, else the project's; its owner shares it
or takes it back; an admin may only make it less visible; a session's change carries its
memories along. Real PostgreSQL, through the REST API."""
# ruff: noqa: F811  (the people fixture, imported)

from __future__ import annotations

import pytest

from memories.capture.record import Evidence, MemoryDraft, link, record
from memories.models import Memory, MemoryStatus
from sessions import visibility as session_visibility
from teams.models import Visibility
from tests.factories import MessageFactory
from tests.memories.visibility_people import owned_session, people, reader  # noqa: F401

pytestmark = pytest.mark.django_db
URL = "/api/v1/memories"
EVERY_TEAMMATE = ["bob", "vera", "adam", "team_token"]


def recorded(project, content, session=None, **fields) -> Memory:
    return record(project, MemoryDraft("decision", content, session, **fields)).memory


def status_of(people, who: str, memory: Memory) -> int:
    return people.client(who).get(f"{URL}/{memory.public_id}").status_code


def ids_listed(people, who: str, **params) -> set[str]:
    body = people.client(who).get(URL, {"status": "all", **params}).json()
    return {m["id"] for m in body["results"]}


def test_a_memory_of_a_private_session_is_its_owners_alone(project, people):
    session = owned_session(project, people.alice, Visibility.PRIVATE)
    memory = recorded(project, "Move the cron job to Sunday", session)
    assert (memory.owner_id, memory.visibility) == (people.alice.pk, Visibility.PRIVATE)
    assert status_of(people, "alice", memory) == 200
    assert status_of(people, "alice_token", memory) == 200
    for who in EVERY_TEAMMATE:  # the admin too: an admin does not read private content
        assert status_of(people, who, memory) == 404, who
        assert memory.public_id not in ids_listed(people, who), who
        found = people.client(who).get(URL, {"q": "cron job Sunday"}).json()["results"]
        assert memory.public_id not in {m["id"] for m in found}, who
    body = people.client("alice").get(f"{URL}/{memory.public_id}").json()
    assert (body["owner"], body["visibility"]) == ("alice", "private")


def test_a_summary_memory_is_read_by_the_team_once_accepted_and_reviewed_by_its_owner(
    project, people
):
    session = owned_session(project, people.alice, Visibility.SUMMARY)
    memory = recorded(project, "Cache the tenant list for an hour", session)
    Memory.objects.filter(pk=memory.pk).update(status=MemoryStatus.PROPOSED)
    assert memory.visibility == Visibility.SUMMARY
    for who in EVERY_TEAMMATE:
        assert status_of(people, who, memory) == 404, who
        assert memory.public_id not in ids_listed(people, who, status="proposed"), who
    assert memory.public_id in ids_listed(people, "alice", status="proposed")
    refused = people.client("bob").post(f"{URL}/{memory.public_id}/accept")
    assert refused.status_code == 404
    accepted = people.client("alice").post(f"{URL}/{memory.public_id}/accept")
    assert accepted.status_code == 200 and accepted.json()["status"] == "active"
    for who in EVERY_TEAMMATE:
        assert status_of(people, who, memory) == 200, who


def test_a_recorded_memory_takes_the_asked_visibility_else_the_projects(project, people):
    alice = people.client("alice_token")
    asked = {"type": "fact", "content": "The VPN needs 2FA", "visibility": "private"}
    made = alice.post(URL, asked)
    assert made.status_code == 201, made.json()
    assert (made.json()["owner"], made.json()["visibility"]) == ("alice", "private")
    assert people.client("bob").get(f"{URL}/{made.json()['id']}").status_code == 404

    project.default_visibility = Visibility.PRIVATE
    project.save()
    by_default = alice.post(URL, {"type": "fact", "content": "Backups run at 02:00"}).json()
    assert (by_default["owner"], by_default["visibility"]) == ("alice", "private")
    # A team token reads as nobody: the project's 'private' makes its memory 'summary'.
    team = people.client("team_token").post(URL, {"type": "fact", "content": "Logs go to S3"})
    assert (team.json()["owner"], team.json()["visibility"]) == (None, "summary")


def test_a_memory_about_a_session_defaults_to_the_sessions_visibility(project, people):
    session = owned_session(project, people.alice, Visibility.PRIVATE)
    MessageFactory(session=session, seq=0, content="We pin numpy below 2.")
    body = {"type": "fact", "content": "numpy is pinned below 2", "session": session.public_id}
    made = people.client("alice").post(URL, {**body, "evidence": [0]})
    assert made.status_code == 201
    assert (made.json()["owner"], made.json()["visibility"]) == ("alice", "private")
    # Bob cannot name a session he does not read.
    assert people.client("bob").post(URL, body).status_code == 400


@pytest.mark.parametrize(
    ("who", "body", "field"),
    [
        ("alice", {"visibility": "secret"}, "visibility"),
        ("alice", {"visibility": ""}, "visibility"),
        ("team_token", {"visibility": "private"}, "visibility"),
    ],
)
def test_bad_visibility_on_record_is_a_400_naming_it_and_writes_nothing(
    project, people, who, body, field
):
    before = Memory.objects.count()
    answer = people.client(who).post(URL, {"type": "fact", "content": "A fact", **body})
    assert answer.status_code == 400 and field in answer.json(), answer.json()
    assert Memory.objects.count() == before


def test_a_visibility_the_project_forbids_is_a_400(project, people):
    project.allowed_visibilities = [Visibility.TEAM, Visibility.SUMMARY]
    project.save()
    answer = people.client("alice").post(
        URL, {"type": "fact", "content": "A fact", "visibility": "private"}
    )
    assert answer.status_code == 400 and "visibility" in answer.json()
    assert not Memory.objects.exists()


def test_the_owner_shares_a_memory_and_takes_it_back(project, people):
    memory = recorded(
        project, "Prefer pytest fixtures", owner_id=people.alice.pk, visibility="private"
    )
    alice = people.client("alice")
    shared = alice.patch(f"{URL}/{memory.public_id}", {"visibility": "team"}, format="json")
    assert shared.status_code == 200 and shared.json()["visibility"] == "team"
    assert status_of(people, "bob", memory) == 200
    back = alice.post(f"{URL}/{memory.public_id}/visibility", {"visibility": "private"})
    assert back.status_code == 200 and back.json()["visibility"] == "private"
    assert status_of(people, "bob", memory) == 404


def test_who_else_may_change_a_memorys_visibility(project, people):
    memory = recorded(project, "Ship on Tuesdays", owner_id=people.alice.pk, visibility="summary")
    url = f"{URL}/{memory.public_id}/visibility"
    # A viewer, or a member who does not own it, makes it no more visible: a 403.
    for who in ("vera", "bob"):
        answer = people.client(who).post(url, {"visibility": "team"})
        assert answer.status_code == 403 and "visibility" in answer.json(), who
    # An admin only makes it less visible.
    assert people.client("adam").post(url, {"visibility": "team"}).status_code == 403
    memory.refresh_from_db()
    assert memory.visibility == Visibility.SUMMARY
    assert people.client("adam").post(url, {"visibility": "private"}).status_code == 200
    memory.refresh_from_db()
    assert memory.visibility == Visibility.PRIVATE
    assert status_of(people, "adam", memory) == 404  # and then no longer reads it


def test_a_refused_visibility_in_a_patch_changes_nothing_else(project, people):
    memory = recorded(project, "Use tabs", owner_id=people.alice.pk, visibility="team")
    answer = people.client("bob").patch(
        f"{URL}/{memory.public_id}", {"visibility": "private", "topic": "style"}, format="json"
    )
    assert answer.status_code == 403 and "visibility" in answer.json()
    memory.refresh_from_db()
    assert (memory.visibility, memory.topic) == ("team", "")
    unknown = people.client("alice").patch(
        f"{URL}/{memory.public_id}", {"visibility": "nobody", "topic": "style"}, format="json"
    )
    assert unknown.status_code == 400 and "visibility" in unknown.json()
    memory.refresh_from_db()
    assert (memory.visibility, memory.topic) == ("team", "")


def test_a_team_memory_cannot_be_made_private(project, people):
    memory = recorded(project, "Deploy with Ansible", owner_id=None, visibility="team")
    answer = people.client("adam").post(
        f"{URL}/{memory.public_id}/visibility", {"visibility": "private"}
    )
    assert answer.status_code == 400 and "visibility" in answer.json()


def test_the_memories_of_a_session_follow_its_visibility(project, people):
    session = owned_session(project, people.alice, Visibility.TEAM)
    memory = recorded(project, "Rotate the API keys monthly", session)
    assert status_of(people, "bob", memory) == 200
    session_visibility.change(reader(people.alice), [session], Visibility.PRIVATE)
    memory.refresh_from_db()
    assert (memory.owner_id, memory.visibility) == (people.alice.pk, Visibility.PRIVATE)
    assert status_of(people, "bob", memory) == 404
    session_visibility.change(reader(people.alice), [session], Visibility.SUMMARY)
    memory.refresh_from_db()
    assert memory.visibility == Visibility.SUMMARY
    assert status_of(people, "bob", memory) == 200  # active: the team reads it


def test_one_audiences_memory_never_merges_into_anothers(project, people):
    private = recorded(
        project, "Use Postgres 16 everywhere", owner_id=people.alice.pk, visibility="private"
    )
    answer = people.client("bob").post(
        URL, {"type": "decision", "content": "Use Postgres 16 everywhere", "visibility": "team"}
    )
    assert answer.status_code == 201 and answer.json()["outcome"] == "created"
    assert answer.json()["id"] != private.public_id
    private.refresh_from_db()
    assert private.status == MemoryStatus.ACTIVE  # not superseded by the team's either


def test_evidence_and_links_show_only_what_the_reader_reads(project, people):
    session = owned_session(project, people.alice, Visibility.PRIVATE)
    message = MessageFactory(session=session, seq=0, content="Secret: we use port 8443")
    shared = record(
        project,
        MemoryDraft(
            "fact",
            "The admin UI listens on 8443",
            session,
            evidence=[Evidence(message, "port 8443")],
        ),
    ).memory
    hidden = recorded(project, "Alice's aside", owner_id=people.alice.pk, visibility="private")
    link(shared, hidden, "relates_to")
    people.client("alice").post(f"{URL}/{shared.public_id}/visibility", {"visibility": "team"})
    as_bob = people.client("bob").get(f"{URL}/{shared.public_id}").json()
    assert as_bob["evidence"] == [] and as_bob["links"] == []
    as_alice = people.client("alice").get(f"{URL}/{shared.public_id}").json()
    assert [e["quote"] for e in as_alice["evidence"]] == ["port 8443"]
    assert [link["memory"] for link in as_alice["links"]] == [hidden.public_id]


def test_the_memory_export_holds_only_what_the_caller_reads(project, people):
    recorded(project, "Team decision on logging", owner_id=None, visibility="team")
    recorded(project, "Alice's private plan", owner_id=people.alice.pk, visibility="private")
    params = {"project": str(project.pk), "format": "yaml"}
    as_bob = people.client("bob").get(f"{URL}/export", params).content.decode()
    as_alice = people.client("alice").get(f"{URL}/export", params).content.decode()
    assert "Team decision on logging" in as_bob and "Alice's private plan" not in as_bob
    assert "Alice's private plan" in as_alice


def test_imported_memory_files_are_the_importers(project, people):
    files = b"decisions:\n- decision: Keep the monorepo\n"
    answer = people.client("alice_token").post(
        f"{URL}/import", files, content_type="application/yaml"
    )
    assert answer.status_code == 201, answer.json()
    memory = Memory.objects.get(content="Keep the monorepo")
    assert memory.owner_id == people.alice.pk and memory.visibility == project.default_visibility


def test_a_memory_listing_narrows_by_visibility(project, people):
    mine = recorded(project, "Mine alone", owner_id=people.alice.pk, visibility="private")
    recorded(project, "Everyone's", owner_id=None, visibility="team")
    assert ids_listed(people, "alice", visibility="private") == {mine.public_id}
    assert ids_listed(people, "bob", visibility="private") == set()
    bad = people.client("alice").get(URL, {"visibility": "secret"})
    assert bad.status_code == 400 and "visibility" in bad.json()


def test_a_shared_memory_does_not_name_its_private_session(project, people):
    session = owned_session(project, people.alice, Visibility.PRIVATE)
    memory = recorded(project, "Keep the staging DB small", session)
    people.client("alice").post(f"{URL}/{memory.public_id}/visibility", {"visibility": "team"})
    as_bob = people.client("bob").get(f"{URL}/{memory.public_id}").json()
    assert as_bob["session"] is None
    listed = people.client("bob").get(URL).json()["results"]
    assert [m["session"] for m in listed if m["id"] == memory.public_id] == [None]
    as_alice = people.client("alice").get(f"{URL}/{memory.public_id}").json()
    assert as_alice["session"] == session.public_id
