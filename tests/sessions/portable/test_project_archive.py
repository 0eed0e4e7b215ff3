"""`manage.py export_project` / `import_project`: a whole project (settings, sessions,
messages, memories and their links) into another team and back equal; idempotent; a
damaged or unknown archive refused before anything is written. Real PostgreSQL, the real
embedding model for memory import."""

from __future__ import annotations

import json
import zipfile
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from memories.capture.record import Evidence, MemoryDraft, link, record
from memories.models import Memory, MemoryLink
from sessions.capture.service import capture_session
from sessions.models import Message, Session
from teams.models import Project
from tests.factories import ProjectFactory, TeamFactory
from tests.sessions.portable.test_export_roundtrip import comparable
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db
VECTOR = np.ones(384, dtype=np.float32) / np.sqrt(384)


def run(command: str, *args) -> str:
    out = StringIO()
    call_command(command, *map(str, args), stdout=out)
    return out.getvalue()


@pytest.fixture
def source():
    project = ProjectFactory(slug="web", retention_days=45, redact_emails=True)
    sessions = []
    for n in range(3):
        parsed = ParsedSession(
            source_format="claude_code",
            agent_name="architect",
            external_id="" if n == 0 else f"ext-{n}",
            topics=["auth"],
            metadata={"cwd": "/home/me/web", "n": n},
            messages=[
                ParsedMessage("user", f"question {n} 🔐", author="alice", client_id=f"q{n}"),
                ParsedMessage(
                    "assistant", '{"command": "ls"}', tool_name="bash", tool_call_id=f"t{n}"
                ),
                ParsedMessage("tool", "README.md\n", tool_name="bash", tool_call_id=f"t{n}"),
            ],
        )
        sessions.append(capture_session(project, parsed).session)
    turns = Message.objects.filter(session=sessions[1]).order_by("seq")
    decision = record(
        project,
        MemoryDraft(
            type="decision",
            content="Use MFA for admins",
            session=sessions[1],
            evidence=[Evidence(turns[0])],
            embedding=VECTOR,
            reconcile=False,
        ),
    ).memory
    loose = record(
        project,
        MemoryDraft(type="preference", content="Prefers short answers", embedding=VECTOR),
    ).memory
    finding = record(
        project,
        MemoryDraft(
            type="finding",
            content="No TLS on staging",
            session=sessions[2],
            embedding=VECTOR,
            reconcile=False,
        ),
    ).memory
    link(finding, decision, "relates_to")  # across sessions
    link(loose, decision, "influenced")
    return project


def memories(project) -> tuple[set, set]:
    rows = set(
        Memory.objects.filter(project=project).values_list(
            "public_id", "type", "content", "session__external_id"
        )
    )
    links = set(
        MemoryLink.objects.filter(source__project=project).values_list(
            "source__public_id", "kind", "target__public_id"
        )
    )
    return rows, links


def sessions_of(project) -> list:
    return sorted(
        (comparable(s) for s in Session.objects.filter(project=project)),
        key=lambda c: json.dumps(c, default=str, sort_keys=True),
    )


def test_a_project_moves_to_another_team_whole_and_twice_is_idempotent(source, tmp_path):
    archive = tmp_path / "web.zip"
    out = run("export_project", archive, "--team", source.team.slug, "--project", "web")
    assert "sessions" in out and "9" in out  # 3 sessions, 9 messages
    other = TeamFactory(slug="other")
    out = run("import_project", archive, "--team", "other", "--project", "copy")
    target = Project.objects.get(team=other, slug="copy")
    assert "sessions created" in out and "settings: the archive's applied" in out
    assert (target.retention_days, target.redact_emails) == (45, True)
    assert sessions_of(target) == sessions_of(source)
    # New ids here; the session without an external id is found again by its old public id.
    old_ids = set(Session.objects.filter(project=source).values_list("public_id", flat=True))
    assert not old_ids & set(
        Session.objects.filter(project=target).values_list("public_id", flat=True)
    )
    source_memories, source_links = memories(source)
    target_memories, target_links = memories(target)
    assert {m[:3] for m in target_memories} == {m[:3] for m in source_memories}
    assert target_links == source_links
    assert all(m.team_id == other.pk for m in Memory.objects.filter(project=target))

    again = run("import_project", archive, "--team", "other", "--project", "copy")
    assert Session.objects.filter(project=target).count() == 3
    assert Message.objects.filter(session__project=target).count() == 9
    assert Memory.objects.filter(project=target).count() == 3
    assert "settings: kept" in again


def test_the_archive_holds_only_its_project(source, tmp_path):
    stranger = ProjectFactory()
    capture_session(
        stranger, ParsedSession("api", [ParsedMessage("user", "secret")], agent_name="x")
    )
    archive = tmp_path / "web.zip"
    run("export_project", archive, "--team", source.team.slug, "--project", "web")
    with zipfile.ZipFile(archive) as opened:
        text = opened.read("sessions.jsonl").decode()
        manifest = json.loads(opened.read("manifest.json"))
    assert "secret" not in text
    assert text.count('"type": "session"') == 3
    assert manifest["version"] == 1 and manifest["counts"] == {"sessions": 3, "messages": 9}


def rewrite(archive, target, change):
    """Copy ``archive`` to ``target`` with ``change(name, bytes) -> bytes`` applied."""
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(target, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, change(info.filename, src.read(info.filename)))


def refused(archive) -> str:
    other = TeamFactory(slug="other")
    with pytest.raises(CommandError) as caught:
        run("import_project", archive, "--team", "other", "--project", "copy")
    assert not Project.objects.filter(team=other).exists()  # not even the project
    assert not Session.objects.filter(team=other).exists()
    return str(caught.value)


def test_a_changed_file_is_refused_before_anything_is_written(source, tmp_path):
    archive, damaged = tmp_path / "web.zip", tmp_path / "damaged.zip"
    run("export_project", archive, "--team", source.team.slug, "--project", "web")
    rewrite(
        archive,
        damaged,
        lambda name, data: (
            data.replace(b"question 2", b"question 9") if name == "sessions.jsonl" else data
        ),
    )
    message = refused(damaged)
    assert "nothing was written" in message
    assert "sessions.jsonl: wrong checksum" in message


def test_an_unknown_version_is_refused_before_anything_is_written(source, tmp_path):
    archive, future = tmp_path / "web.zip", tmp_path / "future.zip"
    run("export_project", archive, "--team", source.team.slug, "--project", "web")

    def bump(name, data):
        if name != "manifest.json":
            return data
        return json.dumps({**json.loads(data), "version": 2}).encode()

    rewrite(archive, future, bump)
    message = refused(future)
    assert "manifest.json: format version 2 is not one this instance reads" in message


def test_a_file_the_manifest_does_not_list_is_refused(source, tmp_path):
    archive = tmp_path / "web.zip"
    run("export_project", archive, "--team", source.team.slug, "--project", "web")
    with zipfile.ZipFile(archive, "a") as opened:
        opened.writestr("extra.jsonl", b"{}\n")
    assert "extra.jsonl: a file the manifest does not list" in refused(archive)


def test_not_an_archive_is_refused(tmp_path):
    path = tmp_path / "x.zip"
    path.write_bytes(b"hello")
    assert "not a readable zip archive" in refused(path)


def test_diary_days_travel_with_the_project_and_follow_its_sessions(source, tmp_path):
    from datetime import date

    from memories.diary.models import DiaryEntry

    old = list(Session.objects.filter(project=source).order_by("pk"))
    DiaryEntry.objects.create(
        team=source.team,
        project=source,
        person="alice",
        character="architect",
        day=date(2025, 3, 1),
        happened="Chose MFA for admins.",
        decisions=["Use MFA for admins"],
        sessions=[old[0].public_id, old[1].public_id],
        text="# alice · architect · 2025-03-01\n\nChose MFA for admins.",
    )
    archive = tmp_path / "web.zip"
    run("export_project", archive, "--team", source.team.slug, "--project", "web")
    TeamFactory(slug="other")
    for _ in range(2):  # twice: the second import changes nothing
        run("import_project", archive, "--team", "other", "--project", "copy")
    target = Project.objects.get(team__slug="other", slug="copy")
    [entry] = DiaryEntry.objects.filter(project=target)
    assert (entry.person, entry.character, entry.day) == ("alice", "architect", date(2025, 3, 1))
    assert entry.decisions == ["Use MFA for admins"] and entry.embedding is not None
    here = dict(Session.objects.filter(project=target).values_list("external_id", "public_id"))
    # The session without an external id kept its old id as one; the other its own.
    assert entry.sessions == [here[old[0].public_id], here[old[1].external_id]]
    assert entry.team_id == target.team_id
