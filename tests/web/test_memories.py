"""The memory pages: a project's memories (filters, search, open findings first), one
memory (its fields, evidence, relationships; edit, resolve, pin, delete with a reason), the
memories card of a session page. Another team's memory is a 404; roles as for sessions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memories.capture.record import Evidence, MemoryDraft, link, record
from memories.decay import priority_of
from memories.forget.trash import delete as delete_memory
from memories.models import LinkKind, Memory, MemoryExtraction, MemoryStatus, MemoryType
from sessions.models import Message
from tests.factories import ProjectFactory, SessionFactory, TeamFactory

pytestmark = pytest.mark.django_db


def url(name, memory, **query):
    base = reverse(f"web:{name}", args=[memory.project_id, memory.public_id])
    return base + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


@pytest.fixture
def memories(project, team_session):
    answer = Message.objects.get(session=team_session, seq=1)
    decision = record(
        project,
        MemoryDraft(
            type=MemoryType.DECISION,
            content="Send people to the login page named by LOGIN_URL",
            session=team_session,
            agent="claude-code",
            tags=["auth"],
            topic="login_redirect",
            details={
                "rationale": "One setting, read by every view that needs a signed-in user",
                "alternatives_considered": [
                    {"option": "Hard-coded /login", "rejected_because": "Breaks under a prefix"}
                ],
                "reversible": True,
            },
            evidence=[Evidence(answer, "Because of LOGIN_URL.")],
        ),
    ).memory
    finding = record(
        project,
        MemoryDraft(
            type=MemoryType.FINDING,
            content="The login page loops when the session cookie is Secure over plain HTTP",
            session=team_session,
            agent="veritas",
            severity="critical",
            details={
                "location": {"artifact": "settings.py", "line_numbers": [45, 60]},
                "root_cause": "SESSION_COOKIE_SECURE on in development",
            },
        ),
    ).memory
    preference = record(
        project,
        MemoryDraft(
            type=MemoryType.PREFERENCE,
            content="Prefer explicit settings over framework defaults",
            confidence="explicit",
            agent="claude-code",
            details={"applies_to": {"domains": ["settings", "auth"]}},
        ),
    ).memory
    link(finding, decision, LinkKind.LED_TO)
    return {"decision": decision, "finding": finding, "preference": preference}


@pytest.fixture
def other_memory(other_team_session):
    return record(
        other_team_session.project,
        MemoryDraft(type=MemoryType.DECISION, content="Launch on Tuesday", agent="secret-agent"),
    ).memory


# --- the list ----------------------------------------------------------------------------


def test_the_list_shows_a_projects_memories_open_findings_first(viewer_client, memories):
    body = viewer_client.get("/memories").content.decode()
    for memory in memories.values():
        assert memory.public_id in body
    assert "DEC-001" in body and "FIND-001" in body and "PREF-001" in body
    # The open finding leads, then the others by priority.
    assert body.index("FIND-001") < body.index("DEC-001")
    assert body.index("FIND-001") < body.index("PREF-001")
    assert "Send people to the login page" in body
    assert reverse("web:session", args=[memories["decision"].session.public_id]) in body
    assert 'class="type-badge type-finding"' in body
    assert "claude-code" in body


def test_the_nav_links_the_memories_page(viewer_client, memories):
    body = viewer_client.get("/sessions").content.decode()
    assert 'href="/memories"' in body


@pytest.mark.parametrize(
    ("query", "shown", "hidden"),
    [
        ("type=decision", ["DEC-001"], ["FIND-001", "PREF-001"]),
        ("resolution=open", ["FIND-001"], ["DEC-001", "PREF-001"]),
        ("agent=veritas", ["FIND-001"], ["DEC-001", "PREF-001"]),
        ("status=superseded", [], ["DEC-001", "FIND-001", "PREF-001"]),
    ],
)
def test_the_list_filters(viewer_client, memories, query, shown, hidden):
    body = viewer_client.get(f"/memories?{query}").content.decode()
    for public_id in shown:
        assert public_id in body
    for public_id in hidden:
        assert public_id not in body


def test_a_search_puts_the_best_match_first(viewer_client, memories):
    """Search is by meaning and keyword: nearby memories may follow, below the match."""
    body = viewer_client.get("/memories?q=session+cookie+Secure").content.decode()
    assert "FIND-001" in body
    others = [body.index(m) for m in ("DEC-001", "PREF-001") if m in body]
    assert all(body.index("FIND-001") < at for at in others)


def test_superseded_memories_are_listed_when_asked_for(viewer_client, project, memories):
    newer = record(
        project,
        MemoryDraft(
            type=MemoryType.DECISION,
            content="Send people to the single sign-on page instead",
            supersedes=[memories["decision"]],
        ),
    ).memory
    active = viewer_client.get("/memories").content.decode()
    assert newer.public_id in active and "DEC-001" not in active
    superseded = viewer_client.get("/memories?status=superseded").content.decode()
    assert "DEC-001" in superseded and newer.public_id not in superseded
    both = viewer_client.get("/memories?status=any").content.decode()
    assert "DEC-001" in both and newer.public_id in both
    page = viewer_client.get(url("memory", memories["decision"])).content.decode()
    assert "Superseded" in page and newer.public_id in page


def test_the_list_of_one_session(viewer_client, project, memories):
    elsewhere = SessionFactory(project=project, title="Another session")
    record(
        project,
        MemoryDraft(type=MemoryType.FACT, content="The CI runs on Fridays", session=elsewhere),
    )
    session = memories["decision"].session
    body = viewer_client.get(f"/memories?session={session.public_id}").content.decode()
    assert "DEC-001" in body and "FACT-001" not in body
    assert "Memories of the session" in body
    unknown = viewer_client.get("/memories?session=nope").content.decode()
    assert "No such session" in unknown


def test_faded_memories_can_be_hidden(viewer_client, memories):
    Memory.objects.filter(pk=memories["preference"].pk).update(priority=0.1)
    assert "PREF-001" in viewer_client.get("/memories").content.decode()
    assert "PREF-001" not in viewer_client.get("/memories?hide_faded=on").content.decode()


def test_the_list_pages_with_a_cursor(viewer_client, project):
    for n in range(55):
        record(
            project,
            MemoryDraft(
                type=MemoryType.FACT,
                content=f"Fact number {n} about subject {n * 7919}",
                embedding=[1.0] + [0.0] * 383,
                reconcile=False,
                base_priority=0.5 + n / 200,
            ),
        )
    first = viewer_client.get("/memories").content.decode()
    assert "Next →" in first and "FACT-055" in first and "FACT-001" not in first
    cursor = first.split("cursor=", 1)[1].split('"', 1)[0]
    second = viewer_client.get(f"/memories?cursor={cursor}").content.decode()
    assert "FACT-001" in second and "FACT-055" not in second


# --- isolation and roles -----------------------------------------------------------------


def test_another_teams_memory_is_a_404(outsider_client, memories, other_memory):
    listed = outsider_client.get("/memories").content.decode()
    assert "Send people to the login page" not in listed
    decision = memories["decision"]
    assert outsider_client.get(url("memory", decision)).status_code == 404
    for name in ("memory-edit", "memory-delete"):
        assert outsider_client.get(url(name, decision)).status_code == 404
    for name in ("memory-pin", "memory-resolve", "memory-delete", "memory-edit"):
        response = outsider_client.post(url(name, decision), {"pinned": "true", "reason": "x"})
        assert response.status_code == 404
    decision.refresh_from_db()
    assert decision.status == MemoryStatus.ACTIVE and not decision.pinned


def test_a_member_does_not_see_another_teams_memory(member_client, memories, other_memory):
    assert "Launch on Tuesday" not in member_client.get("/memories").content.decode()
    assert member_client.get(url("memory", other_memory)).status_code == 404
    assert "Launch on Tuesday" not in member_client.get("/memories?q=Tuesday").content.decode()


def test_viewers_read_without_the_buttons(viewer_client, memories):
    body = viewer_client.get(url("memory", memories["finding"])).content.decode()
    assert "Evidence" in body
    assert "Edit</a>" not in body and "Mark resolved" not in body and "Delete…" not in body
    assert viewer_client.get(url("memory-edit", memories["finding"])).status_code == 403
    assert (
        viewer_client.post(url("memory-pin", memories["finding"]), {"pinned": "true"}).status_code
        == 403
    )
    assert (
        viewer_client.post(
            url("memory-resolve", memories["finding"]), {"action_taken": "x"}
        ).status_code
        == 403
    )


def test_members_edit_but_only_admins_delete(member_client, admin_client, memories):
    page = member_client.get(url("memory", memories["finding"])).content.decode()
    assert "Edit</a>" in page and "Mark resolved" in page and "Delete…" not in page
    assert member_client.get(url("memory-delete", memories["finding"])).status_code == 403
    assert (
        member_client.post(url("memory-delete", memories["finding"]), {"reason": "x"}).status_code
        == 403
    )
    assert "Delete…" in admin_client.get(url("memory", memories["finding"])).content.decode()


def test_actions_need_the_csrf_token(member):
    client = Client(enforce_csrf_checks=True)
    client.force_login(member)
    project = ProjectFactory(team=member.memberships.first().team)
    memory = record(
        project, MemoryDraft(type=MemoryType.FINDING, content="The cache never expires")
    ).memory
    assert client.post(url("memory-pin", memory), {"pinned": "true"}).status_code == 403
    assert client.post(url("memory-resolve", memory), {"action_taken": "x"}).status_code == 403
    memory.refresh_from_db()
    assert not memory.pinned and memory.resolution == "open"


# --- one memory --------------------------------------------------------------------------


def test_the_memory_page_shows_its_fields_evidence_and_relationships(viewer_client, memories):
    decision, finding = memories["decision"], memories["finding"]
    body = viewer_client.get(url("memory", decision)).content.decode()
    assert "Rationale" in body and "One setting, read by every view" in body
    assert "Alternatives considered" in body and "Hard-coded /login" in body
    assert "rejected because" in body and "Breaks under a prefix" in body
    assert "Reversible" in body and "yes" in body
    # The evidence: the quoted sentence, a link to its message in the session.
    assert "Because of LOGIN_URL." in body
    assert f"/sessions/{decision.session.public_id}?at=1#m-1" in body
    # The relationship, read from this end.
    assert "Came from" in body and finding.public_id in body

    found = viewer_client.get(url("memory", finding)).content.decode()
    assert "Led to" in found and decision.public_id in found
    assert "Location" in found and "settings.py" in found and "45–60" in found
    assert "Root cause" in found
    pref = viewer_client.get(url("memory", memories["preference"])).content.decode()
    assert "Applies to" in pref and "settings" in pref and "explicit" in pref


def test_the_session_page_anchors_the_evidence_links(viewer_client, memories):
    session = memories["decision"].session
    body = viewer_client.get(f"/sessions/{session.public_id}?at=1").content.decode()
    assert 'id="m-1"' in body


def test_opening_a_memory_counts_as_a_read(viewer_client, memories):
    decision = memories["decision"]
    long_ago = timezone.now() - timedelta(days=60)
    Memory.objects.filter(pk=decision.pk).update(
        occurred_at=long_ago, last_accessed_at=long_ago, priority=0.01
    )
    viewer_client.get(url("memory", decision))
    decision.refresh_from_db()
    assert decision.access_count == 1
    assert decision.last_accessed_at > timezone.now() - timedelta(minutes=1)
    assert decision.priority == pytest.approx(priority_of(decision), abs=1e-3)
    assert decision.priority > 0.3  # just read: no longer faded


def test_a_member_edits_a_memory(member_client, memories):
    finding = memories["finding"]
    old_fingerprint = finding.fingerprint
    form = member_client.get(url("memory-edit", finding)).content.decode()
    assert "The login page loops" in form and 'name="severity"' in form
    response = member_client.post(
        url("memory-edit", finding),
        {
            "content": "The login page loops when SESSION_COOKIE_SECURE is on over HTTP",
            "topic": "session_cookie",
            "tags": "Auth, cookies , ",
            "confidence": "high",
            "severity": "important",
        },
    )
    assert response.status_code == 302 and response["Location"] == url("memory", finding)
    finding.refresh_from_db()
    assert finding.content.startswith("The login page loops when SESSION_COOKIE_SECURE")
    assert finding.tags == ["auth", "cookies"]
    assert (finding.topic, finding.confidence, finding.severity) == (
        "session_cookie",
        "high",
        "important",
    )
    assert finding.fingerprint != old_fingerprint
    # The new wording is what search finds.
    assert "FIND-001" in member_client.get("/memories?q=SESSION_COOKIE_SECURE").content.decode()


def test_an_empty_edit_is_refused_and_nothing_changes(member_client, memories):
    decision = memories["decision"]
    response = member_client.post(url("memory-edit", decision), {"content": "   ", "tags": "x"})
    assert response.status_code == 200
    assert "This field is required" in response.content.decode()
    decision.refresh_from_db()
    assert decision.content.startswith("Send people") and decision.tags == ["auth"]
    too_long = member_client.post(url("memory-edit", decision), {"content": "x" * 5000})
    assert too_long.status_code == 200 and "at most 4000" in too_long.content.decode()


def test_a_member_resolves_a_finding(member_client, member, memories):
    finding = memories["finding"]
    missing = member_client.post(url("memory-resolve", finding), {}, follow=True)
    assert "Action taken" in missing.content.decode()
    response = member_client.post(
        url("memory-resolve", finding),
        {"action_taken": "Turned SESSION_COOKIE_SECURE off in dev", "verification": "commit abc"},
        follow=True,
    )
    assert "Resolved FIND-001" in response.content.decode()
    finding.refresh_from_db()
    assert finding.resolution == "resolved"
    assert (
        finding.details["resolution"]["action_taken"] == "Turned SESSION_COOKIE_SECURE off in dev"
    )
    assert finding.details["resolution"]["resolved_by"] == member.get_username()
    page = response.content.decode()
    assert "Mark resolved" not in page and "Turned SESSION_COOKIE_SECURE off in dev" in page
    again = member_client.post(
        url("memory-resolve", finding), {"action_taken": "again"}, follow=True
    )
    assert again.status_code == 200 and "already resolved" in again.content.decode()
    # Resolved findings no longer lead the list.
    body = member_client.get("/memories?resolution=open").content.decode()
    assert "FIND-001" not in body


def test_a_decision_cannot_be_resolved(member_client, memories):
    response = member_client.post(
        url("memory-resolve", memories["decision"]), {"action_taken": "x"}, follow=True
    )
    assert "Only findings are resolved" in response.content.decode()


def test_pin_and_unpin(member_client, memories):
    decision = memories["decision"]
    member_client.post(url("memory-pin", decision), {"pinned": "true"})
    decision.refresh_from_db()
    assert decision.pinned and decision.priority == pytest.approx(decision.base_priority)
    assert "Unpin" in member_client.get(url("memory", decision)).content.decode()
    member_client.post(url("memory-pin", decision), {"pinned": "false"})
    decision.refresh_from_db()
    assert not decision.pinned


def test_delete_asks_for_a_reason_then_the_memory_disappears(admin_client, admin, memories):
    decision = memories["decision"]
    confirm = admin_client.get(url("memory-delete", decision)).content.decode()
    assert "Delete DEC-001?" in confirm and 'name="reason"' in confirm
    assert "csrfmiddlewaretoken" in confirm
    refused = admin_client.post(url("memory-delete", decision), {"reason": ""})
    assert refused.status_code == 200
    decision.refresh_from_db()
    assert decision.status == MemoryStatus.ACTIVE

    response = admin_client.post(url("memory-delete", decision), {"reason": "extracted by mistake"})
    assert response.status_code == 302 and response["Location"] == "/memories"
    decision.refresh_from_db()
    assert decision.status == MemoryStatus.DELETED
    assert decision.delete_reason == "extracted by mistake" and decision.deleted_by == admin
    listed = admin_client.get("/memories?status=any").content.decode()
    assert "Deleted DEC-001" in listed  # the flash message
    assert "Send people to the login page" not in listed
    assert admin_client.get(url("memory", decision)).status_code == 404
    session_page = admin_client.get(f"/sessions/{decision.session.public_id}").content.decode()
    assert "DEC-001" not in session_page
    # The finding no longer lists it as related.
    assert "DEC-001" not in admin_client.get(url("memory", memories["finding"])).content.decode()
    # Deleting again, or acting on it, says it was deleted.
    again = admin_client.post(url("memory-delete", decision), {"reason": "again"}, follow=True)
    assert again.status_code == 200 and "DEC-001 was deleted on" in again.content.decode()
    decision.refresh_from_db()
    assert decision.delete_reason == "extracted by mistake"


def test_a_deleted_memory_stays_a_404_for_other_teams(outsider_client, memories):
    delete_memory(memories["decision"], reason="gone")
    response = outsider_client.post(url("memory-delete", memories["decision"]), {"reason": "x"})
    assert response.status_code == 404


# --- the session page --------------------------------------------------------------------


def test_the_session_page_lists_its_memories(viewer_client, memories):
    session = memories["decision"].session
    body = viewer_client.get(f"/sessions/{session.public_id}").content.decode()
    assert 'id="memories"' in body
    assert (
        url("memory", memories["decision"]) in body and url("memory", memories["finding"]) in body
    )
    assert body.index("FIND-001") < body.index("DEC-001")
    assert "PREF-001" not in body  # of no session
    assert f"/memories?session={session.public_id}" in body


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (None, "they are read from the transcript after it is summarised"),
        ("pending", "being read from the transcript"),
        ("failed", "failed after 3 attempts"),
        ("done", "No decisions, findings or preferences were found"),
    ],
)
def test_the_session_page_says_why_there_are_no_memories(viewer_client, team_session, status, text):
    if status:
        MemoryExtraction.objects.create(
            team=team_session.team,
            session=team_session,
            status=status,
            attempts=3,
            error="model timed out",
        )
    body = viewer_client.get(f"/sessions/{team_session.public_id}").content.decode()
    assert text in body


def test_export_links(member_client, viewer_client, project, memories):
    session = memories["decision"].session
    export = reverse("web:memories-export")
    page = member_client.get(f"/memories?project={project.pk}").content.decode()
    assert f"{export}?project={project.pk}" in page
    assert (
        f"{export}?session={session.public_id}"
        in member_client.get(f"/sessions/{session.public_id}").content.decode()
    )
    assert export not in viewer_client.get(f"/memories?project={project.pk}").content.decode()


def test_team_scoped_memories_of_another_team_stay_hidden(member_client, memories):
    other = ProjectFactory(team=TeamFactory())
    record(
        other,
        MemoryDraft(type=MemoryType.PREFERENCE, content="Tabs, never spaces", scope="team"),
    )
    assert "Tabs, never spaces" not in member_client.get("/memories").content.decode()


def test_memories_of_a_trashed_session_are_hidden(admin_client, memories):
    from sessions.forget.lifecycle import soft_delete as trash

    trash(memories["decision"].session)
    body = admin_client.get("/memories").content.decode()
    assert "DEC-001" not in body and "PREF-001" in body
    assert admin_client.get(url("memory", memories["decision"])).status_code == 404


def test_the_list_filters_by_person_and_by_what_a_character_may_read(viewer_client, project):
    """People (docs/people.md) in the UI as on the API: Sam's memories; what Rex may read of
    them (his own, the shared ones), not what Sam told Cathy alone."""
    cathy = SessionFactory(project=project, user_name="sam", agent_name="cathy")
    rex = SessionFactory(project=project, user_name="sam", agent_name="rex")
    record(project, MemoryDraft("preference", "Sam is vegetarian", cathy, shared=True))
    record(project, MemoryDraft("fact", "Sam's sister lives in Porto", cathy, agent="cathy"))
    record(project, MemoryDraft("fact", "Sam reviews code on Mondays", rex, agent="rex"))
    record(project, MemoryDraft("fact", "Kim plays chess", person="kim", agent="rex"))

    sams = viewer_client.get("/memories?person=sam").content.decode()
    assert "vegetarian" in sams and "Porto" in sams and "Mondays" in sams
    assert "chess" not in sams
    for_rex = viewer_client.get("/memories?person=sam&character=Rex").content.decode()
    assert "vegetarian" in for_rex and "Mondays" in for_rex
    assert "Porto" not in for_rex and "chess" not in for_rex
