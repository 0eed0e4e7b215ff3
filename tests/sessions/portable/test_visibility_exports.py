"""Exports and project archives follow visibility (issue 38, docs/visibility.md): a session
export needs its content (404 otherwise, an admin included) and holds only the memories its
reader reads; a project archive an admin downloads holds what that admin reads (the team's
sessions and their own, never a teammate's 'summary' or 'private' one, nor a private memory
or diary entry); the server's own archive holds everything and names each session's owner
and visibility, which an import keeps (a private session never becomes the team's); an
imported session export is the importer's. Real PostgreSQL."""
# ruff: noqa: F811  (the people fixture, imported)

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.test import Client

from memories.capture.record import MemoryDraft, record
from memories.diary.distill import distill_day
from memories.diary.models import DiaryEntry
from sessions.models import Session
from sessions.portable.export import write_archive
from sessions.portable.load import import_archive
from teams.models import Role, Visibility
from tests.factories import MembershipFactory, MessageFactory, ProjectFactory, TeamFactory
from tests.memories.visibility_people import owned_session, people, reader  # noqa: F401

pytestmark = pytest.mark.django_db
DAY_AT = "2026-01-11T09:00:00Z"


@pytest.fixture
def sessions(project, people):
    """One session of each kind in ``project``: alice's private, summary and team ones, the
    team's own, and adam's private one; each with a message and a memory."""
    made = {
        "alice_private": owned_session(project, people.alice, Visibility.PRIVATE),
        "alice_summary": owned_session(project, people.alice, Visibility.SUMMARY),
        "alice_team": owned_session(project, people.alice, Visibility.TEAM),
        "the_teams": owned_session(project, None, Visibility.TEAM),
        "adam_private": owned_session(project, people.adam, Visibility.PRIVATE),
    }
    for name, session in made.items():
        Session.objects.filter(pk=session.pk).update(user_name="sam", agent_name=name[:20])
        MessageFactory(session=session, seq=0, content=f"message of {name}")
        record(project, MemoryDraft("fact", f"memory of {name}", session, agent=name[:20]))
    # Alice keeps one memory of her team session to herself.
    record(
        project,
        MemoryDraft(
            "fact",
            "alice's own note",
            made["alice_team"],
            owner_id=people.alice.pk,
            visibility=Visibility.PRIVATE,
        ),
    )
    return made


def export_of(people, who: str, session: Session):
    return people.client(who).get(f"/api/v1/sessions/{session.public_id}/export?format=json")


def test_a_session_export_needs_its_content(sessions, people):
    private = sessions["alice_private"]
    assert export_of(people, "alice", private).status_code == 200
    assert export_of(people, "alice_token", private).status_code == 200
    for who in ("bob", "vera", "adam", "team_token"):
        assert export_of(people, who, private).status_code == 404, who
        assert export_of(people, who, sessions["alice_summary"]).status_code == 404, who


def test_the_pages_export_refuses_an_admin_a_private_session(sessions, people):
    browser = Client()
    browser.force_login(people.adam)
    answer = browser.get(f"/sessions/{sessions['alice_private'].public_id}/export?format=json")
    assert answer.status_code == 404


def test_a_session_export_holds_only_the_memories_its_reader_reads(sessions, people):
    def body(who):
        answer = export_of(people, who, sessions["alice_team"])
        assert answer.status_code == 200
        return b"".join(answer.streaming_content).decode()

    as_bob, as_alice = body("bob"), body("alice")
    assert "memory of alice_team" in as_bob and "alice's own note" not in as_bob
    assert "alice's own note" in as_alice


def archive_of(project, path, access=None) -> dict:
    write_archive(project, path, access=access)
    with zipfile.ZipFile(path) as archive:
        lines = [json.loads(line) for line in archive.read("sessions.jsonl").splitlines()]
        sections = {
            name: archive.read(name).decode()
            for name in archive.namelist()
            if name.startswith("sections/")
        }
    heads = {line["agent_name"]: line for line in lines if line["type"] == "session"}
    return {"sessions": heads, "text": json.dumps(lines), "sections": sections}


def test_an_admins_archive_holds_what_the_admin_reads(project, sessions, people, tmp_path):
    record(project, MemoryDraft("fact", "loose private note", owner_id=people.alice.pk,
                                visibility=Visibility.PRIVATE))  # fmt: skip
    record(project, MemoryDraft("fact", "loose team note", owner_id=None, visibility="team"))
    distill_day(sessions["alice_private"].started_at.date())
    assert DiaryEntry.objects.filter(owner=people.alice).exists()

    got = archive_of(project, tmp_path / "a.zip", reader(people.adam))
    assert set(got["sessions"]) == {"alice_team", "the_teams", "adam_private"}
    assert "message of alice_private" not in got["text"]
    assert "message of alice_summary" not in got["text"]
    assert "alice's own note" not in got["text"]
    sections = "".join(got["sections"].values())
    assert "loose team note" in sections and "loose private note" not in sections
    assert "message of alice_private" not in sections
    diary = [json.loads(line) for line in got["sections"]["sections/diary.jsonl"].splitlines()]
    assert diary and all(entry["owner"] in (None, "adam") for entry in diary)


def test_the_servers_archive_keeps_ownership_across_a_move(project, sessions, people, tmp_path):
    got = archive_of(project, tmp_path / "all.zip")
    assert set(got["sessions"]) == set(sessions)
    private = got["sessions"]["alice_private"]
    assert (private["owner"], private["visibility"]) == ("alice", "private")
    assert got["sessions"]["the_teams"]["owner"] is None

    # Into a team where alice is a member: hers again, private again.
    there = TeamFactory()
    MembershipFactory(team=there, user=people.alice, role=Role.MEMBER)
    target = ProjectFactory(team=there)
    import_archive(tmp_path / "all.zip", target, settings=False)
    moved = {s.agent_name: s for s in Session.objects.filter(project=target)}
    assert (moved["alice_private"].owner_id, moved["alice_private"].visibility) == (
        people.alice.pk,
        Visibility.PRIVATE,
    )
    assert (moved["the_teams"].owner_id, moved["the_teams"].visibility) == (None, "team")

    # Into a team where nobody is alice: still private, nobody's (never the team's).
    elsewhere = ProjectFactory(team=TeamFactory())
    import_archive(tmp_path / "all.zip", elsewhere, settings=False)
    stray = Session.objects.get(project=elsewhere, agent_name="alice_private")
    assert (stray.owner_id, stray.visibility) == (None, Visibility.PRIVATE)


def test_an_archive_from_before_visibility_is_the_importers(project, people, tmp_path):
    session = owned_session(project, None, Visibility.TEAM)
    MessageFactory(session=session, seq=0, content="old message")
    old = tmp_path / "old.zip"
    write_archive(project, old)
    # As an archive written before visibility: no owner, no visibility on its lines.
    stripped = tmp_path / "stripped.zip"
    with zipfile.ZipFile(old) as source, zipfile.ZipFile(stripped, "w") as copy:
        for name in source.namelist():
            data = source.read(name)
            if name == "sessions.jsonl":
                lines = [json.loads(line) for line in data.splitlines()]
                for line in lines:
                    line.pop("owner", None), line.pop("visibility", None)
                data = "".join(json.dumps(line) + "\n" for line in lines).encode()
            copy.writestr(name, data)
    _refresh_manifest(stripped)
    target = ProjectFactory(team=project.team, default_visibility=Visibility.PRIVATE)
    import_archive(stripped, target, settings=False, access=reader(people.adam))
    imported = Session.objects.get(project=target)
    assert (imported.owner_id, imported.visibility) == (people.adam.pk, Visibility.PRIVATE)


def _refresh_manifest(path) -> None:
    """Write the manifest of ``path`` again for its changed members (sizes, checksums)."""
    from sessions.portable.manifest import Member, manifest

    with zipfile.ZipFile(path) as archive:
        old = json.loads(archive.read("manifest.json"))
        members = {n: archive.read(n) for n in archive.namelist() if n != "manifest.json"}
    listed = []
    for name, data in members.items():
        member = Member(name)
        for line in data.splitlines(keepends=True) if name.endswith(".jsonl") else [data]:
            member.add(line)
        listed.append(member)
    body = manifest(
        listed,
        created_at=old.get("created_at", ""),
        source=old.get("source", {}),
        counts=old.get("counts", {}),
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr("manifest.json", body)
    path.write_bytes(buffer.getvalue())


def test_an_imported_session_export_is_the_importers(project, sessions, people):
    exported = export_of(people, "alice", sessions["the_teams"])
    body = b"".join(exported.streaming_content)
    other = ProjectFactory(team=project.team)
    answer = people.client("alice").post(
        f"/api/v1/import?format=memoryapp&project={other.pk}",
        body,
        content_type="application/octet-stream",
    )
    assert answer.status_code in (200, 201), answer.content
    imported = Session.objects.get(project=other)
    assert imported.owner_id == people.alice.pk
    assert imported.visibility == other.default_visibility
