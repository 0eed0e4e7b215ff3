"""Session quota: warn, compact, refuse; what compaction never touches; re-sends after
compaction; the size breakdown; pins; the compact and size endpoints."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from sessions.capture.service import (
    CompactionFailed,
    QuotaExceeded,
    append_messages,
    capture_session,
)
from sessions.forget.compaction import FOLD_OVER_BYTES, compact_session
from sessions.forget.size import size_breakdown
from sessions.models import Entity, Message, MessageChunk, Session
from teams.models import ApiToken, QuotaAction
from tests.factories import ProjectFactory
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

QUOTA = 20_000
HYPOTHESIS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_names = itertools.count()

# Ages, in hours: summarisable (> 7 days), foldable (> 24 h), protected (< 24 h).
OLD, MIDDLE, RECENT = 24 * 10, 24 * 3, 2


def at(hours_ago: float):
    return timezone.now() - timedelta(hours=hours_ago)


def words(n: int, tag: str) -> str:
    """About ``n`` bytes of distinct-looking prose (so nothing is a duplicate by accident)."""
    sentence = f"We looked at part {tag} of the release and changed the deploy step. "
    return (sentence * (n // len(sentence) + 1))[:n]


def parsed(messages, external_id=""):
    return ParsedSession(
        source_format="api", agent_name="dev", external_id=external_id, messages=messages
    )


def project_with(**policy):
    return ProjectFactory(session_quota_bytes=QUOTA, **policy)


def stored(session):
    return list(
        Message.objects.filter(session=session).order_by("seq").values_list("seq", "content")
    )


def content_bytes(session) -> int:
    return sum(len(c.encode()) for _, c in stored(session))


# ---------------------------------------------------------------------------------------
# Thresholds


sizes = st.lists(
    st.tuples(st.sampled_from([OLD, RECENT]), st.integers(200, 4000)), min_size=1, max_size=8
)


@HYPOTHESIS
@given(old=sizes, new=st.integers(1, 8000), action=st.sampled_from(list(QuotaAction)))
def test_warn_compact_or_refuse_by_the_projects_shares(old, new, action):
    project = project_with(quota_action=action)
    first = [
        ParsedMessage("user", words(size, f"{i}"), timestamp=at(age))
        for i, (age, size) in enumerate(old)
    ]
    total = sum(size for _, size in old)
    if total > QUOTA:
        return
    session = capture_session(project, parsed(first)).session
    before = stored(session)
    try:
        with transaction.atomic():
            result = append_messages(session, [ParsedMessage("user", words(new, "new"))])
    except QuotaExceeded as refusal:
        assert total + new > QUOTA
        assert refusal.quota_bytes == QUOTA and refusal.session_bytes > QUOTA
        compacting = action == QuotaAction.COMPACT and any(age == OLD for age, _ in old)
        assert refusal.code == ("MEM_E006" if compacting else "MEM_E001")
        assert isinstance(refusal, CompactionFailed) == compacting
        assert stored(session) == before  # nothing half-written, compaction included
        return
    session.refresh_from_db()
    quota = result.quota
    assert quota.used_bytes == session.size_bytes == content_bytes(session) <= QUOTA
    if quota.state == "compacted":
        assert action == QuotaAction.COMPACT and total + new >= QUOTA * 95 // 100
        assert quota.bytes_freed == total + new - session.size_bytes > 0
    else:
        assert session.size_bytes == total + new
        assert quota.state == ("warning" if (total + new) * 100 >= QUOTA * 80 else "ok")
    assert (quota.header() is not None) == ((session.size_bytes) * 100 >= QUOTA * 80)
    # Recent messages are as they were.
    recent = [(seq, c) for (seq, c), (age, _) in zip(before, old, strict=True) if age == RECENT]
    assert set(recent) <= set(stored(session))


def test_a_refused_capture_over_the_quota_says_so_and_stores_nothing():
    project = project_with(quota_action=QuotaAction.REFUSE)
    session = capture_session(project, parsed([ParsedMessage("user", words(15_000, "a"))]))
    with pytest.raises(QuotaExceeded) as refusal:
        append_messages(session.session, [ParsedMessage("user", words(6_000, "b"))])
    assert refusal.value.code == "MEM_E001" and refusal.value.status == 413
    assert "21,000 bytes" in str(refusal.value) and "20,000-byte quota" in str(refusal.value)
    assert Session.objects.get().message_count == 1


def test_a_session_read_in_the_last_48_hours_is_not_compacted_and_the_refusal_says_so():
    project = project_with()
    old = [ParsedMessage("user", words(8_000, f"{i}"), timestamp=at(OLD)) for i in range(2)]
    session = capture_session(project, parsed(old)).session
    Session.objects.filter(pk=session.pk).update(last_accessed_at=at(47))
    session.refresh_from_db()
    with pytest.raises(QuotaExceeded) as refusal:
        append_messages(session, [ParsedMessage("user", words(5_000, "new"))])
    assert refusal.value.code == "MEM_E001"
    assert "read in the last 48 hours" in str(refusal.value)
    assert [len(c) for _, c in stored(session)] == [8_000, 8_000]


# ---------------------------------------------------------------------------------------
# What compaction never touches

message_specs = st.lists(
    st.tuples(
        st.sampled_from([OLD, MIDDLE, RECENT, 23]),  # hours ago
        st.booleans(),  # pinned
        st.sampled_from(["user", "assistant", "tool"]),
        st.sampled_from([50, 300, FOLD_OVER_BYTES + 2000]),
        st.integers(0, 3),  # text variant: equal variants are duplicates
    ),
    min_size=1,
    max_size=12,
)


@HYPOTHESIS
@given(specs=message_specs, read_hours_ago=st.sampled_from([None, 1, 47, 49]))
def test_compaction_never_changes_recent_pinned_or_recently_read(specs, read_hours_ago):
    project = ProjectFactory()  # the default quota: room for every example
    messages = [
        ParsedMessage(
            role,
            words(size, f"v{variant}"),
            timestamp=at(age),
            tool_name="sh" if role == "tool" else "",
        )
        for age, _pinned, role, size, variant in specs
    ]
    session = capture_session(project, parsed(messages)).session
    for seq, (_, pinned, *_rest) in enumerate(specs):
        Message.objects.filter(session=session, seq=seq).update(pinned=pinned)
    last_read = at(read_hours_ago) if read_hours_ago is not None else None
    Session.objects.filter(pk=session.pk).update(last_accessed_at=last_read)
    session.refresh_from_db()
    before = dict(stored(session))
    with transaction.atomic():
        Session.objects.select_for_update(no_key=True).get(pk=session.pk)
        result = compact_session(session)
    after = dict(stored(session))
    if read_hours_ago is not None and read_hours_ago < 48:
        assert after == before and result.bytes_freed == 0
        return
    for seq, (age, pinned, *_rest) in enumerate(specs):
        if pinned or age < 24:
            assert after.get(seq) == before[seq], (seq, age, pinned)
    session.refresh_from_db()
    assert session.size_bytes == content_bytes(session)
    assert session.size_bytes == sum(len(c.encode()) for c in before.values()) - result.bytes_freed
    assert session.message_count == len(after) == len(before) - result.messages_removed
    assert set(after) <= set(before)  # seqs are kept, never renumbered


# ---------------------------------------------------------------------------------------
# Re-sends after compaction


operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("resend"), st.integers(0, 3)),
        st.tuples(st.just("compact"), st.just(0)),
    ),
    min_size=1,
    max_size=10,
)


@HYPOTHESIS
@given(ops=operations, with_ids=st.booleans())
def test_re_sending_the_whole_transcript_after_compaction_adds_exactly_the_new_messages(
    ops, with_ids
):
    project = project_with()
    external_id = f"run-{next(_names)}"
    sent: list[ParsedMessage] = []  # the client's transcript, as it knows it

    def new_messages(n):
        fresh = []
        for _ in range(n):
            i = len(sent) + len(fresh)
            fresh.append(
                ParsedMessage(
                    "user" if i % 2 == 0 else "assistant",
                    f"turn {i}: " + words(700, f"t{i}"),
                    timestamp=at(OLD),
                    client_id=f"m{i}" if with_ids else "",
                )
            )
        return fresh

    first = new_messages(2)
    session = capture_session(project, parsed(first, external_id)).session
    sent += first
    for op, n in [*ops, ("resend", 1)]:
        before = stored(session)
        if op == "compact":
            with transaction.atomic():
                locked = Session.objects.select_for_update(no_key=True).get(pk=session.pk)
                compact_session(locked)
            # Every turn is old: whatever follows the last summary is summarised.
            since_summary = len(
                list(
                    itertools.takewhile(
                        lambda row: not row[1].startswith("[Summary"), reversed(before)
                    )
                )
            )
            if since_summary >= 2:
                assert len(stored(session)) == len(before) - since_summary + 1
            continue
        fresh = new_messages(n)
        if op == "append":
            append_messages(session, fresh)
        else:
            result = capture_session(project, parsed([*sent, *fresh], external_id))
            assert len(result.added) == len(fresh)
            assert result.duplicates == len(sent)
        sent += fresh
        after = stored(session)
        assert after[: len(before)] == before
        assert [c for _, c in after[len(before) :]] == [m.content for m in fresh]
        top = before[-1][0] if before else -1
        assert [seq for seq, _ in after[len(before) :]] == list(range(top + 1, top + 1 + n))


# ---------------------------------------------------------------------------------------
# The size breakdown


def test_the_size_breakdown_adds_up():
    project = project_with()
    messages = [
        ParsedMessage("user", "Run the tests ünïcödé"),
        ParsedMessage("tool", "3 passed\n" * 50, tool_name="sh"),
        ParsedMessage("assistant", "All green."),
    ]
    session = capture_session(project, parsed(messages)).session
    first = Message.objects.get(session=session, seq=0)
    MessageChunk.objects.create(
        team_id=session.team_id,
        session=session,
        message=first,
        index=0,
        char_start=0,
        char_end=10,
        text="Run the tests",
        embedding=[0.1] * 384,
        model="test",
    )
    Entity.objects.create(
        team_id=session.team_id,
        session=session,
        message=first,
        type="COMMAND",
        value="pytest",
        normalized="pytest",
        context="Run the tests",
        count=1,
    )
    size = size_breakdown(session)
    assert size["messages_bytes"] == len("Run the tests ünïcödé".encode()) + len("All green.")
    assert size["tool_output_bytes"] == len("3 passed\n" * 50)
    assert size["messages_bytes"] + size["tool_output_bytes"] == session.size_bytes
    assert size["vectors_bytes"] > 384 * 4  # a vector alone is 1,536 bytes and more
    assert 0 < size["entities_bytes"] < 100
    assert size["total_bytes"] == sum(
        size[k] for k in ("messages_bytes", "tool_output_bytes", "vectors_bytes", "entities_bytes")
    )
    assert size["quota"]["used_bytes"] == session.size_bytes
    assert size["quota"]["quota_bytes"] == QUOTA


# ---------------------------------------------------------------------------------------
# The API


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_capture_append_and_import_answers_carry_the_quota(agent, project):
    project.session_quota_bytes = 10_000
    project.save()
    created = agent.post(
        "/api/v1/sessions",
        {"agent_name": "dev", "messages": [{"role": "user", "content": "x" * 7000}]},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["quota"] == {
        "used_bytes": 7000,
        "quota_bytes": 10_000,
        "percent": 70.0,
        "state": "ok",
        "bytes_freed": 0,
    }
    assert "X-Quota-Warning" not in created
    session_id = created.json()["id"]
    appended = agent.post(
        f"/api/v1/sessions/{session_id}/messages",
        {"role": "user", "content": "y" * 1400},
        format="json",
    )
    assert appended.status_code == 201
    assert appended.json()["quota"]["state"] == "warning"
    assert appended.json()["quota"]["percent"] == 84.0
    assert appended["X-Quota-Warning"] == "84% of 10,000 bytes"
    imported = agent.post(
        "/api/v1/import?format=openai_chat",
        b'[{"role": "user", "content": "' + b"z" * 9000 + b'"}]',
        content_type="application/octet-stream",
    )
    assert imported.status_code == 201, imported.content
    assert imported.json()["sessions"][0]["quota"]["state"] == "warning"
    assert imported["X-Quota-Warning"] == "90% of 10,000 bytes"


def test_an_over_quota_append_after_compaction_that_freed_too_little_is_mem_e006(agent, project):
    project.session_quota_bytes = 10_000
    project.save()
    old = (timezone.now() - timedelta(days=10)).isoformat()
    messages = [
        {"role": "user", "content": "Please fix the deploy step.", "timestamp": old},
        {"role": "assistant", "content": "Fixed it. " * 20, "timestamp": old},
        {"role": "user", "content": "x" * 8000},
    ]
    session_id = agent.post(
        "/api/v1/sessions", {"agent_name": "dev", "messages": messages}, format="json"
    ).json()["id"]
    over = agent.post(
        f"/api/v1/sessions/{session_id}/messages",
        {"role": "user", "content": "y" * 2000},
        format="json",
    )
    assert over.status_code == 413
    body = over.json()
    assert body["quota_bytes"] == 10_000 and body["session_bytes"] > 10_000
    assert "even after compaction freed" in body["detail"]
    assert Message.objects.filter(session__public_id=session_id).count() == 3


def test_compaction_makes_room_for_an_append(agent, project):
    project.session_quota_bytes = 10_000
    project.save()
    old = (timezone.now() - timedelta(days=10)).isoformat()
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": words(1500, f"{i}"),
            "timestamp": old,
        }
        for i in range(6)
    ]
    session_id = agent.post(
        "/api/v1/sessions", {"agent_name": "dev", "messages": messages}, format="json"
    ).json()["id"]
    appended = agent.post(
        f"/api/v1/sessions/{session_id}/messages",
        {"role": "user", "content": "y" * 1000},
        format="json",
    )
    assert appended.status_code == 201, appended.content
    quota = appended.json()["quota"]
    assert quota["state"] == "compacted" and quota["bytes_freed"] > 0
    assert quota["used_bytes"] < 8_000
    assert appended.json()["messages"][0]["seq"] == 6
    summary = Message.objects.get(session__public_id=session_id, seq=5)  # the run's last
    assert summary.role == "system" and summary.content.startswith("[Summary of 6 earlier")
    assert summary.metadata["compaction"]["seqs"] == [0, 1, 2, 3, 4, 5]


def test_compact_dry_run_then_for_real(agent, project):
    old = (timezone.now() - timedelta(days=3)).isoformat()
    messages = [
        {"role": "user", "content": "show me the log", "timestamp": old},
        {"role": "tool", "tool_name": "sh", "content": "line\n" * 5000, "timestamp": old},
        {"role": "tool", "tool_name": "sh", "content": "line\n" * 5000, "timestamp": old},
    ]
    session_id = agent.post(
        "/api/v1/sessions", {"agent_name": "dev", "messages": messages}, format="json"
    ).json()["id"]
    url = f"/api/v1/sessions/{session_id}/compact"
    dry = agent.post(url, {"dry_run": True}, format="json")
    assert dry.status_code == 200, dry.content
    steps = {s["step"]: s for s in dry.json()["steps"]}
    assert steps["summarise_old_turns"]["bytes_freed"] == 0  # 3 days: not old enough
    assert steps["fold_tool_output"]["messages"] == 2
    assert steps["fold_tool_output"]["bytes_freed"] > 40_000
    assert Session.objects.get(public_id=session_id).size_bytes == 15 + 50_000
    real = agent.post(url, {}, format="json")
    assert real.json()["bytes_freed"] == dry.json()["bytes_freed"]
    assert real.json()["quota"]["used_bytes"] == 15 + 50_000 - dry.json()["bytes_freed"]
    folded = Message.objects.get(session__public_id=session_id, seq=1)
    assert "bytes folded …]" in folded.content and folded.enrichment_status == "pending"
    assert folded.content.startswith("line\n") and folded.content.endswith("line\n")


def test_pin_and_unpin_a_message(agent, project, outsider):
    session_id = agent.post(
        "/api/v1/sessions",
        {"agent_name": "dev", "messages": [{"role": "user", "content": "keep me"}]},
        format="json",
    ).json()["id"]
    url = f"/api/v1/sessions/{session_id}/messages/0"
    pinned = agent.patch(url, {"pinned": True}, format="json")
    assert pinned.status_code == 200 and pinned.json()["pinned"] is True
    assert Message.objects.get(session__public_id=session_id).pinned
    listed = agent.get(f"/api/v1/sessions/{session_id}/messages").json()["results"]
    assert listed[0]["pinned"] is True
    assert agent.patch(url, {"pinned": False}, format="json").json()["pinned"] is False
    unchanged = agent.patch(url, {}, format="json")
    assert unchanged.status_code == 200 and unchanged.json()["pinned"] is False
    assert agent.patch(url, {"pinned": "maybe"}, format="json").status_code == 400
    missing = agent.patch(
        f"/api/v1/sessions/{session_id}/messages/7", {"pinned": True}, format="json"
    )
    assert missing.status_code == 404 and "#7" in missing.json()["detail"]
    stranger = APIClient()
    stranger.force_authenticate(outsider)
    for response in (
        stranger.patch(url, {"pinned": True}, format="json"),
        stranger.post(f"/api/v1/sessions/{session_id}/compact", {}, format="json"),
        stranger.get(f"/api/v1/sessions/{session_id}/size"),
    ):
        assert response.status_code == 404


def test_size_endpoint(agent, project):
    session_id = agent.post(
        "/api/v1/sessions",
        {"agent_name": "dev", "messages": [{"role": "user", "content": "hello"}]},
        format="json",
    ).json()["id"]
    size = agent.get(f"/api/v1/sessions/{session_id}/size")
    assert size.status_code == 200
    assert size.json()["messages_bytes"] == 5 and size.json()["quota"]["used_bytes"] == 5
