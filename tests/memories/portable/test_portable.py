"""Memories out as YAML files and back in: the files' exact shape, validation that names
file, entry and field and writes nothing, ids kept when free, relationships restored,
sessions' turns as evidence, isolation. Real PostgreSQL, the real embedding model."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from memories.capture.record import Evidence, MemoryDraft, link, record, resolve
from memories.models import LinkKind, Memory, MemoryLink, MemoryStatus, Origin
from memories.portable.export import export_files
from tests.clients import client_for
from tests.factories import MessageFactory, SessionFactory
from tests.transcripts.test_bmad_session import archive

pytestmark = pytest.mark.django_db

EXPORT, IMPORT = "/api/v1/memories/export", "/api/v1/memories/import"

# The files a BMAD session folder holds, as its documentation shows them.
DECISIONS = """
decisions:
  - id: "DEC-002"
    timestamp: "2026-01-11T14:40:00Z"
    turn_ref: 1
    made_by: "architect"
    agreed_by: ["bmad-master", "veritas"]

    decision: "Use OAuth 2.0 with JWT tokens for authentication"
    rationale: "Industry standard, good library support, supports SSO future"
    alternatives_considered:
      - option: "Session cookies"
        rejected_because: "Not suitable for API authentication"
      - option: "Opaque tokens"
        rejected_because: "Requires additional lookup on every request"

    confidence: "high"
    reversible: false  # Would require architecture change
    implementation_impact: "high"

    tags: ["architecture", "security", "authentication"]

    decay:
      priority: 1.0
      last_accessed: "2026-01-11T16:45:00Z"
      access_count: 5
"""
FINDINGS = """
findings:
  - id: "FIND-001"
    timestamp: "2026-01-11T14:30:30Z"
    turn_ref: 0
    discovered_by: "veritas"
    severity: "critical"
    category: "missing_requirement"
    finding: "No MFA requirement specified in authentication section"
    location:
      artifact: "/docs/requirements.md"
      section: "3.2 Authentication"
      line_numbers: [45, 60]
    impact: "Security vulnerability - admin accounts could be compromised with single factor"
    root_cause: "Requirements template didn't include MFA as checklist item"
    resolution:
      status: "resolved"
      resolved_at: "2026-01-11T14:35:00Z"
      resolved_by: "user"
      action_taken: "Added MFA requirement: required for admins, optional for customers"
      verification: "Requirement added in commit abc123"
    tags: ["security", "authentication", "mfa"]
    decay: {priority: 0.8, last_accessed: 2026-01-11T14:35:00Z, access_count: 2}
"""
PREFERENCES = """
preferences:
  - id: "PREF-001"
    timestamp: "2026-01-11T14:35:00Z"
    category: "policy"
    topic: "mfa_requirements"
    preference: "MFA required for admin users, optional for customers"
    context: "E-commerce platform authentication policy"
    confidence: "explicit"  # explicit | inferred | uncertain
    source: "user_statement"
    applies_to:
      projects: ["e-commerce-platform"]
      domains: ["authentication", "security"]
    decay:
      priority: 1.0
      last_accessed: "2026-01-11T16:45:00Z"
      access_count: 7
"""
AGENT_STATE = """
agent_state:
  agent_id: "veritas"
  session_id: "session-2026-01-11-abc123"
  last_updated: "2026-01-11T16:45:00Z"
  current_context:
    current_task: "verify_requirements"
    focus_area: "authentication_requirements"
  working_memory:
    concerns_identified: ["Missing MFA specification"]
  session_learnings:
    - "Requirements review should check for MFA in all auth sections"
  memory_refs:
    findings_created: ["FIND-001"]
  decay:
    priority: 0.95
    last_accessed: "2026-01-11T16:45:00Z"
"""
RELATIONSHIPS = """
memory_relationships:
  - source: "DEC-002"
    target: "FIND-001"
    relationship: "resolves"
  - source: "PREF-001"
    target: "DEC-002"
    relationship: "influenced"
"""
SEED_FILES = {
    "decisions.yaml": DECISIONS,
    "findings.yaml": FINDINGS,
    "preferences.yaml": PREFERENCES,
    "agent-states/veritas.yaml": AGENT_STATE,
    "relationships.yaml": RELATIONSHIPS,
}


def uploads(files: dict[str, str]) -> dict:
    return {"file": [SimpleUploadedFile(name, text.encode()) for name, text in files.items()]}


def unzipped(data: bytes) -> dict[str, dict]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: yaml.safe_load(archive.read(name)) for name in archive.namelist()}


@pytest.fixture
def seed_session(project):
    session = SessionFactory(
        project=project, team=project.team, external_id="session-2026-01-11-abc123"
    )
    for seq in range(3):
        MessageFactory(session=session, seq=seq, content=f"turn {seq}")
    return session


def test_seed_files_import_with_their_fields_ids_and_relationships(project, owner, seed_session):
    response = client_for(owner).post(
        f"{IMPORT}?project={project.pk}&session={seed_session.public_id}",
        uploads(SEED_FILES),
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert sorted(body["created"]) == ["DEC-002", "FIND-001", "PREF-001", "STATE-001"]
    assert (body["renumbered"], body["relationships"]) == ({}, 2)

    memories = {m.public_id: m for m in Memory.objects.filter(project=project)}
    decision = memories["DEC-002"]
    assert decision.content == "Use OAuth 2.0 with JWT tokens for authentication"
    assert (decision.agent, decision.confidence, decision.origin) == ("architect", "high", "import")
    assert decision.details["alternatives_considered"][1] == {
        "option": "Opaque tokens",
        "rejected_because": "Requires additional lookup on every request",
    }
    assert decision.details["reversible"] is False
    assert decision.access_count == 5 and decision.priority == 1.0
    assert decision.occurred_at.isoformat() == "2026-01-11T14:40:00+00:00"
    assert [e.message.seq for e in decision.evidence.all()] == [1]
    finding = memories["FIND-001"]
    assert (finding.severity, finding.resolution) == ("critical", "resolved")
    assert finding.details["resolution"]["resolved_by"] == "user"
    assert finding.details["location"]["line_numbers"] == [45, 60]
    # an unquoted time keeps its zone
    assert finding.last_accessed_at.isoformat() == "2026-01-11T14:35:00+00:00"
    preference = memories["PREF-001"]
    assert (preference.topic, preference.confidence) == ("mfa_requirements", "explicit")
    assert preference.details["applies_to"]["domains"] == ["authentication", "security"]
    state = memories["STATE-001"]
    assert state.agent == "veritas" and state.session_id == seed_session.pk
    assert state.details["session_learnings"] == [
        "Requirements review should check for MFA in all auth sections"
    ]
    assert "current task verify_requirements" in state.content
    links = {
        (link.source.public_id, link.kind, link.target.public_id)
        for link in MemoryLink.objects.all()
    }
    assert links == {("DEC-002", "resolves", "FIND-001"), ("PREF-001", "influenced", "DEC-002")}
    # the kept ids count: the next decision is DEC-003
    assert (
        record(project, MemoryDraft(type="decision", content="Ship it")).memory.public_id
        == "DEC-003"
    )

    # the same files again change nothing
    again = client_for(owner).post(
        f"{IMPORT}?project={project.pk}&session={seed_session.public_id}",
        uploads(SEED_FILES),
        format="multipart",
    )
    assert again.status_code == 201
    assert again.json()["created"] == [] and len(again.json()["unchanged"]) == 4
    assert Memory.objects.filter(project=project).count() == 5


def test_a_session_named_by_its_external_id_takes_the_agent_state(project, owner, seed_session):
    response = client_for(owner).post(
        f"{IMPORT}?project={project.pk}",
        AGENT_STATE,
        content_type="application/yaml",
    )
    assert response.status_code == 201, response.json()
    assert Memory.objects.get(project=project).session_id == seed_session.pk


def test_a_zip_imports_and_a_taken_id_is_renumbered_with_its_relationships(project, owner):
    taken = record(project, MemoryDraft(type="decision", content="Deploy with docker compose"))
    taken = record(
        project, MemoryDraft(type="decision", content="Use PostgreSQL")
    ).memory  # DEC-002
    files = {name: text for name, text in SEED_FILES.items() if "agent" not in name}
    response = client_for(owner).post(
        f"{IMPORT}?project={project.pk}",
        archive({name: text.encode() for name, text in files.items()}),
        content_type="application/zip",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["renumbered"] == {"DEC-002": "DEC-003"}
    oauth = Memory.objects.get(project=project, public_id="DEC-003")
    assert oauth.content.startswith("Use OAuth 2.0")
    assert set(MemoryLink.objects.values_list("source__public_id", "target__public_id")) == {
        ("DEC-003", "FIND-001"),
        ("PREF-001", "DEC-003"),
    }
    assert not MemoryLink.objects.filter(source=taken).exists()
    # without a session, turn_ref has nothing to name: no evidence
    assert not oauth.evidence.exists()


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"decisions.yaml": DECISIONS.replace("rationale:", "rationle:")},
            {"file": "decisions.yaml", "entry": "decisions[0] (DEC-002)", "field": "rationle"},
        ),
        (
            {"findings.yaml": FINDINGS.replace("line_numbers: [45, 60]", "line_numbers: [a]")},
            {
                "file": "findings.yaml",
                "entry": "findings[0] (FIND-001)",
                "field": "location.line_numbers.0",
            },
        ),
        (
            {"findings.yaml": FINDINGS.replace('status: "resolved"', 'status: "done"')},
            {
                "file": "findings.yaml",
                "entry": "findings[0] (FIND-001)",
                "field": "resolution.status",
            },
        ),
        (
            {"preferences.yaml": PREFERENCES.replace("priority: 1.0", "priority: 7")},
            {
                "file": "preferences.yaml",
                "entry": "preferences[0] (PREF-001)",
                "field": "decay.priority",
            },
        ),
        (
            {"notes.yaml": "notes:\n  - hello\n"},
            {"file": "notes.yaml", "entry": None, "field": "notes"},
        ),
        (
            {
                "decisions.yaml": DECISIONS,
                "findings.yaml": FINDINGS,
                "broken.yaml": "decisions: [\n",
            },
            {"file": "broken.yaml", "entry": None, "line": 2},
        ),
        (
            {"bomb.yaml": 'a: &a ["x", "x"]\nb: &b [*a, *a]\ndecisions: [*b, *b]\n'},
            {"file": "bomb.yaml", "entry": None, "line": 2},
        ),
        (
            {"a.yaml": DECISIONS, "b.yaml": DECISIONS},
            {"file": "b.yaml", "entry": "decisions[0] (DEC-002)", "field": "id"},
        ),
        (
            {
                "decisions.yaml": DECISIONS,
                "r.yaml": RELATIONSHIPS.replace('"FIND-001"', '"FIND-404"'),
            },
            {"file": "r.yaml", "entry": "memory_relationships[0]", "field": "target"},
        ),
        (
            {
                "decisions.yaml": DECISIONS,
                "findings.yaml": FINDINGS,
                "r.yaml": RELATIONSHIPS.replace('"resolves"', '"causes"'),
            },
            {"file": "r.yaml", "entry": "memory_relationships[0]", "field": "relationship"},
        ),
        (
            {
                "d.yaml": DECISIONS.replace(
                    'decision: "Use OAuth', 'decision: "' + "x" * 5000 + '"\n    x: "'
                )
            },
            {"file": "d.yaml", "entry": "decisions[0] (DEC-002)"},
        ),
    ],
)
def test_bad_files_are_refused_naming_file_entry_and_field_and_nothing_is_written(
    project, owner, files, expected
):
    response = client_for(owner).post(
        f"{IMPORT}?project={project.pk}", uploads(files), format="multipart"
    )
    assert response.status_code == 400, response.json()
    body = response.json()
    assert {key: body.get(key) for key in expected} == expected
    assert body["code"] and body["detail"].startswith(expected["file"])
    assert not Memory.objects.filter(project=project).exists()
    assert not MemoryLink.objects.exists()


def test_a_turn_the_session_does_not_have_is_refused(project, owner, seed_session):
    files = {"decisions.yaml": DECISIONS.replace("turn_ref: 1", "turn_ref: 99")}
    response = client_for(owner).post(
        f"{IMPORT}?project={project.pk}&session={seed_session.public_id}",
        uploads(files),
        format="multipart",
    )
    assert response.status_code == 400
    assert (response.json()["entry"], response.json()["field"]) == (
        "decisions[0] (DEC-002)",
        "turn_ref",
    )
    assert not Memory.objects.exists()


def test_a_supersedes_cycle_is_refused_and_rolls_back(project, owner):
    files = {
        "decisions.yaml": DECISIONS,
        "findings.yaml": FINDINGS,
        "r.yaml": "memory_relationships:\n"
        "  - {source: DEC-002, target: FIND-001, relationship: supersedes}\n"
        "  - {source: FIND-001, target: DEC-002, relationship: supersedes}\n",
    }
    response = client_for(owner).post(
        f"{IMPORT}?project={project.pk}", uploads(files), format="multipart"
    )
    assert response.status_code == 400
    assert (response.json()["entry"], response.json()["field"]) == (
        "memory_relationships[1]",
        "relationship",
    )
    assert not Memory.objects.exists()


def exported_project(project) -> None:
    """A project with one memory of each kind, evidence, a resolution and relationships."""
    session = SessionFactory(project=project, team=project.team)
    said = MessageFactory(session=session, seq=4, role="assistant", author="architect")
    also = MessageFactory(session=session, seq=7, role="assistant", author="architect")
    vector = np.ones(384, dtype=np.float32) / np.sqrt(384)

    def made(kind, content, **fields):
        return record(
            project,
            MemoryDraft(type=kind, content=content, embedding=vector, reconcile=False, **fields),
        ).memory

    decision = made(
        "decision",
        "Use OAuth 2.0 with JWT tokens",
        session=session,
        agent="architect",
        confidence="high",
        details={"rationale": "Industry standard", "reversible": False},
        evidence=[Evidence(said), Evidence(also)],
        tags=["auth"],
    )
    finding = made("finding", "No MFA requirement", severity="critical", agent="veritas")
    resolve(finding, by="user", action_taken="Added MFA")
    made("preference", "Tabs for indentation", topic="indentation", confidence="explicit")
    made("learning", "Check MFA in every auth section", details={"source_turns": 3})
    made("fact", "The user lives in Lisbon", scope="team", pinned=True)
    old = made("decision", "Use sessions cookies")
    link(decision, old, LinkKind.SUPERSEDES)
    link(decision, finding, LinkKind.RESOLVES)
    from memories.capture.record import update_agent_state

    update_agent_state(
        project, agent="veritas", session=session, state={"session_learnings": ["Check MFA"]}
    )
    return session


def test_export_writes_each_file_in_its_shape(project, owner):
    session = exported_project(project)
    response = client_for(owner).get(EXPORT, {"project": project.pk})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    files = unzipped(response.content)
    assert sorted(files) == [
        "agent-states/veritas.yaml",
        "decisions.yaml",
        "facts.yaml",
        "findings.yaml",
        "learnings.yaml",
        "preferences.yaml",
        "relationships.yaml",
    ]
    oauth, old = files["decisions.yaml"]["decisions"]
    assert oauth == {
        "id": "DEC-001",
        "timestamp": oauth["timestamp"],
        "turn_ref": 4,
        "turn_refs": [4, 7],
        "session": session.public_id,
        "made_by": "architect",
        "decision": "Use OAuth 2.0 with JWT tokens",
        "rationale": "Industry standard",
        "reversible": False,
        "tags": ["auth"],
        "confidence": "high",
        "decay": oauth["decay"],
    }
    assert oauth["timestamp"].endswith("Z")
    assert set(oauth["decay"]) == {"priority", "base_priority", "last_accessed", "access_count"}
    assert old["status"] == "superseded"
    [finding] = files["findings.yaml"]["findings"]
    assert finding["resolution"]["status"] == "resolved"
    assert finding["resolution"]["action_taken"] == "Added MFA"
    assert files["learnings.yaml"]["learnings"][0]["extra"] == {"source_turns": 3}
    assert files["facts.yaml"]["facts"][0]["scope"] == "team"
    assert files["agent-states/veritas.yaml"]["agent_state"]["session_id"] == session.public_id
    assert files["relationships.yaml"]["memory_relationships"] == [
        {"source": "DEC-001", "target": "DEC-002", "relationship": "supersedes"},
        {"source": "DEC-001", "target": "FIND-001", "relationship": "resolves"},
    ]

    only_session = client_for(owner).get(EXPORT, {"session": session.public_id, "format": "yaml"})
    assert only_session.status_code == 200
    document = yaml.safe_load(only_session.content)
    assert [d["id"] for d in document["decisions"]] == ["DEC-001"]
    assert [s["agent_id"] for s in document["agent_states"]] == ["veritas"]
    assert "memory_relationships" not in document  # its ends are not both in the session


def test_deleted_memories_are_not_exported(project):
    memory = record(project, MemoryDraft(type="fact", content="Gone soon")).memory
    Memory.objects.filter(pk=memory.pk).update(status=MemoryStatus.DELETED)
    assert export_files(Memory.objects.filter(project=project)) == {}


def test_another_teams_memories_are_a_404(project, owner, outsider):
    session = exported_project(project)
    outside = client_for(outsider)
    assert outside.get(EXPORT, {"project": project.pk}).status_code == 404
    assert outside.get(EXPORT, {"session": session.public_id}).status_code == 404
    assert (
        outside.post(
            f"{IMPORT}?project={project.pk}", DECISIONS, content_type="application/yaml"
        ).status_code
        == 404
    )
    assert (
        outside.post(
            f"{IMPORT}?session={session.public_id}", DECISIONS, content_type="application/yaml"
        ).status_code
        == 404
    )
    assert not Memory.objects.filter(origin=Origin.IMPORT).exists()


def test_the_web_download(project, owner, outsider):
    from tests.web.conftest import client_for as browser_for

    session = exported_project(project)
    url = reverse("web:memories-export")
    mine = browser_for(owner).get(url, {"project": project.pk})
    assert mine.status_code == 200 and mine["Content-Type"] == "application/zip"
    assert "decisions.yaml" in unzipped(mine.content)
    one = browser_for(owner).get(url, {"session": session.public_id})
    assert "memories-" + session.public_id in one["Content-Disposition"]
    assert browser_for(outsider).get(url, {"project": project.pk}).status_code == 404
    assert browser_for(outsider).get(url, {"session": session.public_id}).status_code == 404


def test_a_viewer_cannot_import(project, team):
    from teams.models import Role
    from tests.factories import MembershipFactory

    viewer = MembershipFactory(team=team, role=Role.VIEWER).user
    response = client_for(viewer).post(
        f"{IMPORT}?project={project.pk}", DECISIONS, content_type="application/yaml"
    )
    assert response.status_code == 403
    assert not Memory.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_same_files_imported_twice_at_once_are_written_once():
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from memories.portable.load import import_files
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    files = {name: text.encode() for name, text in SEED_FILES.items()}

    def send(_):
        try:
            return import_files(project, files)
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(send, range(2)))
    assert sorted(len(r.created) for r in results) == [0, 4]
    assert Memory.objects.filter(project=project).count() == 4
    assert MemoryLink.objects.filter(source__project=project).count() == 2


def test_a_token_exports_with_read_and_imports_with_write_into_its_own_project(project):
    from teams.models import ApiToken, TokenPermission
    from tests.factories import ProjectFactory

    exported_project(project)
    _, reader = ApiToken.issue(project, permissions=[TokenPermission.READ])
    _, writer = ApiToken.issue(project, permissions=[TokenPermission.WRITE])
    reading, writing = client_for(token=reader), client_for(token=writer)
    assert reading.get(EXPORT).status_code == 200  # the token's project, unnamed
    assert reading.post(IMPORT, DECISIONS, content_type="application/yaml").status_code == 403
    assert writing.post(IMPORT, DECISIONS, content_type="application/yaml").status_code == 201
    other = ProjectFactory(team=project.team)
    refused = writing.post(
        f"{IMPORT}?project={other.pk}", DECISIONS, content_type="application/yaml"
    )
    assert refused.status_code == 400 and "project" in refused.json()
    assert not Memory.objects.filter(project=other).exists()


def test_an_unknown_export_format_or_a_missing_session_is_named(project, owner):
    client = client_for(owner)
    wrong = client.get(EXPORT, {"project": project.pk, "format": "docx"})
    assert wrong.status_code == 400 and "format" in wrong.json()
    assert client.get(EXPORT, {"session": "2025-01-01-nobody-000000"}).status_code == 404
    empty = client.post(f"{IMPORT}?project={project.pk}", b"", content_type="application/yaml")
    assert empty.status_code == 400 and "file" in empty.json()
